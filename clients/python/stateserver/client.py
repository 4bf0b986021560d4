"""A client that spawns stateserver and talks to it over its stdin/stdout."""
import itertools
import json
import os
import subprocess
import threading
import time
from collections import deque


class RPCError(Exception):
    """A JSON-RPC error response: `code`, `message` and `data` as the server sent them."""

    def __init__(self, error):
        self.code = error.get("code")
        self.message = error.get("message")
        self.data = error.get("data")
        super().__init__(f"{self.code} {self.message}: {self.data}")


class ServerExited(Exception):
    """The server closed stdout before the awaited message arrived."""


class Client:
    """One stateserver process.

    A reader thread parses every line the server writes. Responses resolve the request that
    carried their id; every message (responses included) is also appended, in order, to
    `messages`, which tests and `wait_for` read. `on_line(bytes)` sees each raw line first.

    When the process's stderr is a pipe (the default of `spawn`), another thread drains it at
    once, keeping the last `STDERR_TAIL_BYTES` for `stderr_text()` and for the messages of
    timeouts: a pipe nobody reads fills after ~64 KiB of logs and then blocks the server.
    """

    STDERR_TAIL_BYTES = 64 << 10

    def __init__(self, process, on_line=None):
        self.process = process
        self.on_line = on_line
        self.messages = []          # every parsed line, in arrival order
        self.notifications = []     # server notifications only
        self.listener_errors = []   # (message, exception) a listener raised; reading went on
        self._responses = {}        # id (as JSON text) -> response
        self._cond = threading.Condition()
        self._ids = itertools.count(1)
        self._listeners = []
        self._closed = False
        self._reading = threading.Event()
        self._reading.set()
        self._write_lock = threading.Lock()
        self._stderr_tail = bytearray()
        self._stderr_lock = threading.Lock()
        self._stderr_thread = None
        if process.stderr is not None:
            self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
            self._stderr_thread.start()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    @classmethod
    def spawn(cls, command=None, *args, env=None, stderr=None, on_line=None):
        """Starts the server. `command` is a list (program and arguments) or a program path;
        by default `$STATESERVER_BIN` or `stateserver` from PATH with `--ephemeral`.

        `stderr`: by default a pipe that the client drains (see `stderr_text()`); pass
        `subprocess.DEVNULL`, a file, or a descriptor (`2`: this process's stderr) instead."""
        if command is None:
            command = [os.environ.get("STATESERVER_BIN", "stateserver"), "--ephemeral"]
        elif isinstance(command, (str, os.PathLike)):
            command = [command]
        process = subprocess.Popen(
            list(command) + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.PIPE, env=env, bufsize=0)
        return cls(process, on_line=on_line)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # Sending

    def send_line(self, line):
        """Writes one raw line (str or bytes); a newline is added when missing."""
        if isinstance(line, str):
            line = line.encode()
        if not line.endswith(b"\n"):
            line += b"\n"
        self.send_bytes(line)

    def send_bytes(self, data):
        with self._write_lock:
            self.process.stdin.write(data)
            self.process.stdin.flush()

    def send(self, message):
        """Writes one JSON-RPC message (or a list: a batch) as a compact line."""
        self.send_line(json.dumps(message, separators=(",", ":")))

    def next_id(self):
        return next(self._ids)

    def request_raw(self, method, params=None, id=None, timeout=30):
        """Sends a request and returns the whole response object (result or error)."""
        id = self.next_id() if id is None else id
        message = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        with self._cond:
            self._responses.pop(json.dumps(id), None)  # an older answer to a reused id
        self.send(message)
        return self.response(id, timeout=timeout)

    def request(self, method, params=None, id=None, timeout=30):
        """Sends a request and returns its result; an error response raises RPCError."""
        response = self.request_raw(method, params, id=id, timeout=timeout)
        if "error" in response:
            raise RPCError(response["error"])
        return response["result"]

    def notify(self, method, params=None):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def dispatch(self, store, action, wait=None, notify=False, id=None, timeout=30):
        """Sends an action to a store; returns `{store, version}` (None when `notify`)."""
        params = {"store": store, "action": action}
        if wait is not None:
            params["wait"] = wait
        if notify:
            self.notify("dispatch", params)
            return None
        return self.request("dispatch", params, id=id, timeout=timeout)

    def close(self, timeout=30):
        """Closes stdin (a normal shutdown for the server) and returns its exit status."""
        if not self.process.stdin.closed:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        self.resume()
        status = self.process.wait(timeout=timeout)
        self._thread.join(timeout=timeout)
        if self._stderr_thread is not None:
            self._stderr_thread.join(timeout=timeout)
        return status

    def stderr_text(self):
        """The last `STDERR_TAIL_BYTES` the server wrote on stderr (when the client drains it)."""
        with self._stderr_lock:
            return self._stderr_tail.decode(errors="replace")

    def _stderr_hint(self):
        tail = self.stderr_text()[-2000:]
        return f"; server stderr ends with:\n{tail}" if tail else ""

    # Receiving

    def response(self, id, timeout=30):
        """Waits for the response carrying `id` (also found inside batch arrays)."""
        key = json.dumps(id)
        with self._cond:
            if not self._cond.wait_for(lambda: key in self._responses or self._closed, timeout):
                raise TimeoutError(
                    f"no response with id {id!r} within {timeout}s{self._stderr_hint()}")
            if key not in self._responses:
                raise ServerExited(
                    f"the server exited before answering id {id!r}{self._stderr_hint()}")
            return self._responses.pop(key)

    def wait_for(self, predicate, timeout=30, start=0):
        """Waits until a message from index `start` on satisfies `predicate`; returns it."""
        with self._cond:
            found = []

            def check():
                for message in self.messages[start:]:
                    if predicate(message):
                        found.append(message)
                        return True
                return self._closed

            if not self._cond.wait_for(check, timeout):
                raise TimeoutError(f"no matching message{self._stderr_hint()}")
            if not found:
                raise ServerExited(
                    f"the server exited before the awaited message{self._stderr_hint()}")
            return found[0]

    def wait_closed(self, timeout=30):
        with self._cond:
            self._cond.wait_for(lambda: self._closed, timeout)
            return self._closed

    def add_listener(self, listener):
        """Calls `listener(message)` on the reader thread for every later message."""
        self._listeners.append(listener)

    def pause(self):
        """Stops reading stdout (the server's writes then block): a slow client on purpose."""
        self._reading.clear()

    def resume(self):
        self._reading.set()

    def _drain_stderr(self):
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

    def _read(self):
        stream = self.process.stdout
        buffer = b""
        while True:
            self._reading.wait()
            chunk = os.read(stream.fileno(), 1 << 16)
            if not chunk:
                break
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                self._receive(line)
        if buffer:
            self._receive(buffer)  # a last line without newline (a bug the schema check reports)
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def _receive(self, line):
        if self.on_line is not None:
            self.on_line(line)
        message = json.loads(line)
        for listener in list(self._listeners):
            try:
                listener(message)
            except Exception as error:  # noqa: BLE001 - one bad listener must not stop reading
                self.listener_errors.append((message, error))
        with self._cond:
            self.messages.append(message)
            replies = message if isinstance(message, list) else [message]
            for reply in replies:
                if isinstance(reply, dict) and "id" in reply and "method" not in reply:
                    self._responses[json.dumps(reply["id"])] = reply
                elif isinstance(reply, dict) and "method" in reply:
                    self.notifications.append(reply)
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
