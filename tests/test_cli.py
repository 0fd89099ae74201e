"""The arena-stream command, run as a user runs it."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import socket
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from stream import cli
from stream.errors import StartupRefused
from stream.live.app import make_store
from stream.live.ops.config import Config, load_secret
from stream.serve import config_from
from stream.store.sqlite import SqliteStore
from stream.tools import demo
from stream.tools.harness import free_port


def run(*args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "stream", *args], capture_output=True,
                          text=True, timeout=120, check=check)


def bundled() -> Path:
    return Path(str(resources.files("stream") / "examples" / "demo-game.jsonl"))


def test_bundled_demo_log_is_the_demo_script() -> None:
    lines = bundled().read_text().splitlines()
    assert [json.loads(x) for x in lines] == demo.demo_events()


def test_replay_prints_one_notice_per_line_naming_its_cause() -> None:
    out = run("replay", str(bundled()), check=True).stdout.splitlines()
    notices = [json.loads(x) for x in out]
    ids = {e["id"] for e in demo.demo_events()}
    assert notices and all(n["cause"] in ids for n in notices)
    assert all(n["text"]["en"] and n["text"]["es"] and n["clause"] for n in notices)
    types = [n["type"] for n in notices]
    for t in ("card.recorded", "penalty.awarded", "box.enter", "box.eligible", "box.release",
              "sent_off", "sub.allowed", "mount.deadline", "correction", "game.ended"):
        assert t in types, t


def test_replay_state_is_one_document_with_the_final_score() -> None:
    doc = json.loads(run("replay", "--state", str(bundled()), check=True).stdout)
    g = doc["games"][demo.GAME]
    goals = [e for e in demo.demo_events() if e["type"] == "goal"]
    assert g["score"]["home"] == sum(e.get("points", 1) for e in goals if e["team"] == "home")
    assert g["score"]["away"] == sum(e.get("points", 1) for e in goals if e["team"] == "away")
    assert g["status"] == "ended"
    salas = next(p for p in g["players"] if p["id"] == "salas")
    assert salas["sent_off"] is True
    assert doc["events"][demo.EVENT]["class"] == "club"


def test_replay_hash_is_the_digest_of_the_state_document() -> None:
    """``--hash`` is what ``GET /api/state`` gives live: equal states, equal hashes."""
    import hashlib

    import msgspec

    from stream.rules.codec import decode_event
    from stream.rules.engine import Engine

    digest = run("replay", "--hash", str(bundled()), check=True).stdout.strip()
    engine = Engine()
    for e in demo.demo_events():
        engine.feed(decode_event(json.dumps(e)))
    assert digest == engine.state_hash()
    assert digest == hashlib.sha256(msgspec.json.encode(engine.state(), order="sorted")).hexdigest()
    shorter = "\n".join(bundled().read_text().splitlines()[:-3]) + "\n"
    other = subprocess.run([sys.executable, "-m", "stream", "replay", "--hash", "/dev/stdin"],
                           input=shorter, capture_output=True, text=True, timeout=60, check=True)
    assert other.stdout.strip() != digest


@pytest.mark.slow
def test_proof_runs_the_proof_suites() -> None:
    out = run("proof", "--", "--collect-only", "-q", check=True).stdout
    for suite in ("test_kill_soak.py", "test_store_faults.py", "test_etcd_failover.py"):
        assert f"tests/proof/{suite}::" in out, out[-2000:]


def test_a_malformed_log_gives_errors_never_a_traceback(tmp_path: Path) -> None:
    log = tmp_path / "bad.jsonl"
    good = bundled().read_text().splitlines()
    deep = '{"type":"whistle","id":"x","at":1,"game":"g","x":' + "[" * 100_000 + "]" * 100_000 + "}"
    log.write_text("\n".join([good[0], good[1], "{nope", '{"type":"teleport","id":"x","at":1}',
                              deep, *good[2:]]) + "\n")
    res = run("replay", str(log))
    assert res.returncode == 1
    assert "Traceback" not in res.stderr
    malformed = [json.loads(x) for x in res.stdout.splitlines() if '"malformed"' in x]
    assert [(m["line"], m["reason"]) for m in malformed] == [
        (3, "malformed_json"), (4, "unknown_type"), (5, "too_deep")]
    assert any('"game.ended"' in x for x in res.stdout.splitlines())


def test_missing_file_is_a_clear_error() -> None:
    res = run("replay", "/nonexistent/log.jsonl")
    assert res.returncode == 2 and "can't read" in res.stderr and "Traceback" not in res.stderr


def test_demo_prints_the_scoreboard_in_both_languages() -> None:
    en = run("demo", check=True).stdout
    es = run("demo", "--lang", "es", check=True).stdout
    assert "BOX" in en and "released from the penalty box" in en
    assert "sale del área de castigo" in es


def test_demo_lines_name_players_and_teams_as_the_log_registers_them() -> None:
    """The demo's log registers its teams and players: every line names them, "#1 Beck
    (Wellington Blue)", in English and Spanish, never by id."""
    en = run("demo", check=True).stdout.splitlines()
    es = run("demo", "--lang", "es", check=True).stdout.splitlines()
    assert en[0] == "Game set up: Aiken Arena v Wellington Blue. (Arena · Teams and substitutes)"
    assert es[0] == "Partido preparado: Aiken Arena contra Wellington Blue. (Arena · Equipos y sustitutos)"
    assert "Yellow card to #1 Beck (Wellington Blue): 1 yellow in this game, offense 1. " \
           "(Rule 14 · Every card: a penalty)" in en
    assert "Tarjeta amarilla para #1 Beck (Wellington Blue): 1 amarilla(s) en el partido, infracción 1. " \
           "(Regla 14 · Cada tarjeta: un penal)" in es
    assert "Penalty to Aiken Arena. (Rule 14 · Every card: a penalty)" in en
    assert "Penal a favor de Aiken Arena. (Regla 14 · Cada tarjeta: un penal)" in es
    # docs/demo.md quotes the first lines exactly
    doc = (Path(__file__).parents[1] / "docs" / "demo.md").read_text()
    quoted = doc.split("as the handheld's feed and the console read them:\n\n```\n", 1)[1].split("```", 1)[0]
    notices = [x for x in en if x and not x.startswith(" ")]  # the board's lines are indented
    assert quoted.splitlines() == notices[:len(quoted.splitlines())]
    ids = {e.get(k) for e in demo.demo_events() for k in ("player", "team") if e.get(k)} - {"home", "away"}
    assert ids and "aiken-arena" in ids
    for line in en + es:
        for word in line.replace("(", " ").replace(")", " ").split():
            assert word not in ids, line


