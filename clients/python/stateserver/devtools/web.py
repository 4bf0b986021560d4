"""The devtools' web server: one page, its static files, a WebSocket of live updates and a few
JSON endpoints, all under a path that carries the token."""
import asyncio
import hmac
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional

from aiohttp import WSMsgType, web

from ..errors import RPCError
from .link import CoreLink, Message

STATIC = Path(__file__).resolve().parent / "static"
TYPES = {".html": "text/html", ".css": "text/css", ".js": "text/javascript"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def make_app(link: CoreLink, token: str, replay_command: List[str]) -> web.Application:
    """The application: every path is `/TOKEN/...`; any other request gets a bare 403.

    The token is in the path, not a query string, so that the page's ES modules, which import
    each other by relative URL, carry it without any help."""

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        parts = request.path.split("/", 2)
        given = parts[1] if len(parts) > 1 else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            return web.Response(status=403)
        response = await handler(request)
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    app = web.Application(middlewares=[guard], client_max_size=64 << 20)
    routes = Routes(link, replay_command)
    prefix = "/" + token
    app.router.add_get(prefix + "/", routes.index)
    app.router.add_get(prefix + "/static/{name}", routes.static)
    app.router.add_get(prefix + "/ws", routes.socket)
    app.router.add_get(prefix + "/api/state", routes.state)
    app.router.add_post(prefix + "/api/rewind", routes.rewind)
    app.router.add_post(prefix + "/api/dispatch", routes.dispatch)
    app.router.add_post(prefix + "/api/skip", routes.skip)
    app.router.add_post(prefix + "/api/fork", routes.fork)
    app.router.add_post(prefix + "/api/blame", routes.blame)
    app.router.add_get(prefix + "/api/export", routes.export)
    app.router.add_post(prefix + "/api/replay", routes.replay)
    return app


def _error(status: int, message: str, data: Any = None) -> web.Response:
    return web.json_response({"error": {"message": message, "data": data}}, status=status)


class Routes:
    def __init__(self, link: CoreLink, replay_command: List[str]) -> None:
        self.link = link
        self.replay_command = replay_command

    async def index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Content-Type": "text/html"})

    async def static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        path = STATIC / name
        if "/" in name or name.startswith(".") or not path.is_file():
            raise web.HTTPNotFound()
        return web.FileResponse(path, headers={"Content-Type": TYPES.get(path.suffix, "text/plain")})

    async def socket(self, request: web.Request) -> web.StreamResponse:
        socket = web.WebSocketResponse(heartbeat=30)
        await socket.prepare(request)
        # A page that reads slowly gets messages dropped, never a stalled poll: each page has a
        # bounded queue of its own, and the link only ever puts into it.
        queue: "asyncio.Queue[Optional[Message]]" = asyncio.Queue(maxsize=256)
        lost = {"updates": 0}

        async def listener(message: Message) -> None:
            try:
                queue.put_nowait(message)
            except asyncio.QueueFull:
                lost["updates"] += 1

        self.link.subscribe(listener)
        try:
            await socket.send_str(json.dumps(self.link.snapshot()))
            sender = asyncio.ensure_future(self._forward(socket, queue, lost))
            async for message in socket:
                if message.type in (WSMsgType.ERROR, WSMsgType.CLOSE):
                    break
            sender.cancel()
        finally:
            self.link.unsubscribe(listener)
        return socket

    async def _forward(self, socket: web.WebSocketResponse,
                       queue: "asyncio.Queue[Optional[Message]]", lost: Dict[str, int]) -> None:
        while True:
            message = await queue.get()
            if message is None or socket.closed:
                return
            await socket.send_str(json.dumps(message))
            if lost["updates"]:
                await socket.send_str(json.dumps({"type": "lost", "updates": lost["updates"]}))

    async def _rpc(self, call: Awaitable[Any]) -> web.Response:
        try:
            return web.json_response({"result": await call})
        except RPCError as error:
            return _error(400, error.message, error.data)

    async def state(self, request: web.Request) -> web.Response:
        try:
            store, version = request.query["store"], int(request.query["version"])
        except (KeyError, ValueError):
            return _error(400, "expected ?store=ID&version=N")
        return await self._rpc(self.link.state_at(store, version))

    async def rewind(self, request: web.Request) -> web.Response:
        body = await request.json()
        store, version = body.get("store"), body.get("version")
        if not isinstance(store, str) or not isinstance(version, int):
            return _error(400, "expected {store, version}")
        return await self._rpc(self.link.rewind(store, version))

    async def dispatch(self, request: web.Request) -> web.Response:
        body = await request.json()
        store, action = body.get("store"), body.get("action")
        if not isinstance(store, str) or not isinstance(action, dict):
            return _error(400, "expected {store, action}")
        response: Dict[str, Any] = await self.link.dispatch(store, action)
        if "error" in response:
            return web.json_response({"error": response["error"]}, status=400)
        return web.json_response({"result": response.get("result")})

    @staticmethod
    def _answer(response: Dict[str, Any]) -> web.Response:
        if "error" in response:
            return web.json_response({"error": response["error"]}, status=400)
        return web.json_response({"result": response.get("result")})

    async def skip(self, request: web.Request) -> web.Response:
        body = await request.json()
        store, version, skipped = body.get("store"), body.get("version"), body.get("skipped")
        if not isinstance(store, str) or not isinstance(version, int) \
                or not isinstance(skipped, bool):
            return _error(400, "expected {store, version, skipped}")
        return self._answer(await self.link.skip(store, version, skipped))

    async def fork(self, request: web.Request) -> web.Response:
        body = await request.json()
        store, version, name = body.get("store"), body.get("version"), body.get("as")
        if not isinstance(store, str) or not isinstance(version, int) \
                or not isinstance(name, (str, type(None))):
            return _error(400, "expected {store, version, as?}")
        return self._answer(await self.link.fork(store, version, name))

    async def blame(self, request: web.Request) -> web.Response:
        body = await request.json()
        store, path = body.get("store"), body.get("path")
        if not isinstance(store, str) or not isinstance(path, str):
            return _error(400, "expected {store, path}")
        return self._answer(await self.link.blame(store, path))

    async def export(self, request: web.Request) -> web.StreamResponse:
        data = self.link.export()
        if data is None:
            return _error(409, "this core's recording is unknown: start it with --record FILE "
                          "and devtools with --recording FILE (or let devtools start the core)")
        return web.Response(body=data, content_type="application/x-ndjson", headers={
            "Content-Disposition": 'attachment; filename="session.ndjson"'})

    async def replay(self, request: web.Request) -> web.Response:
        """Runs `stateserver replay` on the uploaded recording and reports what it printed."""
        data = await request.read()
        handle, path = tempfile.mkstemp(prefix="devtools-replay-", suffix=".ndjson")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
            process = await asyncio.create_subprocess_exec(
                *self.replay_command, "replay", path, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE)
            out, err = await asyncio.wait_for(process.communicate(), timeout=300)
        finally:
            os.unlink(path)
        outcome: Any = None
        try:
            outcome = json.loads(out.decode().strip().splitlines()[-1]) if out.strip() else None
        except ValueError:
            outcome = None
        return web.json_response({"status": process.returncode, "outcome": outcome,
                                  "stderr": err.decode(errors="replace")[-4000:]})
