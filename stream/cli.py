"""The ``arena-stream`` command."""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import msgspec

from .errors import MalformedEvent
from .live.ops.config import Config
from .live.ops.loops import default_loop
from .rules import codec
from .rules.engine import Engine
from .rules.notices import ClockChanged
from .tools import demo as demo_script
from .tools.all_bench.output import TRACKED_REPORT

_json = msgspec.json.Encoder()


def replay(log: IO[bytes], out: IO[bytes], *, state: bool, digest: bool = False) -> int:
    """Fold a log; print notices (or the final state). Returns the exit status:
    0, or 1 if any line was not an event (those lines are reported and skipped)."""
    engine = Engine()
    malformed = 0
    for lineno, item in codec.read_log(log):
        if isinstance(item, MalformedEvent):
            malformed += 1
            if not (state or digest):
                out.write(_json.encode({"type": "malformed", "line": lineno, "reason": item.code,
                                        "detail": item.detail}) + b"\n")
            continue
        notices = engine.feed(item)
        if not (state or digest) and notices:
            names = engine.names()  # the roster as of this event: what the live service said
            for n in notices:
                out.write(codec.encode_notice(n, names) + b"\n")
    if state:
        out.write(_json.encode(engine.state()) + b"\n")
    if digest:
        out.write(engine.state_hash().encode() + b"\n")
    if malformed:
        print(f"arena-stream: {malformed} line(s) were not events; see the 'malformed' lines",
              file=sys.stderr)
    return 1 if malformed else 0


class _Gone(argparse.Action):
    """An option that is no more: refused with what replaced it, not "unrecognized"."""

    def __init__(self, option_strings: list[str], dest: str, why: str = "", **kw: Any) -> None:
        super().__init__(option_strings, dest, nargs="?", **kw)
        self.why = why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        parser.error(f"{option_string} is no longer an option: {self.why}")


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        with open(args.log, "rb") as f:
            return replay(f, sys.stdout.buffer, state=args.state, digest=args.hash)
    except OSError as err:
        print(f"arena-stream: can't read {args.log}: {err.strerror}", file=sys.stderr)
        return 2


def _cmd_demo(args: argparse.Namespace) -> int:
    """Replay the bundled demo game and print the scoreboard after each notice."""
    from .rules.text import describe
    from .tools import demo
    from .tools.board import render_board

    engine = Engine()
    path = resources.files("stream") / "examples" / "demo-game.jsonl"
    with path.open("rb") as f:
        for _, item in codec.read_log(f):
            if isinstance(item, MalformedEvent):  # pragma: no cover - the bundled log is tested
                raise SystemExit(f"bundled demo is damaged: {item}")
            notices = [n for n in engine.feed(item) if not isinstance(n, ClockChanged)]
            names = engine.names()
            for n in notices:
                text = describe(n, names)
                print(text.en if args.lang == "en" else text.es)
            if notices and engine.has_game(demo.GAME):
                print(render_board(engine.view(demo.GAME), engine.roster(demo.GAME), args.lang))
                print()
    return 0


def _public_url(text: str) -> str:
    """``--public-url``: an http(s) origin, with no path, query or fragment ("": none)."""
    if not text:
        return ""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/") \
            or parts.query or parts.fragment or "@" in parts.netloc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an http(s) origin such as https://arena.example or http://10.0.0.5:8080")
    return f"{parts.scheme}://{parts.netloc}"


def _cmd_serve(args: argparse.Namespace) -> int:
    from .serve import serve

    return serve(args)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from .serve import simulate

    return simulate(args)


def _cmd_proof(args: argparse.Namespace) -> int:
    from .tools.proof import run

    return run(args)


