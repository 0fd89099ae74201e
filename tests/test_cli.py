"""The arena-stream command, run as a user runs it."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from stream import cli
from stream.errors import StartupRefused
from stream.live.app import make_store
from stream.live.config import Config, load_secret
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


def test_proof_runs_the_proof_suites() -> None:
    out = run("proof", "--", "--collect-only", "-q", check=True).stdout
    for suite in ("test_kill_soak.py", "test_redis_faults.py", "test_sentinel_failover.py"):
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
    assert "aiken-arena" in en and "BOX" in en and "released from the penalty box" in en
    assert "sale del área de castigo" in es


def test_serve_refuses_sqlite_synchronous_normal_without_unsafe_store(tmp_path: Path) -> None:
    """NORMAL does not fsync each commit: a power cut can lose acked events
    (tests/proof/test_power_loss.py shows it), so it needs --unsafe-store."""
    r = run("serve", "--no-demo", "--data", str(tmp_path / "d"), "--sqlite-synchronous", "NORMAL")
    assert r.returncode == 2
    assert "--sqlite-synchronous NORMAL can lose acknowledged events" in r.stderr
    assert "--unsafe-store" in r.stderr
    assert not (tmp_path / "d").exists(), "refused before anything was written"


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


REDIS = "redis://127.0.0.1:6379/0"


@pytest.mark.parametrize(("argv", "demo_on"), [
    ([], True), (["--no-demo"], False), (["--demo"], True),
    (["--store", REDIS], False), (["--store", REDIS, "--demo"], True),
    (["--store", REDIS, "--no-demo"], False),
])
def test_the_demo_plays_on_sqlite_unless_refused_and_on_redis_only_if_asked(
        argv: list[str], demo_on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every node on one Redis would play its own demo into the one log: there it is off
    unless ``--demo`` (README, "Two nodes by hand")."""
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


def test_serve_on_a_redis_that_is_not_there_says_so_without_a_traceback(tmp_path: Path) -> None:
    r = run("serve", "--store", f"redis://127.0.0.1:{free_port()}/0", "--data", str(tmp_path / "d"),
            "--port", str(free_port()))
    assert r.returncode == 1, r
    last = r.stderr.splitlines()[-1]
    assert last.startswith("arena-stream: can't start: Redis at redis://127.0.0.1:"), r.stderr
    assert "is not reachable" in r.stderr and "Traceback" not in r.stderr, r.stderr
