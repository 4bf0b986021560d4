"""The client's side of one conversation with stateserver, without I/O (in the manner of h11):
it frames bytes into lines, numbers and encodes requests, matches responses to the requests
that await them, calls listeners, records messages and knows when the conversation is over.

`Client` (threads) and `AsyncClient` (asyncio) are shells around it that only move bytes and
wait; what they read they hand to `receive`, what they must write `request` and `notification`
return. Neither shell locks for it: the sync shell calls it under its own lock where a waiter
reads what it changes."""
import itertools
import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from .errors import RPCError, ServerExited
from .log import MessageLog

Message = Any  # one parsed line: a dict, or a list for a batch
Listener = Callable[[Message], None]
Command = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]]
#: Called with a response when its line is read, before any later line is handled.
ResponseHook = Callable[[Dict[str, Any]], None]

#: How many messages `record=True` keeps (20,000 dispatches made 40,002 messages, ~68 MB).
DEFAULT_RECORD = 10_000

#: How many exceptions of listeners and change callbacks `listener_errors` keeps.
KEPT_LISTENER_ERRORS = 100

#: The last bytes of the server's stderr a client keeps for `stderr_text()` and its errors.
STDERR_TAIL_BYTES = 64 << 10

#: What this client speaks, as `initialize` tells the server by default: it reads `$/progress`,
#: sends and reads batches, and can drive a virtual clock (`advance`).
CLIENT_CAPABILITIES: Dict[str, bool] = {"progress": True, "batch": True, "clock": True}

#: Called with each `$/progress` value of a dispatch: `{kind: "begin" | "report" | "end", done,
#: total?, message?, cancelled?}` (`cancelled` on `end` only).
ProgressCallback = Callable[[Dict[str, Any]], None]


def default_command() -> List[str]:
    """`$STATESERVER_BIN` (else `stateserver` from PATH) with `--ephemeral`."""
    return [os.environ.get("STATESERVER_BIN", "stateserver"), "--ephemeral"]


def command_line(command: Optional[Command], args: Sequence[str]) -> List[str]:
    """The argv of `spawn(command, *args)`: `command` a program or a list, by default
    `default_command()`."""
    if command is None:
        command = default_command()
    elif isinstance(command, (str, os.PathLike)):
        command = [command]
    return [os.fspath(part) for part in command] + list(args)


def record_capacity(record: Union[bool, int]) -> int:
    """`record` as a number of messages: False/0 none, True `DEFAULT_RECORD`."""
    if record is True:
        return DEFAULT_RECORD
    return int(record or 0)


def id_key(id: Any) -> str:
    """A response's id as a dictionary key: its JSON text, so `1` and `"1"` stay apart."""
    return json.dumps(id)


def result_of(response: Dict[str, Any]) -> Any:
    """The result of a response; an error response raises `RPCError`."""
    if "error" in response:
        raise RPCError(response["error"])
    return response["result"]


