"""The asyncio client: one stateserver process driven from an event loop."""
import asyncio
from typing import (Any, AsyncIterator, Callable, Dict, List, Mapping, Optional, Set, Tuple, Type,
                    Union)

from .async_mirror import AsyncMirror
from .connection import (STDERR_TAIL_BYTES, fork_params, Command, Connection, Framer, Listener, Message,
                         ProgressCallback, ResponseHook, command_line, id_key, result_of)
from .errors import RPCError, ServerExited

__all__ = ["AsyncClient", "ProgressUpdates", "ResponseHook"]

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

    STDERR_TAIL_BYTES = STDERR_TAIL_BYTES

    def __init__(self, process: "asyncio.subprocess.Process",
                 on_line: Optional[Callable[[bytes], None]] = None,
                 record: Union[bool, int] = False) -> None:
        if process.stdin is None or process.stdout is None:
            raise TypeError("the process needs piped stdin and stdout")
        self.process = process
        self.on_line = on_line
        self._connection = Connection(record)
        self.messages = self._connection.messages
        self.listener_errors: List[Tuple[Message, Exception]] = self._connection.listener_errors
        # The requests awaited, by `id_key`: only these are settled (a response nobody awaits,
        # to a request sent raw or timed out, is dropped).
        self._pending: Dict[str, "asyncio.Future[Dict[str, Any]]"] = {}
        self._subscribers: List["asyncio.Queue[Any]"] = []
        # The queues of `progress()` blocks still open: each is told `_END` if the server exits.
        self._progress_queues: Set["asyncio.Queue[Any]"] = set()
        self._mirrors: Dict[str, AsyncMirror] = {}
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
        argv = command_line(command, args)
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
        return self._connection.closed

    # Sending

    def send_line(self, line: Union[str, bytes]) -> None:
        """Writes one raw line; `ServerExited` when the server can no longer read it."""
        self._write(Connection.line(line))

    def _write(self, data: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing() or self._connection.closed:
            raise self._exited("the line was sent")
        stdin.write(data)

    def send(self, message: Message) -> None:
        """Writes one JSON-RPC message (or a list: a batch) as a compact line."""
        self._write(Connection.encode(message))

    def notify(self, method: str, params: Any = None) -> None:
        """Sends a notification; ignored once the server is gone (there is nobody to tell)."""
        try:
            self._write(self._connection.notification(method, params))
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
                          on_response: Optional[ResponseHook] = None,
                          id: Any = None) -> Dict[str, Any]:
        """Sends a request and returns the whole response object (result or error).

        `on_response(response)` runs when the response line is read, before any later line (a
        mirror needs its fetched state to take effect exactly there in the stream)."""
        id, line = self._connection.request(method, params, id=id, on_response=on_response)
        future: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._pending[id_key(id)] = future
        try:
            self._write(line)
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
            self._pending.pop(id_key(id), None)
            self._connection.forget(id)
            raise

    def _forget(self, id: int) -> None:
        self._connection.forget(id)
        future = self._pending.pop(id_key(id), None)
        if future is not None:
            future.cancel()
            self.notify("$/cancelRequest", {"id": id})

    async def request(self, method: str, params: Any = None,
                      timeout: Optional[float] = 30, id: Any = None) -> Any:
        """Sends a request and returns its result; an error response raises RPCError."""
        return result_of(await self.request_raw(method, params, timeout=timeout, id=id))

    async def initialize(self, capabilities: Optional[Mapping[str, bool]] = None,
                         timeout: float = 30, **params: Any) -> Dict[str, Any]:
        """`initialize`: tells the server what this client speaks (`capabilities`, by default
        progress, batches and the clock) and returns its answer, whose `capabilities` say what
        both speak. `params`: `subscribe`, `clock`, `client`, `protocolVersion`."""
        result: Dict[str, Any] = await self.request(
            "initialize", self._connection.initialize_params(capabilities, **params),
            timeout=timeout)
        return result

    async def dispatch(self, store: str, action: Mapping[str, Any], wait: Optional[str] = None,
                       notify: bool = False, timeout: Optional[float] = 30,
                       on_progress: Optional[ProgressCallback] = None, id: Any = None) -> Any:
        """Sends an action to a store; returns `{store, version}` (None when `notify`).

        `on_progress(value)` hears the progress its effects report (`$/progress`: `begin`,
        `report`s, then `end`), after `initialize()`. `cancel(id)` with the dispatch's `id`
        cancels that work, as does cancelling the task awaiting a `wait="settled"` one."""
        params = self._connection.dispatch_params(store, action, wait, on_progress)
        if notify:
            self.notify("dispatch", params)
            return None
        try:
            return await self.request("dispatch", params, timeout=timeout, id=id)
        except RPCError:
            self._connection.forget_progress(params)
            raise

    @property
    def progress_tokens(self) -> "frozenset[str]":
        """The `progressToken`s whose `on_progress` callback this client still keeps: each
        leaves with its `end` (which always comes once the work ended, even when nothing
        reported), or when its dispatch failed. Empty once every such work ended."""
        return self._connection.progress_tokens

    def progress(self, store: str, action: Mapping[str, Any], wait: Optional[str] = None,
                 timeout: Optional[float] = 30, id: Any = None) -> "ProgressUpdates":
        """Dispatches an action and iterates the progress of the work it starts:

            async with client.progress("notes", {"type": "sync"}) as sync:
                print(sync.result)        # the dispatch's {store, version}
                async for update in sync:  # begin, report..., end; then the loop ends
                    print(update["kind"], update["done"], update.get("total"))

        The loop ends after the `end` (which always comes, `{"kind": "end", "done": 0,
        "cancelled": false}` alone when the work never reported); `sync.end` keeps it and
        `sync.cancelled` says whether the work was cancelled. `sync.cancel()` cancels the
        work: the loop then yields its `end` (`cancelled: true`) and stops. Leaving the block
        before the `end` (a `break`, an exception) cancels the work too: it lives no longer
        than the block. A dispatch refused raises `RPCError` on entering; the server's exit
        raises `ServerExited` in the loop. Needs `initialize()` first, as `on_progress` does."""
        return ProgressUpdates(self, store, action, wait, timeout, id)

    def cancel(self, id: Any) -> None:
        """`$/cancelRequest`: the request `id` is answered -32800 if still pending, and the
        work of a dispatch that asked for progress is cancelled (its progress ends)."""
        self.notify("$/cancelRequest", {"id": id})

    async def advance(self, ms: int, timeout: float = 30) -> int:
        """`clock/advance` on a server with a virtual clock (`--clock virtual`): moves time by
        `ms` and returns the new time in ms, once every effect due by then has run and its
        patches were written."""
        return int((await self.request("clock/advance", {"ms": ms}, timeout=timeout))["now"])

    async def now(self, timeout: float = 30) -> int:
        """`clock/now`: the server's time in ms since it started (virtual or real)."""
        return int((await self.request("clock/now", timeout=timeout))["now"])

    async def skip(self, store: str, version: int, skipped: bool = True,
             timeout: float = 30) -> "Any":
        """`history/skip`: turn the action that made `version` off (or on again with
        `skipped=False`) and recompute the state from the actions that remain."""
        return await self.request("history/skip", {"store": store, "version": version,
                                             "skipped": skipped}, timeout=timeout)

    async def fork(self, store: str, version: "int | None" = None, as_: "str | None" = None,
             persist: "bool | None" = None, timeout: float = 30) -> "Any":
        """`store/fork`: a new store of the same feature, starting from `store`'s state at
        `version` (the current one when omitted), named `as_` (or by the server)."""
        return await self.request("store/fork", fork_params(store, version, as_, persist),
                            timeout=timeout)

    async def diff(self, store: str, other: str, timeout: float = 30) -> "Any":
        """`state/diff`: the RFC 6902 patch that turns `store`'s state into `other`'s."""
        return await self.request("state/diff", {"store": store, "other": other}, timeout=timeout)

    async def blame(self, store: str, path: str, limit: "int | None" = None,
              timeout: float = 30) -> "Any":
        """`state/blame`: the history entry that last changed the value at `path`, and the
        entries before it that touched it."""
        params: "dict[str, object]" = {"store": store, "path": path}
        if limit is not None:
            params["limit"] = limit
        return await self.request("state/blame", params, timeout=timeout)

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
        if self._connection.closed:
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
        self._connection.add_listener(listener)

    def remove_listener(self, listener: Listener) -> None:
        self._connection.remove_listener(listener)

    def on_close(self, callback: Callable[[], None]) -> None:
        """Calls `callback()` once the conversation is over (at once when it already is)."""
        if not self._connection.on_close(callback):
            callback()

    def report_listener_error(self, message: Message, error: Exception) -> None:
        """Keeps a callback's exception in `listener_errors` (the last 100)."""
        self._connection.report_listener_error(message, error)

    async def mirror(self, store: str) -> "AsyncMirror":
        """This client's shared `AsyncMirror` of a whole store (opened on first use)."""
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
        return self._connection.exited(waiting_for, self._stderr_hint())

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
        framer = Framer()
        try:
            while True:
                await self._reading.wait()
                chunk = await stream.read(1 << 16)
                if not chunk:
                    break
                for line in framer.feed(chunk):
                    self._receive(line)
            for line in framer.finish():
                self._receive(line)
        finally:
            self._end()

    def _end(self) -> None:
        callbacks = self._connection.end()
        for key, future in list(self._pending.items()):
            if not future.done():
                future.set_exception(self._exited(f"answering id {key}"))
        self._pending.clear()
        for queue in self._subscribers:
            queue.put_nowait(_END)
        self._subscribers.clear()
        for queue in self._progress_queues:
            queue.put_nowait(_END)
        self._progress_queues.clear()
        for callback in callbacks:
            callback()

    def _receive(self, line: bytes) -> None:
        if self.on_line is not None:
            self.on_line(line)
        incoming = self._connection.receive(line)
        if incoming is None:
            if self._connection.failure is not None and not self._connection.closed:
                self._end()
            return
        self._connection.record(incoming)
        for notification in incoming.notifications:
            for queue in self._subscribers:
                queue.put_nowait(notification)
        for key, response in incoming.responses:
            future = self._pending.pop(key, None)
            if future is not None and not future.done():  # else cancelled, timed out, not ours
                future.set_result(response)


