"""`python -m stateserver.devtools --attach PATH` or `python -m stateserver.devtools -- stateserver
ARGS...`: serves the devtools page on 127.0.0.1 and prints its URL (with its token) on stdout."""
import argparse
import asyncio
import os
import secrets
import shutil
import signal
import sys
import tempfile
from typing import List, Optional

from aiohttp import web

from ..async_client import AsyncClient
from .link import CoreLink
from .web import make_app


def parse(argv: List[str]) -> argparse.Namespace:
    core: List[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, core = argv[:at], argv[at + 1:]
    parser = argparse.ArgumentParser(
        prog="python -m stateserver.devtools",
        description="Watch, inspect, rewind and replay a stateserver core in the browser.",
        epilog="Either --attach PATH (a core started with --listen PATH) or -- stateserver "
               "ARGS... (devtools starts the core, with --listen and --record of its own).")
    parser.add_argument("--attach", metavar="PATH", help="the socket of a core started with --listen")
    parser.add_argument("--recording", metavar="FILE",
                        help="the --record FILE of the attached core, which export serves")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--keep", type=int, default=2000,
                        help="history entries kept, here and on the page (default 2000)")
    parser.add_argument("--interval", type=float, default=0.2,
                        help="seconds between two polls of the core's history (default 0.2)")
    parser.add_argument("--stateserver", metavar="PROGRAM",
                        help="the stateserver binary for attach and replay "
                             "(default: $STATESERVER_BIN, else stateserver on PATH)")
    args = parser.parse_args(argv)
    args.core = core
    if bool(args.attach) == bool(core):
        parser.error("give either --attach PATH or -- stateserver ARGS...")
    return args


async def serve(args: argparse.Namespace) -> int:
    program = args.stateserver or (args.core[0] if args.core else None) or os.environ.get(
        "STATESERVER_BIN") or shutil.which("stateserver") or "stateserver"
    workdir = tempfile.mkdtemp(prefix="stateserver-devtools-")
    os.chmod(workdir, 0o700)
    recording: Optional[str] = args.recording
    if args.attach:
        client = await AsyncClient.spawn([program, "attach", args.attach])
    else:
        recording = os.path.join(workdir, "session.ndjson")
        socket = os.path.join(workdir, "core.sock")
        client = await AsyncClient.spawn(
            [*args.core, "--listen", socket, "--record", recording], stderr=None)
        print(f"core: attach other clients with: {program} attach {socket}", file=sys.stderr)
    link = CoreLink(client, keep=args.keep, interval=args.interval, recording=recording)
    await link.start()
    token = secrets.token_urlsafe(24)
    runner = web.AppRunner(make_app(link, token, [program]), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"http://127.0.0.1:{port}/{token}/", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    ended = asyncio.ensure_future(client.process.wait())
    waiting = asyncio.ensure_future(stop.wait())
    await asyncio.wait([ended, waiting], return_when=asyncio.FIRST_COMPLETED)
    waiting.cancel()
    await link.stop()
    await runner.cleanup()
    status = await client.close()
    shutil.rmtree(workdir, ignore_errors=True)
    return 0 if args.attach else status


def main(argv: Optional[List[str]] = None) -> int:
    return asyncio.run(serve(parse(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    sys.exit(main())
