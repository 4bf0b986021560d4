"""The asyncio client: one stateserver process driven from an event loop."""
import asyncio
import itertools
import json
import os
from typing import (TYPE_CHECKING, Any, AsyncIterator, Callable, Dict, List, Mapping, Optional,
                    Tuple, Union)

from .client import (KEPT_LISTENER_ERRORS, Command, Listener, Message, default_command,
                     record_capacity)
from .errors import RPCError, ServerExited
from .log import MessageLog

if TYPE_CHECKING:
    from .async_mirror import AsyncMirror

#: Called with a response when its line is read, before any later line is handled.
ResponseHook = Callable[[Dict[str, Any]], None]

_END = object()  # ends a notification iterator: the conversation is over


class AsyncClient:
    """One stateserver process, for asyncio code. Make one with `await AsyncClient.spawn()`.

    The same protocol as `Client`: `await request(...)` returns a result or raises `RPCError`;
    a timeout raises `TimeoutError` quoting the end of the server's stderr and cancels the
    request on the server; cancelling the awaiting task sends `$/cancelRequest` too. The server's
    exit, or a line from it that is not JSON, raises `ServerExited` in every waiting call at
    once. `async for message in client.notifications(): ...` yields the notifications that arrive
    after the call; listeners (`add_listener`) run in the reader task, in order.

    Messages are recorded only when asked (`record=N` keeps the last N in `messages`).
    """

    STDERR_TAIL_BYTES = 64 << 10

    def __init__(self, process: "asyncio.subprocess.Process",
                 on_line: Optional[Callable[[bytes], None]] = None,
                 record: Union[bool, int] = False) -> None:
        if process.stdin is None or process.stdout is None:
            raise TypeError("the process needs piped stdin and stdout")
        self.process = process
        self.on_line = on_line
        self.messages = MessageLog(record_capacity(record))
        self.listener_errors: List[Tuple[Message, Exception]] = []
        self._ids = itertools.count(1)
        self._pending: Dict[int, Tuple["asyncio.Future[Dict[str, Any]]", Optional[ResponseHook]]] = {}
        self._listeners: List[Listener] = []
        self._subscribers: List["asyncio.Queue[Any]"] = []
        self._close_callbacks: List[Callable[[], None]] = []
        self._mirrors: Dict[str, "AsyncMirror"] = {}
        self._closed = False
        self._failure: Optional[str] = None
        self._stderr_tail = bytearray()
        self._stderr_grew = asyncio.Event()  # replaced after each wake-up
        self._stderr_ended = process.stderr is None
        self._reading = asyncio.Event()
        self._reading.set()
        self._reader = asyncio.ensure_future(self._read())
        self._stderr_reader = (asyncio.ensure_future(self._drain_stderr())
                               if process.stderr is not None else None)

    @classmethod
    async def spawn(cls, command: Optional[Command] = None, *args: str,
                    env: Optional[Mapping[str, str]] = None, stderr: Union[None, int] = None,
                    on_line: Optional[Callable[[bytes], None]] = None,
                    record: Union[bool, int] = False) -> "AsyncClient":
        """Starts the server, as `Client.spawn` does (same defaults)."""
        if command is None:
            command = default_command()
        elif isinstance(command, (str, os.PathLike)):
            command = [command]
        argv = [os.fspath(part) for part in command] + list(args)
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else asyncio.subprocess.PIPE,
            env=None if env is None else dict(env))
        return cls(process, on_line=on_line, record=record)

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        """Whether the conversation is over: the server's stdout ended or broke the protocol."""
        return self._closed

    # Sending

    def send_line(self, line: Union[str, bytes]) -> None:
        """Writes one raw line; `ServerExited` when the server can no longer read it."""
        if isinstance(line, str):
            line = line.encode()
        if not line.endswith(b"\n"):
            line += b"\n"
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing() or self._closed:
            raise self._exited("the line was sent")
        stdin.write(line)

    def send(self, message: Message) -> None:
        """Writes one JSON-RPC message (or a list: a batch) as a compact line."""
        self.send_line(json.dumps(message, separators=(",", ":")))

    def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification; ignored once the server is gone (there is nobody to tell)."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        try:
            self.send(message)
        except ServerExited:
            pass

    async def drain(self) -> None:
        """Waits until the pipe to the server has room again (backpressure for bursts)."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            try:
                await stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as error:
                raise self._exited(f"the pipe drained ({error})")

    async def request_raw(self, method: str, params: Any = None, timeout: Optional[float] = 30,
                          on_response: Optional[ResponseHook] = None) -> Dict[str, Any]:
        """Sends a request and returns the whole response object (result or error).

        `on_response(response)` runs when the response line is read, before any later line (a
        mirror needs its fetched state to take effect exactly there in the stream)."""
        id = next(self._ids)
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        future: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._pending[id] = (future, on_response)
        try:
            self.send(message)
            await self.drain()
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except asyncio.TimeoutError:
            self._forget(id)
            raise TimeoutError(f"no response to '{method}' (id {id}) within {timeout}s"
                               f"{self._stderr_hint()}") from None
        except asyncio.CancelledError:
            self._forget(id)  # the caller's task was cancelled: so is the request
            raise
        except ServerExited:
            self._pending.pop(id, None)
            raise

    def _forget(self, id: int) -> None:
        entry = self._pending.pop(id, None)
        if entry is not None:
            entry[0].cancel()
            self.notify("$/cancelRequest", {"id": id})

    async def request(self, method: str, params: Any = None,
                      timeout: Optional[float] = 30) -> Any:
        """Sends a request and returns its result; an error response raises RPCError."""
        response = await self.request_raw(method, params, timeout=timeout)
        if "error" in response:
            raise RPCError(response["error"])
        return response["result"]

    async def dispatch(self, store: str, action: Mapping[str, Any], wait: Optional[str] = None,
                       notify: bool = False, timeout: Optional[float] = 30) -> Any:
        """Sends an action to a store; returns `{store, version}` (None when `notify`)."""
        params: Dict[str, Any] = {"store": store, "action": action}
        if wait is not None:
            params["wait"] = wait
        if notify:
            self.notify("dispatch", params)
            return None
        return await self.request("dispatch", params, timeout=timeout)

    async def shutdown(self, timeout: float = 30) -> int:
        """Asks the server to drain and stop (`shutdown`), then closes; returns the exit status."""
        await self.request("shutdown", timeout=timeout)
        return await self.close(timeout=timeout)

    async def close(self, timeout: float = 30) -> int:
        """Closes stdin (a normal shutdown for the server) and returns its exit status."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()
        self.resume()
        status = await asyncio.wait_for(self.process.wait(), timeout)
        await asyncio.wait_for(self._reader, timeout)
        if self._stderr_reader is not None:
            await asyncio.wait_for(self._stderr_reader, timeout)
        return status

    # Receiving

    def notifications(self, method: Optional[str] = None) -> AsyncIterator[Dict[str, Any]]:
        """The notifications (of `method`, or all) that arrive from now on, until the server
        exits. Each iterator queues what it has not yet yielded: break out of the loop (or
        `aclose()` it) when done."""
        queue: "asyncio.Queue[Any]" = asyncio.Queue()
        if self._closed:
            queue.put_nowait(_END)
        else:
            self._subscribers.append(queue)
        return self._iterate(queue, method)

    async def _iterate(self, queue: "asyncio.Queue[Any]",
                       method: Optional[str]) -> AsyncIterator[Dict[str, Any]]:
        try:
            while True:
                item = await queue.get()
                if item is _END:
                    return
                if method is None or item.get("method") == method:
                    yield item
        finally:
            if queue in self._subscribers:
                self._subscribers.remove(queue)

    async def wait_for(self, predicate: Callable[[Message], bool],
                       timeout: float = 30) -> Message:
        """The first message from now on that satisfies `predicate` (responses included)."""
        future: "asyncio.Future[Message]" = asyncio.get_running_loop().create_future()

        def listener(message: Message) -> None:
            if not future.done() and predicate(message):
                future.set_result(message)

        def ended() -> None:
            if not future.done():
                future.set_exception(self._exited("the awaited message"))

        self.add_listener(listener)
        self.on_close(ended)
        try:
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no matching message within {timeout}s"
                               f"{self._stderr_hint()}") from None
        finally:
            self.remove_listener(listener)

    def pause(self) -> None:
        """Stops reading stdout: the pipe fills and the server merges the patches it cannot
        write, so a busy client catches up later with fewer, larger patches."""
        self._reading.clear()

    def resume(self) -> None:
        """Reads stdout again after `pause()`."""
        self._reading.set()

    def add_listener(self, listener: Listener) -> None:
        """Calls `listener(message)` in the reader task for every later message."""
        self._listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def on_close(self, callback: Callable[[], None]) -> None:
        """Calls `callback()` once the conversation is over (at once when it already is)."""
        if self._closed:
            callback()
        else:
            self._close_callbacks.append(callback)

    def report_listener_error(self, message: Message, error: Exception) -> None:
        """Keeps a callback's exception in `listener_errors` (the last 100)."""
        self.listener_errors.append((message, error))
        del self.listener_errors[:-KEPT_LISTENER_ERRORS]

    async def mirror(self, store: str) -> "AsyncMirror":
        """This client's shared `AsyncMirror` of a whole store (opened on first use)."""
        from .async_mirror import AsyncMirror
        mirror = self._mirrors.get(store)
        if mirror is None:
            mirror = self._mirrors[store] = AsyncMirror(self, store)
        await mirror.ready()
        return mirror

    async def wait_until(self, store: str, predicate: Callable[[Any], bool],
                         timeout: float = 30) -> Any:
        """Waits until `predicate(state)` holds for `store`'s published state; returns it."""
        return await (await self.mirror(store)).wait_until(predicate, timeout=timeout)

    def stderr_text(self) -> str:
        """The last `STDERR_TAIL_BYTES` the server wrote on stderr (when the client drains it)."""
        return self._stderr_tail.decode(errors="replace")

    def _stderr_hint(self) -> str:
        tail = self.stderr_text()[-2000:]
        return f"; server stderr ends with:\n{tail}" if tail else ""

    def _exited(self, waiting_for: str) -> ServerExited:
        why = self._failure or "the server exited"
        return ServerExited(f"{why} before {waiting_for}{self._stderr_hint()}")

    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        try:
            while True:
                chunk = await stream.read(1 << 16)
                if not chunk:
                    return
                self._stderr_tail += chunk
                del self._stderr_tail[:-self.STDERR_TAIL_BYTES]
                self._wake_stderr_waiters()
        finally:
            self._stderr_ended = True
            self._wake_stderr_waiters()

    def _wake_stderr_waiters(self) -> None:
        event, self._stderr_grew = self._stderr_grew, asyncio.Event()
        event.set()

    async def wait_stderr(self, text: str, timeout: float = 30) -> bool:
        """Waits until the kept stderr contains `text`; False after `timeout` or its end.
        Stderr is read by a task of its own, so it can lag behind stdout's answers."""
        needle = text.encode()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while needle not in self._stderr_tail and not self._stderr_ended:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(self._stderr_grew.wait(), remaining)
            except asyncio.TimeoutError:
                break
        return needle in self._stderr_tail

    async def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        buffer = b""
        try:
            while True:
                await self._reading.wait()
                chunk = await stream.read(1 << 16)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self._receive(line)
            if buffer:
                self._receive(buffer)
        finally:
            self._end(None)

    def _end(self, failure: Optional[str]) -> None:
        if failure is not None and self._failure is None:
            self._failure = failure
        if self._closed:
            return
        self._closed = True
        for id, (future, _) in list(self._pending.items()):
            if not future.done():
                future.set_exception(self._exited(f"answering id {id}"))
        self._pending.clear()
        for queue in self._subscribers:
            queue.put_nowait(_END)
        self._subscribers.clear()
        callbacks, self._close_callbacks = self._close_callbacks, []
        for callback in callbacks:
            callback()

    def _receive(self, line: bytes) -> None:
        if self.on_line is not None:
            self.on_line(line)
        if self._failure is not None:
            return  # the conversation is over; only drain so the server never blocks
        try:
            message = json.loads(line)
        except ValueError as error:
            self._end(f"the server wrote a line that is not JSON ({error}): {line[:200]!r}")
            return
        for listener in list(self._listeners):
            try:
                listener(message)
            except Exception as error:  # noqa: BLE001 - one bad listener must not stop reading
                self.report_listener_error(message, error)
        self.messages.append(message)
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            if "method" in item:
                for queue in self._subscribers:
                    queue.put_nowait(item)
            elif isinstance(item.get("id"), int):
                self._settle(item)

    def _settle(self, response: Dict[str, Any]) -> None:
        entry = self._pending.pop(response["id"], None)
        if entry is None:
            return  # cancelled, timed out, or not ours
        future, on_response = entry
        if on_response is not None:
            try:
                on_response(response)
            except Exception as error:  # noqa: BLE001 - reported, reading goes on
                self.report_listener_error(response, error)
        if not future.done():
            future.set_result(response)
