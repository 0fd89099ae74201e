"""The arena-stream command, run as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

from stream import demo


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