def test_demo_in_spanish_prints_the_board_in_spanish_too() -> None:
    """``--lang es`` once gave Spanish notices over an English board."""
    es = run("demo", "--lang", "es", check=True).stdout
    for words in ("3 en la cancha", "2 en la cancha, sin sustituto", "#1 Beck (visitante): ÁREA 2:00 de "
                  "tiempo de juego debido", "#2 Ortega (local): 1 amarilla", "EXPULSADO", "DETENIDO",
                  "EN MARCHA", "vuelve en la próxima detención", "FINAL"):
        assert words in es, words
    for english in ("on the field", "no substitute", "of play owed", "BOX ", "SENT OFF", " STOP",
                    "(home)", "(away)", "returns at next stoppage"):
        assert english not in es, english


# ------------------------------------------------------------------ options after the subcommand


LOG = "game.jsonl"


@pytest.mark.parametrize(("cmd", "argv", "expect"), [
    ("_cmd_replay", ["replay", LOG, "--state"], {"log": Path(LOG), "state": True, "hash": False}),
    ("_cmd_replay", ["replay", LOG, "--hash"], {"log": Path(LOG), "hash": True}),
    ("_cmd_demo", ["demo", "--lang", "es"], {"lang": "es"}),
    ("_cmd_serve", ["serve", "--no-demo", "--port", "9001", "--data", "d", "--demo-speed", "4",
                    "--store", "sqlite", "--heartbeat", "2"],
     {"no_demo": True, "port": 9001, "data": Path("d"), "demo_speed": 4.0, "heartbeat": 2.0}),
    ("_cmd_simulate", ["simulate", "--url", "http://h:1", "--speed", "3", "--data", "d", "--token", "t",
                       "--game", "g"],
     {"url": "http://h:1", "speed": 3.0, "data": Path("d"), "token": "t", "game": "g"}),
    ("_cmd_proof", ["proof", "--full", "--report", "r.jsonl", "--", "-k", "soak"],
     {"full": True, "report": Path("r.jsonl"), "pytest_args": ["-k", "soak"]}),
    ("_cmd_bench", ["bench", "replay", "--events", "5", "--seed", "2"], {"events": 5, "seed": 2}),
    ("_cmd_bench", ["bench", "fanout", "--viewers", "3", "--nodes", "2", "--node-ws"],
     {"viewers": 3, "nodes": 2, "node_ws": True}),
    ("_cmd_bench", ["bench", "all", "--quick", "--out", "p.md", "--seed", "3"],
     {"quick": True, "out": Path("p.md"), "write": False, "seed": 3}),
    ("_cmd_bench", ["bench", "nodes", "--runs", "2", "--seconds", "1.5"], {"runs": 2, "seconds": 1.5}),
    ("_cmd_bench", ["bench", "race", "--rounds", "2", "--rate", "7"], {"rounds": 2, "rate": 7.0}),
])
def test_options_work_after_the_subcommand_and_its_arguments(
        cmd: str, argv: list[str], expect: dict[str, object], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every subcommand takes its options after its name and after its positional
    arguments, as the docs write them (``arena-stream replay LOG --state``)."""
    seen: list[argparse.Namespace] = []

    def record(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(cli, cmd, record)
    assert cli.main(argv) == 0
    assert {k: getattr(seen[0], k) for k in expect} == expect
    if argv[0] == "replay":  # and before the positional argument too
        seen.clear()
        assert cli.main([argv[0], *argv[2:], argv[1]]) == 0
        assert {k: getattr(seen[0], k) for k in expect} == expect


def test_replay_with_its_option_after_the_log_runs() -> None:
    doc = json.loads(run("replay", str(bundled()), "--state", check=True).stdout)
    assert doc["games"][demo.GAME]["status"] == "ended"


def test_replay_left_early_says_the_reading_is_in_the_log() -> None:
    """The R8 reading was a replay option once; it travels in the log now (event.setup
    rules.left_early), so the option is refused saying so, never "unrecognized"."""
    res = run("replay", str(bundled()), "--left-early", "sequential")
    assert res.returncode == 2 and not res.stdout
    assert "--left-early is no longer an option" in res.stderr
    assert "rules.left_early" in res.stderr and "unrecognized" not in res.stderr


def test_simulate_outside_the_data_directory_says_what_to_do(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    res = subprocess.run([sys.executable, "-m", "stream", "simulate", "--url", url], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert f"there is none at {tmp_path / 'arena-data' / 'admin.token'}" in res.stderr
    assert "--data DIR" in res.stderr and "--token" in res.stderr


def test_simulate_with_no_server_there_says_so(tmp_path: Path) -> None:
    (tmp_path / "arena-data").mkdir()
    (tmp_path / "arena-data" / "admin.token").write_text("not-a-token\n")
    url = f"http://127.0.0.1:{free_port()}"
    res = subprocess.run([sys.executable, "-m", "stream", "simulate", "--url", url],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert f"arena-stream: no service at {url}" in res.stderr and "--url" in res.stderr


# ------------------------------------------------------------------ the demo's pace


def _demo_notices() -> list[tuple[float, dict[str, object]]]:
    """(seconds after the simulator starts at the default speed, notice) for the demo
    game, folded by the engine from the script."""
    from stream.rules import codec
    from stream.rules.engine import Engine

    engine = Engine()
    out = []
    for e in demo.demo_events():
        for n in engine.feed(codec.decode_event(json.dumps(e))):
            doc = json.loads(codec.encode_notice(n))
            out.append((demo.wall_s(n.at - demo.DEMO_T0), doc))
    return out


def test_the_demo_is_eventful_from_the_start_at_the_default_speed() -> None:
    """A watcher who opens the demo sees a card within 20 s and a second yellow and a box
    release within two minutes, live (after ``LIVE_FROM``, not in what came before)."""
    assert demo.DEFAULT_SPEED == 1.0, "real time: the play time Rule 14 counts fits the script"
    help_ = run("serve", "--help", check=True).stdout
    assert "--demo-speed X" in help_ and "(default 1.0: real time" in " ".join(help_.split())
    live = [(t, n) for t, n in _demo_notices() if n["at"] - demo.DEMO_T0 > demo.LIVE_FROM]  # type: ignore[operator]
    first_card = next(t for t, n in live if n["type"] == "card.recorded")
    second_yellow = next(t for t, n in live if n["type"] == "box.enter")
    release = next(t for t, n in live if n["type"] == "box.release")
    assert 0 < first_card <= 20, first_card
    assert second_yellow <= 120 and 0 < release <= 120, (second_yellow, release)
    # The box the watcher sees released was entered before they came: the game is under way.
    at_start = [n for t, n in _demo_notices() if n["at"] - demo.DEMO_T0 <= demo.LIVE_FROM]  # type: ignore[operator]
    assert any(n["type"] == "box.enter" for n in at_start)
    # And the beats that were there stay: a red, a mount replaced, a voided card.
    kinds = {n["type"] for _, n in live}
    assert {"sent_off", "mount.replaced", "correction", "game.ended"} <= kinds, kinds


def test_the_simulator_sends_what_came_before_at_once_with_its_times() -> None:
    """Before ``LIVE_FROM`` each event carries the time it happened (in the past, in order),
    after it none: the service stamps it as it comes."""
    import asyncio
    import time

    from stream.tools.simulator import Simulator

    sent: list[dict[str, object]] = []

    class Fake:
        async def send(self, body: dict[str, object]) -> dict[str, str]:
            sent.append(body)
            return {"log_id": f"x/{len(sent)}"}

    sim = Simulator("ws://unused", {}, game="g1", speed=50_000.0)
    sim.devices = {role: Fake() for role in ("admin", "umpire", "referee", "timekeeper")}  # type: ignore[misc]
    before = int(time.time() * 1000)
    asyncio.run(sim._play())
    game = [b for b in sent if b.get("game") == "g1" and b["type"] != "game.setup"]
    assert len(game) == len(demo.SCRIPT)
    backlog = [offset for offset, _, _ in demo.SCRIPT if offset < demo.LIVE_FROM]
    assert backlog and all("at" in b for b in game[:len(backlog)])
    assert not any("at" in b for b in game[len(backlog):])
    stamps = [b["at"] for b in game[:len(backlog)]]
    assert all(isinstance(a, int) for a in stamps)
    ints = [a for a in stamps if isinstance(a, int)]
    assert ints == sorted(ints) and max(ints) < before + 1000
    setup = next(b for b in sent if b["type"] == "game.setup")
    assert isinstance(setup["at"], int) and setup["at"] < ints[0]
    assert not any("at" in b for b in sent if b["type"] in ("event.setup", "team.registered"))


def test_serve_refuses_sqlite_synchronous_normal_without_unsafe_store(tmp_path: Path) -> None:
    """NORMAL does not fsync each commit: a power cut can lose acked events
    (tests/proof/test_power_loss.py shows it), so it needs --unsafe-store."""
    r = run("serve", "--no-demo", "--data", str(tmp_path / "d"), "--sqlite-synchronous", "NORMAL")
    assert r.returncode == 2
    assert "--sqlite-synchronous NORMAL can lose acknowledged events" in r.stderr
    assert "--unsafe-store" in r.stderr
    assert not (tmp_path / "d").exists(), "refused before anything was written"


def test_serve_on_a_port_already_taken_says_so_and_exits_2(tmp_path: Path) -> None:
    """A second ``serve`` on the port another service holds: a refusal naming the address and
    the options to change, exit 2, no traceback."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run("serve", "--no-demo", "--data", str(tmp_path / "d"), "--port", str(port))
    assert r.returncode == 2, r.stderr
    assert f"arena-stream: can't listen on 127.0.0.1:{port}: " in r.stderr, r.stderr
    assert "--port" in r.stderr and "Traceback" not in r.stderr, r.stderr


async def test_sqlite_synchronous_reaches_the_connections(tmp_path: Path) -> None:
    with pytest.raises(StartupRefused, match="unsafe_store"):
        make_store(Config(data_dir=tmp_path, sqlite_synchronous="NORMAL"))
    for setting, unsafe, expected in (("FULL", False, 2), ("NORMAL", True, 1)):
        store = make_store(Config(data_dir=tmp_path, sqlite_synchronous=setting, unsafe_store=unsafe))
        assert isinstance(store, SqliteStore)
        await store.open()
        try:
            assert await store._submit(lambda c: c.execute("PRAGMA synchronous").fetchone()[0]) == expected
        finally:
            await store.close()


def test_secret_key_is_made_durably_and_an_empty_one_is_refused(tmp_path: Path) -> None:
    """A power cut right after the first start once left secret.key empty (the
    power-loss proof): tokens signed with an empty key could be forged."""
    secret = load_secret(tmp_path)
    assert len(secret) == 32 and load_secret(tmp_path) == secret
    assert (tmp_path / "secret.key").stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["secret.key"], "no temporary file left"
    (tmp_path / "secret.key").write_bytes(b"")
    with pytest.raises(StartupRefused, match="0 bytes, too few"):
        load_secret(tmp_path)


ETCD = "etcd://127.0.0.1:12379,127.0.0.1:22379,127.0.0.1:32379/arena"


@pytest.mark.parametrize(("argv", "demo_on"), [
    ([], True), (["--no-demo"], False), (["--demo"], True),
    (["--store", ETCD], False), (["--store", ETCD, "--demo"], True),
    (["--store", ETCD, "--no-demo"], False),
])
def test_the_demo_plays_on_sqlite_unless_refused_and_on_etcd_only_if_asked(
        argv: list[str], demo_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every node on one etcd cluster would play its own demo into the one log: there it is
    off unless ``--demo`` (docs/deployment.md, "Two nodes by hand")."""
    seen: list[argparse.Namespace] = []

    def serve(args: argparse.Namespace) -> int:
        seen.append(args)
        return 0

    monkeypatch.setattr(cli, "_cmd_serve", serve)
    assert cli.main(["serve", *argv]) == 0
    assert config_from(seen[0]).demo is demo_on


def test_demo_and_no_demo_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["serve", "--demo", "--no-demo"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_serve_on_an_etcd_that_is_not_there_says_so_without_a_traceback(tmp_path: Path) -> None:
    r = run("serve", "--store", f"etcd://127.0.0.1:{free_port()}/arena", "--data", str(tmp_path / "d"),
            "--port", str(free_port()), "--etcd-budget-ms", "500")
    assert r.returncode == 1, r
    last = r.stderr.splitlines()[-1]
    assert last.startswith("arena-stream: can't start: etcd at etcd://127.0.0.1:"), r.stderr
    assert "is not reachable" in r.stderr and "Traceback" not in r.stderr, r.stderr


# ------------------------------------------------------------------ the README's two commands


ROOT = Path(__file__).resolve().parents[1]


def _pip_install_args(line: str) -> list[str]:
    """What a ``pip install`` is asked for, without the flags that only make it quiet."""
    args = shlex.split(line.split("pip install", 1)[1])
    return [a for a in args if a not in ("--quiet", "--disable-pip-version-check")]


def test_the_readme_opens_with_the_two_commands_as_run_sh_and_ci_run_use_them() -> None:
    """The README's first screen holds both commands: the demo, served from a virtual
    environment in ``.venv`` (Debian's Python refuses ``pip install`` outside one, PEP 668)
    with the locked versions installed as ``tests/run.sh`` installs its own, and the test
    command exactly as ``.ci/run`` calls it."""
    head = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:40])
    blocks = re.findall(r"^```sh\n(.*?)\n```$", head, re.M | re.S)
    assert len(blocks) == 2, f"the README's first 40 lines hold {len(blocks)} sh blocks"
    serve, test = blocks
    assert test == "bash tests/run.sh"
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert test in ci
    steps = [step.strip() for step in serve.split("&&")]
    assert steps == ["python3 -m venv .venv",
                     ".venv/bin/pip install --require-hashes -r requirements/serve.lock",
                     ".venv/bin/pip install --no-deps --no-build-isolation -e .",
                     ".venv/bin/arena-stream serve"]
    run_sh = (ROOT / "tests" / "run.sh").read_text(encoding="utf-8")
    assert 'venv="$PWD/.venv"' in run_sh and "python3 -m venv .venv" in run_sh
    installs = [_pip_install_args(line) for line in run_sh.splitlines()
                if "-m pip install" in line and not line.lstrip().startswith(("#", "say "))]
    assert installs == [[a.replace("serve.lock", "test.lock") for a in _pip_install_args(step)]
                        for step in steps if "pip install" in step]
    # --no-build-isolation builds with the venv's own backend: the serve lock has it
    serve_lock = (ROOT / "requirements" / "serve.lock").read_text(encoding="utf-8")
    assert re.search(r"^setuptools==", serve_lock, re.M)


def test_run_sh_says_what_it_installs_before_it_does() -> None:
    lines = (ROOT / "tests" / "run.sh").read_text(encoding="utf-8").splitlines()

    def first(text: str, said: bool = True) -> int:
        return next(n for n, line in enumerate(lines) if text in line and not line.lstrip().startswith("#")
                    and (said or not line.lstrip().startswith("say ")))

    for announce, does in (('say "installing Debian packages', "apt-get install -y"),
                           ('say "creating .venv', "python3 -m venv .venv"),
                           ("installing the locked test dependencies: pip install --require-hashes",
                            "-m pip install"),
                           ('npm install ws@8 into ~/.cache/arena-stream/node-ws', "ensure_node_ws")):
        assert first(announce) < first(does, said=False), (announce, does)
    # Without a virtual environment active, ./.venv, made if it is not there.
    text = "\n".join(lines)
    assert 'VIRTUAL_ENV' in text
    assert first("[ -x .venv/bin/python ] || make_venv=yes", said=False) < first(
        "python3 -m venv .venv", said=False)
