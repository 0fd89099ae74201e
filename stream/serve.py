"""``arena-stream serve`` and ``arena-stream simulate``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from aiohttp import web

from . import tasks
from .errors import NotStored, StartupRefused
from .live.app import build_app
from .live.ops import logs
from .live.ops.config import Config, admin_token, load_secret
from .live.ops.loops import loop_factory
from .live.service import Service
from .live.viewers.front_door import FrontServer
from .live.wire.auth import fingerprint
from .tools import demo
from .tools.device_client import DeviceError
from .tools.simulator import Simulator, bar, demo_tokens

log = logging.getLogger("arena_stream.serve")


def demo_wanted(args: argparse.Namespace) -> bool:
    """Whether to play the demo game: on SQLite unless ``--no-demo``; on a shared store
    (etcd) only with ``--demo``, since every node started on it would play one into the
    one log its viewers all see."""
    if args.demo or args.no_demo:
        return bool(args.demo)
    return bool(args.store == "sqlite")


def config_from(args: argparse.Namespace) -> Config:
    return Config(data_dir=args.data, host=args.host, port=args.port, store=args.store,
                  origins=list(args.origin), demo=demo_wanted(args), demo_speed=args.demo_speed,
                  unsafe_store=args.unsafe_store, device_rate=args.device_rate,
                  device_burst=args.device_burst, heartbeat=args.heartbeat,
                  sqlite_synchronous=args.sqlite_synchronous, etcd_deadline_ms=args.etcd_deadline_ms,
                  etcd_budget_ms=args.etcd_budget_ms, etcd_ca=args.etcd_ca, etcd_cert=args.etcd_cert,
                  etcd_key=args.etcd_key, freeze_heap=True, public_url=args.public_url,
                  public_pages=args.public_pages)


async def _demo_loop(svc: Service, url: str, speed: float) -> None:
    """Play the demo game, pause, and play a new one, for as long as the service runs.

    It prints a handheld link with a working umpire token for the demo game alone (24 h):
    the one token the service ever writes out, on the terminal of a demo, which plays only
    on a SQLite store without ``--no-demo`` (every deploy file passes it; docs/security.md)."""
    await asyncio.sleep(0.5)
    base = svc.config.base_url
    ws = "ws" + base.removeprefix("http")
    while True:
        game = time.strftime("demo-%Y%m%d-%H%M%S")
        exp = int(time.time()) + 24 * 3600
        sim = Simulator(url, demo_tokens(svc.issue, game, exp), game=game, speed=speed)
        # A handheld for you, to card a player yourself (the token rides in the
        # URL fragment, which the browser never sends to the server).
        yours, _ = svc.issue(sub=f"{game}-you", role="umpire", official="You", game=game, exp=exp)
        print(f"\ndemo game {game} is on:\n"
              f"  scoreboard  {base}/scoreboard?game={game}\n"
              f"  overlay     {base}/overlay?game={game}\n"
              f"  handheld    {base}/handheld?game={game}#pair={yours}\n"
              f"  committee   {base}/committee (sign in with the admin token)\n"
              f"  public      {base}/ (the front door; the event: {base}/events/{demo.EVENT})\n"
              f"  watch       {ws}/ws/watch?game={game}", flush=True)
        try:
            await sim.run()
        except (DeviceError, OSError) as err:  # the service could not take it (its store down, say)
            log.warning("demo game stopped", extra={"reason": f"{type(err).__name__}: {err}"})
        except Exception:
            log.exception("demo game stopped")
        await asyncio.sleep(60)


async def _serve(config: Config) -> None:
    logs.setup()
    secret = load_secret(config.data_dir)
    token = admin_token(config.data_dir, secret)
    app = build_app(config, secret=secret)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=5.0)
    await runner.setup()
    # A reconnect storm (every viewer at once after a network blip) overflows aiohttp's default
    # accept backlog of 128: the dropped SYNs are retried a second later. The kernel caps it
    # at net.core.somaxconn.
    front = FrontServer(runner, config.host, config.port, backlog=4096)
    try:
        await front.start()
    except OSError as err:  # the address taken (another service there), or not this machine's
        await runner.cleanup()   # the store closed as at any stop
        raise StartupRefused(f"can't listen on {config.host}:{config.port}: {err.strerror or err}; "
                             "is another service serving there? Choose another with --host or "
                             "--port") from None
    svc = app[Service.KEY]
    base = f"http://{config.host}:{config.port}"
    loop_name = "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"
    print(f"Arena Stream serving on {base}  (data: {config.data_dir.resolve()}, loop: {loop_name})",
          flush=True)
    print(f"  games:     {base}/api/games", flush=True)
    print(f"  watch:     ws://{config.host}:{config.port}/ws/watch?game=GAME", flush=True)
    print(f"  devices:   ws://{config.host}:{config.port}/ws/device", flush=True)
    print(f"  admin token in {config.data_dir / 'admin.token'} (fingerprint {fingerprint(token)})",
          flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    demo = asyncio.create_task(_demo_loop(svc, f"ws://{config.host}:{config.port}/ws/device",
                                          config.demo_speed)) if config.demo else None
    try:
        await stop.wait()
    finally:
        await tasks.stop([demo])
        front.close()
        await runner.cleanup()


#: How long the loop's thread may hold the interpreter while the store's writer thread waits
#: for it with a commit done (Python's default is 5 ms): while the loop writes a fan-out to
#: thousands of viewers, the commit's ack would otherwise wait that long for its turn.
SWITCH_INTERVAL_S = 0.0005


def serve(args: argparse.Namespace) -> int:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    try:
        with asyncio.Runner(loop_factory=loop_factory(getattr(args, "loop", "asyncio"))) as runner:
            runner.run(_serve(config_from(args)))
    except StartupRefused as err:
        print(f"arena-stream: {err.detail}", file=sys.stderr)
        return 2
    except NotStored as err:  # the store can't be reached at start-up (etcd down): say so, no traceback
        print(f"arena-stream: can't start: {err.detail}", file=sys.stderr)
        return 1
    return 0


class SimulateError(Exception):
    """What stops ``simulate`` before it plays, said plainly."""


def admin_token_for(args: argparse.Namespace) -> str:
    """``--token``, or the admin token ``serve`` wrote in its data directory (``--data``)."""
    if args.token:
        return str(args.token)
    path = Path(args.data) / "admin.token"
    try:
        token = path.read_text().strip()
    except OSError as err:
        raise SimulateError(
            f"simulate needs the service's admin token, and there is none at {path.resolve()} "
            f"({err.strerror.lower() if err.strerror else type(err).__name__}). Run it from the "
            f"directory `arena-stream serve` was started in, or give `--data DIR` (the server's "
            f"data directory) or `--token $(cat DIR/admin.token)`") from None
    if not token:
        raise SimulateError(f"{path.resolve()} is empty: give --token, or the data directory "
                            f"of the running server with --data DIR")
    return token


def simulate(args: argparse.Namespace) -> int:
    """Issue device tokens with an admin token, then play the demo script."""
    try:
        return _simulate(args)
    except SimulateError as err:
        print(f"arena-stream: {err}", file=sys.stderr)
        return 2


def _simulate(args: argparse.Namespace) -> int:
    token = admin_token_for(args)
    base = args.url.rstrip("/")
    game = args.game or time.strftime("sim-%Y%m%d-%H%M%S")

    def issue(role: str, device: str, scoped: bool) -> str:
        body = {"role": role, "device": device, "official": f"Simulated {role}"}
        if scoped:
            body["game"] = game
        req = urllib.request.Request(f"{base}/api/tokens", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return str(json.load(resp)["token"])
        except urllib.error.HTTPError as err:
            if err.code in (401, 403):
                raise SimulateError(f"the service at {base} refused the admin token (HTTP {err.code}): "
                                    f"is it the token of that server's data directory? (--data DIR "
                                    f"or --token)") from None
            raise SimulateError(f"the service at {base} answered HTTP {err.code} to "
                                f"POST /api/tokens") from None
        except (urllib.error.URLError, OSError) as err:
            why = getattr(err, "reason", err)
            raise SimulateError(f"no service at {base} ({why}): start one with `arena-stream serve`, "
                                f"or give its address with --url") from None

    tokens = {"admin": token, "umpire": issue("umpire", f"{game}-ump1", True),
              "referee": issue("referee", f"{game}-ref", True),
              "timekeeper": issue("timekeeper", f"{game}-timer", True)}
    ws = base.replace("http://", "ws://").replace("https://", "wss://") + "/ws/device"
    print(f"simulating {game} at {args.speed}x: watch {base.replace('http', 'ws', 1)}/ws/watch?game={game}")
    asyncio.run(Simulator(ws, tokens, game=game, speed=args.speed, progress=bar).run())
    return 0