class ProgressUpdates:
    """The progress of one dispatch's work, as `AsyncClient.progress()` gives it: an async
    context manager that dispatches on entering, and an async iterator of the `$/progress`
    values (`begin`, `report`s, `end`) that stops after the `end`."""

    def __init__(self, client: AsyncClient, store: str, action: Mapping[str, Any],
                 wait: Optional[str], timeout: Optional[float], id: Any) -> None:
        self._client = client
        self._request = (store, action, wait, timeout)
        #: The dispatch's id: `$/cancelRequest` with it cancels the work.
        self.id: Any = client._connection.next_id() if id is None else id
        #: The dispatch's result, `{store, version}`, once entered.
        self.result: Optional[Dict[str, Any]] = None
        #: The `end` value once it came: `{kind: "end", done, total?, cancelled}`.
        self.end: Optional[Dict[str, Any]] = None
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self._token: Optional[str] = None

    @property
    def cancelled(self) -> bool:
        """Whether the work ended cancelled (False while it runs)."""
        return bool(self.end is not None and self.end.get("cancelled"))

    async def __aenter__(self) -> "ProgressUpdates":
        client, connection = self._client, self._client._connection
        store, action, wait, timeout = self._request
        params = connection.dispatch_params(store, action, wait, self._queue.put_nowait)
        self._token = params["progressToken"]
        client._progress_queues.add(self._queue)
        try:
            self.result = await client.request("dispatch", params, timeout=timeout, id=self.id)
        except BaseException:
            self._let_go()
            raise
        return self

    async def __aexit__(self, kind: Optional[Type[BaseException]],
                        error: Optional[BaseException], traceback: Any) -> None:
        if self._token in self._client.progress_tokens:
            self.cancel()  # its `end` has not come: the work lives no longer than the block
        self._let_go()

    def cancel(self) -> None:
        """Cancels the work (`$/cancelRequest` with the dispatch's id); the iteration then
        yields its `end`, `cancelled: true`, and stops."""
        self._client.cancel(self.id)

    def __aiter__(self) -> "ProgressUpdates":
        return self

    async def __anext__(self) -> Dict[str, Any]:
        if self.end is not None:
            raise StopAsyncIteration
        if self._token is None:
            raise RuntimeError("iterate a progress() inside its `async with` block")
        value = await self._queue.get()
        if value is _END:
            self._queue.put_nowait(_END)  # a later call raises as well
            raise self._client._exited("the end of the progress")
        if value.get("kind") == "end":
            self.end = value
            self._let_go()
        update: Dict[str, Any] = value
        return update

    def _let_go(self) -> None:
        self._client._progress_queues.discard(self._queue)
        if self._token is not None:
            self._client._connection.forget_progress({"progressToken": self._token})