def _cmd_bench(args: argparse.Namespace) -> int:
    from .tools.bench import run_bench

    return run_bench(args)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="arena-stream", description="Live Rule 14 for arena polo.")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("replay", help="fold a JSON Lines log; print notices or the final state")
    r.add_argument("log", type=Path)
    r.add_argument("--state", action="store_true", help="print the final state as one JSON document")
    r.add_argument("--hash", action="store_true",
                   help="print the SHA-256 of the final state (as GET /api/state gives it live)")
    r.add_argument("--left-early", action=_Gone, help=argparse.SUPPRESS,
                   why="the committee's reading of R8 travels in the log (event.setup "
                       "rules.left_early, docs/rules.md), so a log always folds one way: "
                       "replay folds it as recorded")
    r.set_defaults(func=_cmd_replay)

    d = sub.add_parser("demo", help="replay the bundled demo game and show the scoreboard")
    d.add_argument("--lang", choices=["en", "es"], default="en",
                   help="the notices and the board in English or Spanish (default en)")
    d.set_defaults(func=_cmd_demo)

    s = sub.add_parser("serve", help="run the live service (WebSockets and HTTP on one port)")
    s.add_argument("--data", type=Path, default=Path("arena-data"), help="data directory")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8080)
    s.add_argument("--store", default="sqlite",
                   help="sqlite (default); for several nodes, etcd://[user:password@]host:port"
                        "[,host:port...]/PREFIX (the etcd members' client addresses, and the key "
                        "prefix; etcds:// for TLS, with --etcd-ca, --etcd-cert and --etcd-key)")
    s.add_argument("--etcd-deadline-ms", type=int, default=Config().etcd_deadline_ms, metavar="MS",
                   help="each call to an etcd member waits this long, then the next member is asked "
                        "(default %(default)s: about half etcd's election timeout)")
    s.add_argument("--etcd-budget-ms", type=int, default=Config().etcd_budget_ms, metavar="MS",
                   help="a call's whole time across the members (default %(default)s); past it an "
                        "event is answered 'unknown' (send it again) or 'not stored'")
    s.add_argument("--etcd-ca", default="", metavar="PEM",
                   help="etcds://: the CA that signed the members' certificates")
    s.add_argument("--etcd-cert", default="", metavar="PEM",
                   help="etcds://: this node's client certificate (with --etcd-key)")
    s.add_argument("--etcd-key", default="", metavar="PEM", help="etcds://: its private key")
    s.add_argument("--unsafe-store", action="store_true",
                   help="allow a store that could lose acked events: --sqlite-synchronous NORMAL")
    s.add_argument("--sqlite-synchronous", choices=["FULL", "NORMAL"], default="FULL",
                   help="SQLite's synchronous setting (default FULL). NORMAL does not fsync "
                        "each commit, so a power cut can lose acked events: refused without "
                        "--unsafe-store (it exists for the power-loss proof's control run)")
    s.add_argument("--origin", action="append", default=[], help="another allowed browser Origin")
    s.add_argument("--no-public-pages", dest="public_pages", action="store_false",
                   help="serve no public pages: /, /events/..., /teams/..., their JSON and "
                        "calendars answer 404 (docs/public.md)")
    s.add_argument("--public-url", default="", type=_public_url, metavar="URL",
                   help="where users reach the service, behind a proxy (https://arena.example): the "
                        "start of every link it makes (pairing links and QR codes, the index page); "
                        "default: the listening address. The Host header is never used for a link")
    s.add_argument("--device-rate", type=float, default=Config().device_rate,
                   help="events per second each device may send, sustained (default %(default)s)")
    s.add_argument("--device-burst", type=int, default=Config().device_burst,
                   help="events each device may send in a burst (default %(default)s)")
    demo = s.add_mutually_exclusive_group()
    demo.add_argument("--demo", action="store_true",
                      help="play the demo game: the default on SQLite; on etcd (shared by every "
                           "node) the demo is off unless asked for, on one node")
    demo.add_argument("--no-demo", action="store_true", help="don't play the demo game")
    s.add_argument("--demo-speed", type=float, default=demo_script.DEFAULT_SPEED, metavar="X",
                   help="play the demo game's script X times faster (default %(default)s: real time, "
                        "the play time Rule 14 counts). It joins period 1 at 6:14 on the game "
                        "clock, a player already in the box: a first yellow 10 s later, his release "
                        "and a second yellow at about 1:30; faster, a box may be released later "
                        "than the script has it")
    s.add_argument("--heartbeat", type=float, default=Config().heartbeat,
                   help="seconds between heartbeats to viewers (default %(default)s); WebSocket pings "
                        "go every 3x that, and a viewer that leaves one unanswered for 1.5x that is dropped")
    s.add_argument("--loop", choices=["uvloop", "asyncio"], default=default_loop(),
                   help="the event loop serving it: uvloop where it is installed (Linux, macOS), "
                        "else the standard library's asyncio (default %(default)s; the environment "
                        "variable ARENA_STREAM_LOOP sets the default)")
    s.set_defaults(func=_cmd_serve)

    m = sub.add_parser("simulate", help="play the scripted demo game through a running service")
    m.add_argument("--url", default="http://127.0.0.1:8080", help="the service (default %(default)s)")
    m.add_argument("--token", help="an admin token (default: the one in DATA/admin.token)")
    m.add_argument("--data", type=Path, default=Path("arena-data"),
                   help="the data directory `serve` runs on, for its admin token (default %(default)s)")
    m.add_argument("--game", help="game id (default: sim-<time>)")
    m.add_argument("--speed", type=float, default=demo_script.DEFAULT_SPEED, metavar="X",
                   help="play the script X times faster (default %(default)s: real time)")
    m.set_defaults(func=_cmd_simulate)

    from .migrate import importer
    importer.add_arguments(sub.add_parser(
        "import", help="load an exported log (GET /api/log) into an empty store, as the service "
                       "would have written it, and check its fold against the file's replay"))

    from .migrate import archive
    archive.add_arguments(sub.add_parser(
        "archive", help="move an ended, completed event out of an etcd store into a JSON Lines "
                        "file that replay reads"))

    pf = sub.add_parser("proof", help="the proof suites: kill -9 soak, power loss, hostile input, "
                                      "auth, slow viewers, reconnect storm, the store's outage, failovers")
    pf.add_argument("--full", action="store_true", help="the long sizes (CI runs the bounded ones)")
    pf.add_argument("--report", type=Path, help="also write every suite's figures as JSON lines")
    pf.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --), e.g. -k soak")
    pf.set_defaults(func=_cmd_proof)

    b = sub.add_parser("bench", help="benchmarks that print measured ratios")
    bsub = b.add_subparsers(dest="bench", required=True)
    br = bsub.add_parser("replay", help="fold a synthetic season log against a msgspec decode")
    br.add_argument("--events", type=int, default=1_000_000)
    br.add_argument("--seed", type=int, default=14)
    bf = bsub.add_parser("fanout", help="viewer latency, ack latency and memory per viewer, "
                                         "against a bare websockets server and raw SQLite")
    bf.add_argument("--viewers", type=int, default=1000, help="viewers during the event stream")
    bf.add_argument("--rate", type=float, default=50.0, help="events per second from the device")
    bf.add_argument("--seconds", type=float, default=20.0, help="how long the device sends")
    bf.add_argument("--idle-viewers", type=int, default=10_000,
                    help="idle viewers opened to measure memory (fewer if the machine refuses)")
    bf.add_argument("--nodes", type=int, default=1, choices=[1, 2],
                    help="1: the service on SQLite; 2: that, and two nodes on three etcd members "
                         "(device on node A, viewers on A and B) in the same run")
    bf.add_argument("--rounds", type=int, default=5,
                    help="load rounds per server and condition, interleaved, fresh processes each; "
                         "the median and the worst are reported")
    bf.add_argument("--node-ws", action="store_true",
                    help="also a Node `ws` peer server (ws@8, npm-installed into ~/.cache/arena-stream)")
    bf.add_argument("--no-contended", dest="contended", action="store_false",
                    help="only the quiet rounds (by default also contended ones: the server pinned to "
                         "one core, a busy neighbour pinned to the other)")
    bf.add_argument("--ir-viewers", type=int, default=20,
                    help="viewers while instructions are counted (valgrind's callgrind, or perf)")
    bf.add_argument("--ir-events", type=int, default=200,
                    help="events while instructions are counted; 0: not counted")
    from .tools.bench_fanout import add_saturation_arguments
    add_saturation_arguments(bf)
    bi = bsub.add_parser("instructions", help="instructions per delivered frame and per acked event "
                                               "for each server (perf stat, else valgrind's callgrind)")
    bi.add_argument("--viewers", type=int, default=20, help="viewers while the events are sent")
    bi.add_argument("--events", type=int, default=200, help="events counted")
    bi.add_argument("--rate", type=float, default=40.0, help="events per second from the device")
    bi.add_argument("--node-ws", action="store_true",
                    help="also the Node `ws` peer (ws@8, npm-installed into ~/.cache/arena-stream)")
    ba = bsub.add_parser("all", help="every performance figure beside its goal, in one table; "
                                      "written as Markdown only when asked (--write, --out)",
                         description="Every performance figure beside its goal, in one table. It "
                                     "writes nothing unless asked: --write makes the run's report "
                                     "docs/performance.md (a full run only), --out FILE writes it "
                                     "to FILE.")
    where = ba.add_mutually_exclusive_group()
    where.add_argument("--write", action="store_true",
                       help=f"write the report to {TRACKED_REPORT} (the tracked one; a full run "
                            "only: refused with --quick)")
    where.add_argument("--out", type=Path, metavar="FILE",
                       help=f"write the report to FILE (--quick may not write {TRACKED_REPORT})")
    ba.add_argument("--quick", action="store_true",
                    help="tiny sizes (under a minute): the figures mean nothing, the run is a smoke "
                         f"test, and never written to {TRACKED_REPORT}")
    ba.add_argument("--events", type=int, default=1_000_000, help="bench replay's season size")
    ba.add_argument("--viewers", type=int, default=1000, help="viewers during the event stream")
    ba.add_argument("--rate", type=float, default=50.0, help="events per second from the device")
    ba.add_argument("--seconds", type=float, default=20.0, help="how long the device sends")
    ba.add_argument("--idle-viewers", type=int, default=10_000, help="idle viewers, for memory")
    ba.add_argument("--nodes", type=int, default=2, choices=[1, 2],
                    help="2: also the cross-node p99 on two nodes on three etcd members")
    ba.add_argument("--rounds", type=int, default=5,
                    help="fan-out load rounds per server and condition (the median and the worst)")
    ba.add_argument("--devices", type=int, default=50, help="concurrent devices for group commit")
    ba.add_argument("--commit-seconds", type=float, default=2.0,
                    help="how long each throughput measurement runs (end to end: 2.5 x this)")
    ba.add_argument("--cold-events", type=int, default=1_000_000,
                    help="events in the log the service cold-starts on")
    ba.add_argument("--seed", type=int, default=14)
    add_saturation_arguments(ba)
    from .tools import bench_nodes, bench_public, bench_race, bench_store
    bench_nodes.add_arguments(bsub.add_parser(
        "nodes", help="two nodes on three etcd members, each node and the etcd leader restarted at "
                       "random while devices "
                       "send to both: gaps, repeats, lost acks, live = replay"))
    bench_race.add_arguments(bsub.add_parser(
        "race", help="two devices of one game on two nodes racing for its seq, against both on one "
                      "node: ack p99 ratio, refusals"))
    bench_public.add_arguments(bsub.add_parser(
        "public", help="the public pages: spectators on one event socket against single-game viewers, "
                        "memory per spectator, the event page's p99 at 200 requests/s, ack p99 beside it"))
    bench_store.add_arguments(bsub.add_parser(
        "store", help="acked events/s and ack p99 with 50 devices: one node on SQLite against two nodes "
                      "on a three-member etcd cluster, on a few games and on many"))
    from .tools import bench_etcd_size
    bench_etcd_size.add_arguments(bsub.add_parser(
        "etcd-size", help="bytes per event in etcd (three members: before and after compaction and "
                          "defragmentation), a snapshot's size, and how many events a quota holds"))
    b.set_defaults(func=_cmd_bench)

    args = p.parse_args(argv)
    if args.cmd == "serve" and args.sqlite_synchronous != "FULL" and not args.unsafe_store:
        s.error(f"--sqlite-synchronous {args.sqlite_synchronous} can lose acknowledged events "
                "at a power cut; pass --unsafe-store as well to run it anyway")
    try:
        result: Any = args.func(args)
    except BrokenPipeError:  # the reader went away (`arena-stream replay … | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return int(result)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
