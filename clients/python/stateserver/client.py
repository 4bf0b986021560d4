"""A client that spawns stateserver and talks to it over its stdin/stdout."""
import os
import subprocess
import threading
from typing import IO, Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from .connection import (DEFAULT_RECORD, fork_params, KEPT_LISTENER_ERRORS, STDERR_TAIL_BYTES, Command,
                         Connection, Framer, Incoming, Listener, Message, ProgressCallback,
                         ResponseHook,
                         command_line, default_command, id_key, record_capacity, result_of)
from .errors import RPCError, ServerExited
from .log import MessageLog
from .mirror import Mirror

__all__ = ["Client", "RPCError", "ServerExited", "DEFAULT_RECORD", "KEPT_LISTENER_ERRORS",
           "Command", "Listener", "Message", "default_command", "record_capacity"]


class Client:
    """One stateserver process.

    A reader thread parses every line the server writes. Responses resolve the request that
    carried their id; listeners (`add_listener`) see every message in order. Messages are
    recorded only when asked: `record=N` keeps the last N in `messages` (and the notifications
    among them in `notifications`), which `wait_for(start=...)` reads; `record=True` keeps
    `DEFAULT_RECORD`. A long-lived client records nothing, so its memory does not grow with
    the traffic. `on_line(bytes)` sees each raw line first.

    When the process's stderr is a pipe (the default of `spawn`), another thread drains it at
    once, keeping the last `STDERR_TAIL_BYTES` for `stderr_text()` and for the messages of
    timeouts: a pipe nobody reads fills after ~64 KiB of logs and then blocks the server.

    A line that is not JSON ends the conversation: every waiting and later call raises
    `ServerExited` at once (the reader keeps draining stdout so the server never blocks).
    """

    STDERR_TAIL_BYTES = STDERR_TAIL_BYTES

    def __init__(self, process: "subprocess.Popen[bytes]",
                 on_line: Optional[Callable[[bytes], None]] = None,
                 record: Union[bool, int] = False) -> None:
        self.process = process
        self.on_line = on_line
        # The conversation: the reader thread changes it and waiters read it, under `_cond`.
        # Its listeners and response hooks are called by the reader outside the lock (a hook
        # takes its mirror's lock, under which a waiter may ask for this one); adding or
        # dropping one is a single list or dict operation, which the GIL keeps whole.
        self._connection = Connection(record)
        self.messages = self._connection.messages  # the last `record` messages, in order
        self.notifications = MessageLog(record_capacity(record))  # the notifications among them
        # A listener raised; reading went on.
        self.listener_errors: List[Tuple[Message, Exception]] = self._connection.listener_errors
        # Every response not yet taken, by `id_key`: `response(id)` may be asked for a request
        # sent raw with `send`, so a response is kept whether or not a request awaits it.
        self._responses: Dict[str, Message] = {}
        self._cond = threading.Condition()
        self._reading = threading.Event()
        self._reading.set()
        self._write_lock = threading.Lock()
        self._stderr_tail = bytearray()
        self._stderr_lock = threading.Condition()
        self._stderr_thread: Optional[threading.Thread] = None
        self._stderr_ended = process.stderr is None
        self._mirrors: Dict[str, Mirror] = {}
        if process.stderr is not None:
            self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
            self._stderr_thread.start()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    @classmethod
    def spawn(cls, command: Optional[Command] = None, *args: str,
              env: Optional[Mapping[str, str]] = None, stderr: Union[None, int, IO[Any]] = None,
              on_line: Optional[Callable[[bytes], None]] = None,
              record: Union[bool, int] = False) -> "Client":
        """Starts the server. `command` is a list (program and arguments) or a program path;
        by default `$STATESERVER_BIN` or `stateserver` from PATH with `--ephemeral`.

        `stderr`: by default a pipe that the client drains (see `stderr_text()`); pass
        `subprocess.DEVNULL`, a file, or a descriptor (`2`: this process's stderr) instead.
        `record`: how many messages to keep in `messages` (see the class)."""
        process = subprocess.Popen(
            command_line(command, args), stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr if stderr is not None else subprocess.PIPE,
            env=env, bufsize=0)
        return cls(process, on_line=on_line, record=record)

    @classmethod
    def attach(cls, path: Union[str, "os.PathLike[str]"],
               command: Union[None, str, "os.PathLike[str]"] = None,
               env: Optional[Mapping[str, str]] = None, stderr: Union[None, int, IO[Any]] = None,
               on_line: Optional[Callable[[bytes], None]] = None,
               record: Union[bool, int] = False) -> "Client":
        """Attaches to a running core started with `--listen PATH`, through
        `stateserver attach PATH` (`command`: the stateserver program, by default
        `$STATESERVER_BIN` or `stateserver`). The client works as with `spawn`; `close()` ends
        only this connection, not the core."""
        program = command if command is not None else os.environ.get("STATESERVER_BIN", "stateserver")
        return cls.spawn([os.fspath(program), "attach", os.fspath(path)], env=env, stderr=stderr,
                         on_line=on_line, record=record)

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Sending

    def send_line(self, line: Union[str, bytes]) -> None:
        """Writes one raw line (str or bytes); a newline is added when missing."""
        self.send_bytes(Connection.line(line))

    def send_bytes(self, data: bytes) -> None:
        """Writes bytes as they are; `ServerExited` when the server can no longer read them."""
        stdin = self.process.stdin
        assert stdin is not None, "the process has no stdin pipe"
        with self._write_lock:
            try:
                stdin.write(data)
                stdin.flush()
            except (BrokenPipeError, ValueError) as error:  # ValueError: stdin closed here
                raise ServerExited(f"cannot write to the server ({error}){self._stderr_hint()}")

    def send(self, message: Message) -> None:
        """Writes one JSON-RPC message (or a list: a batch) as a compact line."""
        self.send_bytes(Connection.encode(message))

    def next_id(self) -> int:
        return self._connection.next_id()

    def request_raw(self, method: str, params: Any = None, id: Any = None,
                    timeout: float = 30,
                    on_response: Optional[ResponseHook] = None) -> Dict[str, Any]:
        """Sends a request and returns the whole response object (result or error).

        `on_response(response)` runs on the reader thread when the response line is read,
        before any later line (a mirror needs its fetched state to take effect exactly there)."""
        with self._cond:
            id, line = self._connection.request(method, params, id=id, on_response=on_response)
            self._responses.pop(id_key(id), None)  # an older answer to a reused id
        try:
            self.send_bytes(line)
            response: Dict[str, Any] = self.response(id, timeout=timeout)
        except BaseException:
            with self._cond:
                self._connection.forget(id)
            raise
        return response

    def request(self, method: str, params: Any = None, id: Any = None,
                timeout: float = 30) -> Any:
        """Sends a request and returns its result; an error response raises RPCError."""
        return result_of(self.request_raw(method, params, id=id, timeout=timeout))

    def notify(self, method: str, params: Any = None) -> None:
        self.send_bytes(self._connection.notification(method, params))

    def initialize(self, capabilities: Optional[Mapping[str, bool]] = None,
                   timeout: float = 30, **params: Any) -> Dict[str, Any]:
        """`initialize`: tells the server what this client speaks (`capabilities`, by default
        progress, batches and the clock) and returns its answer, whose `capabilities` say what
        both speak. `params`: `subscribe`, `clock`, `client`, `protocolVersion`."""
        result: Dict[str, Any] = self.request(
            "initialize", self._connection.initialize_params(capabilities, **params),
            timeout=timeout)
        return result

    def dispatch(self, store: str, action: Mapping[str, Any], wait: Optional[str] = None,
                 notify: bool = False, id: Any = None, timeout: float = 30,
                 on_progress: Optional[ProgressCallback] = None) -> Any:
        """Sends an action to a store; returns `{store, version}` (None when `notify`).

        `on_progress(value)` hears the progress its effects report (`$/progress`: `begin`,
        `report`s, then `end`), on the reader thread, after `initialize()`. `cancel(id)` with
        the dispatch's `id` cancels that work."""
        with self._cond:
            params = self._connection.dispatch_params(store, action, wait, on_progress)
        if notify:
            self.notify("dispatch", params)
            return None
        try:
            return self.request("dispatch", params, id=id, timeout=timeout)
        except RPCError:
            with self._cond:
                self._connection.forget_progress(params)
            raise

    @property
    def progress_tokens(self) -> "frozenset[str]":
        """The `progressToken`s whose `on_progress` callback this client still keeps: each
        leaves with its `end` (which always comes once the work ended, even when nothing
        reported), or when its dispatch failed. Empty once every such work ended."""
        with self._cond:
            return self._connection.progress_tokens

    def cancel(self, id: Any) -> None:
        """`$/cancelRequest`: the request `id` is answered -32800 if still pending, and the
        work of a dispatch that asked for progress is cancelled (its progress ends)."""
        self.notify("$/cancelRequest", {"id": id})

    def shutdown(self, timeout: float = 30) -> int:
        """Asks the server to drain and stop (`shutdown`), then closes; returns the exit status."""
        self.request("shutdown", timeout=timeout)
        return self.close(timeout=timeout)

    def close(self, timeout: float = 30) -> int:
        """Closes stdin (a normal shutdown for the server) and returns its exit status."""
        stdin = self.process.stdin
        if stdin is not None and not stdin.closed:
            # Not under the write lock: a writer blocked on a full pipe must not block closing.
            try:
                stdin.close()
            except BrokenPipeError:
                pass
        self.resume()
        status = self.process.wait(timeout=timeout)
        self._thread.join(timeout=timeout)
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=timeout)
        return status

    def stderr_text(self) -> str:
        """The last `STDERR_TAIL_BYTES` the server wrote on stderr (when the client drains it)."""
        with self._stderr_lock:
            return self._stderr_tail.decode(errors="replace")

    def wait_stderr(self, text: str, timeout: float = 30) -> bool:
        """Waits until the kept stderr contains `text`; False after `timeout` or its end.
        Stderr is read by a thread of its own, so it can lag behind stdout's answers."""
        needle = text.encode()
        with self._stderr_lock:
            self._stderr_lock.wait_for(
                lambda: needle in self._stderr_tail or self._stderr_ended, timeout)
            return needle in self._stderr_tail

    def _stderr_hint(self) -> str:
        tail = self.stderr_text()[-2000:]
        return f"; server stderr ends with:\n{tail}" if tail else ""

    def _exited(self, waiting_for: str) -> ServerExited:
        return self._connection.exited(waiting_for, self._stderr_hint())

    # Receiving

    def response(self, id: Any, timeout: float = 30) -> Any:
        """Waits for the response carrying `id` (also found inside batch arrays)."""
        key = id_key(id)
        with self._cond:
            if not self._cond.wait_for(lambda: key in self._responses or self._connection.closed, timeout):
                raise TimeoutError(
                    f"no response with id {id!r} within {timeout}s{self._stderr_hint()}")
            if key not in self._responses:
                raise self._exited(f"answering id {id!r}")
            return self._responses.pop(key)

    def wait_for(self, predicate: Callable[[Message], bool], timeout: float = 30,
                 start: Optional[int] = 0) -> Message:
        """Waits until a message from index `start` on satisfies `predicate`; returns it.

        Without recording (or with `start=None`) it looks only at messages that arrive after
        the call."""
        if start is not None and not self.messages.capacity:
            start = None
        found: List[Message] = []

        def listener(message: Message) -> None:
            if not found and predicate(message):
                with self._cond:
                    found.append(message)
                    self._cond.notify_all()

        if start is None:
            self.add_listener(listener)
        try:
            with self._cond:
                def check() -> bool:
                    if start is not None:
                        for message in self.messages[start:]:
                            if predicate(message):
                                found.append(message)
                                return True
                    return bool(found) or self._connection.closed

                if not self._cond.wait_for(check, timeout):
                    raise TimeoutError(f"no matching message{self._stderr_hint()}")
                if not found:
                    raise self._exited("the awaited message")
                return found[0]
        finally:
            if start is None:
                self.remove_listener(listener)

    def wait_closed(self, timeout: float = 30) -> bool:
        with self._cond:
            self._cond.wait_for(lambda: self._connection.closed, timeout)
            return self._connection.closed

    def mirror(self, store: str) -> "Mirror":
        """This client's shared `Mirror` of a whole store (made on first use)."""
        with self._cond:
            mirror = self._mirrors.get(store)
        if mirror is None:
            mirror = Mirror(self, store)
            with self._cond:
                mirror = self._mirrors.setdefault(store, mirror)
        return mirror

    def wait_until(self, store: str, predicate: Callable[[Any], bool],
                   timeout: float = 30) -> Any:
        """Waits until `predicate(state)` holds for `store`'s published state; returns the state.

        The state is a `Mirror` kept by patches, so this sees every version the server
        publishes without polling. `TimeoutError` (quoting the last state and the server's
        stderr) when it does not hold within `timeout` seconds."""
        return self.mirror(store).wait_until(predicate, timeout=timeout)

    def add_listener(self, listener: Listener) -> None:
        """Calls `listener(message)` on the reader thread for every later message."""
        self._connection.add_listener(listener)

    def remove_listener(self, listener: Listener) -> None:
        self._connection.remove_listener(listener)

    def report_listener_error(self, message: Message, error: Exception) -> None:
        """Keeps a callback's exception in `listener_errors` (the last 100)."""
        self._connection.report_listener_error(message, error)

    def pause(self) -> None:
        """Stops reading stdout (the server's writes then block): a slow client on purpose."""
        self._reading.clear()

    def resume(self) -> None:
        self._reading.set()

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        fd = self.process.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            with self._stderr_lock:
                self._stderr_tail += chunk
                excess = len(self._stderr_tail) - self.STDERR_TAIL_BYTES
                if excess > 0:
                    del self._stderr_tail[:excess]
                self._stderr_lock.notify_all()
        with self._stderr_lock:
            self._stderr_ended = True
            self._stderr_lock.notify_all()

    def _read(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        framer = Framer()
        while True:
            self._reading.wait()
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            for line in framer.feed(chunk):
                self._receive(line)
        for line in framer.finish():
            self._receive(line)
        self._mark_closed()

    def _mark_closed(self) -> None:
        with self._cond:
            callbacks = self._connection.end()  # every waiter raises ServerExited now
            self._cond.notify_all()
        for callback in callbacks:
            callback()

    def on_close(self, callback: Callable[[], None]) -> None:
        """Calls `callback()` once the conversation is over (the server exited or broke the
        protocol); at once when it already is."""
        with self._cond:
            kept = self._connection.on_close(callback)
        if not kept:
            callback()

    @property
    def closed(self) -> bool:
        """Whether the conversation is over: the server's stdout ended or broke the protocol."""
        return self._connection.closed

    def _receive(self, line: bytes) -> None:
        if self.on_line is not None:
            self.on_line(line)
        # Listeners and hooks run outside the lock: a mirror's hook takes the mirror's lock,
        # and a waiter holding that one may ask for this one.
        incoming: Optional[Incoming] = self._connection.receive(line)
        if incoming is None:
            if self._connection.failure is not None and not self._connection.closed:
                self._mark_closed()
            return
        with self._cond:
            self._connection.record(incoming)
            self._responses.update(incoming.responses)
            for notification in incoming.notifications:
                self.notifications.append(notification)
            self._cond.notify_all()

    # History and time travel (the server keeps `--history N` entries per store).

    def history(self, store: str, since: "int | None" = None, limit: "int | None" = None,
                timeout: float = 30) -> "Any":
        """`history/get`: `{store, first, version, entries}`, entries above version `since`
        oldest first; `first` is the oldest version whose state history still holds."""
        params: "dict[str, object]" = {"store": store}
        if since is not None:
            params["since"] = since
        if limit is not None:
            params["limit"] = limit
        return self.request("history/get", params, timeout=timeout)

    def state_at(self, store: str, version: int, path: "str | None" = None,
                 timeout: float = 30) -> "Any":
        """`state/get` at a past version: `{store, version, state}` as it was then."""
        params: "dict[str, object]" = {"store": store, "version": version}
        if path is not None:
            params["path"] = path
        return self.request("state/get", params, timeout=timeout)

    def rewind(self, store: str, version: int, timeout: float = 30) -> "Any":
        """`store/rewind`: the state at `version` becomes current as a new version."""
        return self.request("store/rewind", {"store": store, "version": version}, timeout=timeout)

    def advance(self, ms: int, timeout: float = 30) -> int:
        """`clock/advance` on a server with a virtual clock (`--clock virtual`): moves time by
        `ms` and returns the new time in ms, once every effect due by then has run and its
        patches were written."""
        return int(self.request("clock/advance", {"ms": ms}, timeout=timeout)["now"])

    def now(self, timeout: float = 30) -> int:
        """`clock/now`: the server's time in ms since it started (virtual or real)."""
        return int(self.request("clock/now", timeout=timeout)["now"])

    def skip(self, store: str, version: int, skipped: bool = True,
             timeout: float = 30) -> "Any":
        """`history/skip`: turn the action that made `version` off (or on again with
        `skipped=False`) and recompute the state from the actions that remain."""
        return self.request("history/skip", {"store": store, "version": version,
                                             "skipped": skipped}, timeout=timeout)

    def fork(self, store: str, version: "int | None" = None, as_: "str | None" = None,
             persist: "bool | None" = None, timeout: float = 30) -> "Any":
        """`store/fork`: a new store of the same feature, starting from `store`'s state at
        `version` (the current one when omitted), named `as_` (or by the server)."""
        return self.request("store/fork", fork_params(store, version, as_, persist),
                            timeout=timeout)

    def diff(self, store: str, other: str, timeout: float = 30) -> "Any":
        """`state/diff`: the RFC 6902 patch that turns `store`'s state into `other`'s."""
        return self.request("state/diff", {"store": store, "other": other}, timeout=timeout)

    def blame(self, store: str, path: str, limit: "int | None" = None,
              timeout: float = 30) -> "Any":
        """`state/blame`: the history entry that last changed the value at `path`, and the
        entries before it that touched it."""
        params: "dict[str, object]" = {"store": store, "path": path}
        if limit is not None:
            params["limit"] = limit
        return self.request("state/blame", params, timeout=timeout)