class Framer:
    """Splits the bytes read from the server into lines. `finish()` at the end of the stream
    returns a last line that had no newline (a server bug the schema check reports), through
    the same path as every other line."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> List[bytes]:
        *lines, self._buffer = (self._buffer + data).split(b"\n")
        return lines

    def finish(self) -> List[bytes]:
        lines = self.feed(b"\n") if self._buffer else []
        return lines


class Incoming:
    """One message read: the responses among it (a batch holds several), keyed by `id_key`,
    and its notifications, in order."""

    def __init__(self, message: Message) -> None:
        self.message = message
        self.responses: List[Tuple[str, Dict[str, Any]]] = []
        self.notifications: List[Dict[str, Any]] = []
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            if "method" in item:
                self.notifications.append(item)
            elif "id" in item:
                self.responses.append((id_key(item["id"]), item))


#: The phases of a conversation, in order. `initialize` is optional (without it the server
#: behaves as after one with the defaults), so a conversation starts `OPEN`, not waiting for it.
OPEN = "open"
INITIALIZED = "initialized"      # an `initialize` was answered (`Connection.server` holds it)
SHUTTING_DOWN = "shutting down"  # a `shutdown` was sent: the server refuses other requests
OVER = "over"                    # the server's output ended or broke the protocol


class Connection:
    """The conversation's state: `phase` goes from `OPEN` (or `INITIALIZED`) to `SHUTTING_DOWN`
    and `OVER` once the server's output ended or broke the protocol (`failure` says how). A
    line that is not JSON ends it: later lines are drained and ignored, and every waiter is
    told `ServerExited`."""

    def __init__(self, record: Union[bool, int] = False) -> None:
        self.messages = MessageLog(record_capacity(record))
        self.listener_errors: List[Tuple[Message, Exception]] = []
        self.listeners: List[Listener] = []
        self.phase = OPEN
        self.failure: Optional[str] = None
        #: The result of the last answered `initialize` (protocol version, server, capabilities).
        self.server: Optional[Dict[str, Any]] = None
        self._ids = itertools.count(1)
        self._hooks: Dict[str, ResponseHook] = {}
        self._initializing: Set[str] = set()
        self._close_callbacks: List[Callable[[], None]] = []
        self._progress_ids = itertools.count(1)
        self._progress: Dict[str, ProgressCallback] = {}

    @property
    def closed(self) -> bool:
        return self.phase == OVER

    # Sending

    def next_id(self) -> int:
        return next(self._ids)

    @staticmethod
    def encode(message: Message) -> bytes:
        """One JSON-RPC message (or a list: a batch) as a compact line."""
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"

    @staticmethod
    def line(line: Union[str, bytes]) -> bytes:
        """A raw line as bytes, with its newline."""
        data = line.encode() if isinstance(line, str) else line
        return data if data.endswith(b"\n") else data + b"\n"

    def request(self, method: str, params: Any = None, id: Any = None,
                on_response: Optional[ResponseHook] = None) -> Tuple[Any, bytes]:
        """The id (the next one unless given) and the line of a request. `on_response` runs
        when its response is read, before any later line is handled."""
        id = self.next_id() if id is None else id
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        if on_response is not None:
            self._hooks[id_key(id)] = on_response
        if method == "initialize":
            self._initializing.add(id_key(id))
        elif method == "shutdown" and self.phase != OVER:
            self.phase = SHUTTING_DOWN
        return id, self.encode(message)

    def notification(self, method: str, params: Any = None) -> bytes:
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        return self.encode(message)

    def initialize_params(self, capabilities: Optional[Mapping[str, bool]] = None,
                          **params: Any) -> Dict[str, Any]:
        """`initialize`'s params: `params` as given (`subscribe`, `clock`, `client`,
        `protocolVersion`) and `capabilities`, by default everything this client speaks."""
        message = {key: value for key, value in params.items() if value is not None}
        message["capabilities"] = dict(CLIENT_CAPABILITIES if capabilities is None
                                       else capabilities)
        return message

    @property
    def speaks_progress(self) -> bool:
        """Whether the server agreed to send `$/progress` (`initialize` said so)."""
        capabilities = (self.server or {}).get("capabilities") or {}
        return capabilities.get("progress") is True

    def dispatch_params(self, store: str, action: Mapping[str, Any], wait: Optional[str],
                        on_progress: Optional[ProgressCallback]) -> Dict[str, Any]:
        """`dispatch`'s params; with `on_progress`, a new `progressToken` whose `$/progress`
        values go to it until its `end`. Progress needs a server that agreed to it in
        `initialize`: without that it would never come, so that is an error here."""
        params: Dict[str, Any] = {"store": store, "action": action}
        if wait is not None:
            params["wait"] = wait
        if on_progress is not None:
            if not self.speaks_progress:
                raise ValueError(
                    "on_progress needs a server that agreed to send progress: call "
                    "initialize() first (its capabilities include progress by default)")
            token = f"progress-{next(self._progress_ids)}"
            self._progress[token] = on_progress
            params["progressToken"] = token
        return params

    @property
    def progress_tokens(self) -> "frozenset[str]":
        """The tokens of the dispatches whose progress callback is still kept: each leaves with
        its `end`, which the server sends once the work ended (also when nothing reported), or
        when its dispatch failed or the conversation ended."""
        return frozenset(self._progress)

    def forget_progress(self, params: Mapping[str, Any]) -> None:
        """The dispatch with these params failed: its progress will never come."""
        token = params.get("progressToken")
        if isinstance(token, str):
            self._progress.pop(token, None)

    def forget(self, id: Any) -> None:
        """The request `id` is no longer awaited (timed out or cancelled): its hook is dropped."""
        self._hooks.pop(id_key(id), None)
        self._initializing.discard(id_key(id))

    # Receiving

    def receive(self, line: bytes) -> Optional[Incoming]:
        """Handles one line: listeners, then the hooks of the responses in it. None when the
        line is not a message: the conversation is already over, or this line ends it (then
        the shell calls `end`, which `failure` already explains)."""
        if self.failure is not None:
            return None  # the conversation is over; only drain so the server never blocks
        try:
            message = json.loads(line)
        except ValueError as error:
            self.failure = f"the server wrote a line that is not JSON ({error}): {line[:200]!r}"
            return None
        incoming = Incoming(message)
        for listener in list(self.listeners):
            try:
                listener(message)
            except Exception as error:  # noqa: BLE001 - one bad listener must not stop reading
                self.report_listener_error(message, error)
        for notification in incoming.notifications:
            if notification.get("method") == "$/progress":
                self._report_progress(notification)
        for key, response in incoming.responses:
            if key in self._initializing:
                self._initializing.discard(key)
                if "result" in response and self.phase in (OPEN, INITIALIZED):
                    self.phase, self.server = INITIALIZED, response["result"]
            hook = self._hooks.pop(key, None)
            if hook is not None:
                try:
                    hook(response)
                except Exception as error:  # noqa: BLE001 - reported, reading goes on
                    self.report_listener_error(response, error)
        return incoming

    def _report_progress(self, notification: Dict[str, Any]) -> None:
        params = notification.get("params") or {}
        token, value = params.get("token"), params.get("value") or {}
        if not isinstance(token, str) or token not in self._progress:
            return
        callback = self._progress[token]
        if value.get("kind") == "end":
            del self._progress[token]
        try:
            callback(value)
        except Exception as error:  # noqa: BLE001 - reported, reading goes on
            self.report_listener_error(notification, error)

    def record(self, incoming: Incoming) -> None:
        self.messages.append(incoming.message)

    def end(self) -> List[Callable[[], None]]:
        """Marks the conversation over; the `on_close` callbacks the shell must now call (once:
        none on a later call)."""
        if self.closed:
            return []
        self.phase = OVER
        self._hooks.clear()
        self._initializing.clear()
        self._progress.clear()
        callbacks, self._close_callbacks = self._close_callbacks, []
        return callbacks

    def on_close(self, callback: Callable[[], None]) -> bool:
        """Keeps `callback` for `end`; False when the conversation is already over (call it now)."""
        if self.closed:
            return False
        self._close_callbacks.append(callback)
        return True

    def add_listener(self, listener: Listener) -> None:
        self.listeners.append(listener)

    def remove_listener(self, listener: Listener) -> None:
        try:
            self.listeners.remove(listener)
        except ValueError:  # never added, or already removed
            pass

    def report_listener_error(self, message: Message, error: Exception) -> None:
        """Keeps a callback's exception in `listener_errors` (the last 100)."""
        self.listener_errors.append((message, error))
        del self.listener_errors[:-KEPT_LISTENER_ERRORS]

    def exited(self, waiting_for: str, hint: str = "") -> ServerExited:
        """The error for a waiter whose answer will never come."""
        why = self.failure or "the server exited"
        return ServerExited(f"{why} before {waiting_for}{hint}")


def fork_params(store: str, version: "int | None", as_: "str | None",
                 persist: "bool | None") -> "dict[str, object]":
    """`store/fork`'s params, members left out when not given."""
    params: "dict[str, object]" = {"store": store}
    if version is not None:
        params["version"] = version
    if as_ is not None:
        params["as"] = as_
    if persist is not None:
        params["persist"] = persist
    return params
