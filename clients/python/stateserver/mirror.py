"""A local copy of a store's state, kept by applying the server's patches."""
import threading
import time
from typing import Any, Callable, Dict, Optional, Protocol

from .connection import Message, ResponseHook
from .errors import RPCError, ServerExited
from .replica import APPLIED, GAP, INVALID_PARAMS, SKIPPED, ChangeCallback, Replica, ReplicaView

__all__ = ["ChangeCallback", "Mirror", "MirrorClient"]



class MirrorClient(Protocol):
    """What a `Mirror` uses of its `Client` (named here so that this module does not import
    the client's, which imports this one)."""

    @property
    def closed(self) -> bool: ...

    def request_raw(self, method: str, params: Any = None, id: Any = None,
                    timeout: float = 30,
                    on_response: Optional[ResponseHook] = None) -> Dict[str, Any]: ...

    def add_listener(self, listener: Callable[[Message], None]) -> None: ...

    def on_close(self, callback: Callable[[], None]) -> None: ...

    def report_listener_error(self, message: Message, error: Exception) -> None: ...

    def _stderr_hint(self) -> str: ...


class Mirror(ReplicaView):
    """Mirrors the state of `store` (or the subtree at `path`) on `client`.

    On creation it subscribes (`state/subscribe`), which returns the state and its version; the
    answer takes effect exactly where it sits in the server's output, and each later
    `state/patch` of the subscription is applied when its `from` fits the mirror's version. Any
    other `from`, or a patch that does not fit the copy, is a gap: the resync rule fetches the
    state again (`state/get`) and carries on; `resyncs` counts them. Patches are applied on the
    client's reader thread; `sync()` waits for a given version.

    A path's subtree can disappear (a `remove` of the path) and come back (an `add`): while it
    is absent `exists` is False and `state` is None. `version` is the `to` of the last patch
    the subscription got; a path subscription skips versions that left its subtree alone.

    `on_change(state, change)` is called after every change of `state` (the first load, each
    patch, each resync), on the reader thread: keep it short, and hand work to your own thread.
    An exception it raises is kept in `client.listener_errors`.
    `wait_until(predicate)` waits for a state that satisfies a predicate.
    """

    def __init__(self, client: MirrorClient, store: str, path: str = "", subscribe: bool = True,
                 on_change: Optional[ChangeCallback] = None) -> None:
        self.client = client
        self.on_change = on_change
        self.store = store
        self.path = path
        self.resyncs = 0
        # Changed by the reader thread (patches, answers), read by waiters: under `_cond`.
        self._replica = Replica(store, path)
        self._gap = False
        self._cond = threading.Condition()
        client.add_listener(self._on_message)
        client.on_close(self._wake)
        method = "state/subscribe" if subscribe else "state/get"
        response = client.request_raw(method, self._replica.params(),
                                      on_response=self._answer(subscribe, "load"))
        if "error" in response:
            raise RPCError(response["error"])

    @property
    def version(self) -> int:
        return self._replica.version

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _changed(self, change: Dict[str, Any]) -> None:
        """Tells `on_change`, outside the lock (a callback may read the mirror or wait)."""
        if self.on_change is None:
            return
        with self._cond:
            state = self._replica.state
            change = dict(change, version=self._replica.version, exists=self._replica.exists)
        try:
            self.on_change(state, change)
        except Exception as error:  # noqa: BLE001 - a bad callback must not stop the mirror
            self.client.report_listener_error(change, error)

    def _answer(self, subscription: bool, reason: str) -> ResponseHook:
        """Takes a fetch's answer on the reader thread, where it sits among the patches."""
        def taken(response: Dict[str, Any]) -> None:
            with self._cond:
                change = self._replica.answer(response, subscription, first=reason == "load")
                if change is None:
                    return  # an error: the caller raises it
                self._gap = False
                self._cond.notify_all()
            self._changed({"reason": change})
        return taken

    def _on_message(self, message: Message) -> None:
        if not self._replica.owns(message):
            return
        params = message["params"]
        with self._cond:
            verdict = self._replica.patch(params)
            if verdict == SKIPPED:
                return
            self._gap = self._gap or verdict == GAP
            self._cond.notify_all()
        if verdict == APPLIED:
            self._changed({"reason": "patch", "from": params["from"], "to": params["to"],
                           "patch": params["patch"]})

    def resync(self) -> None:
        """Fetches the state again with `state/get` (what a gap does by itself)."""
        response = self.client.request_raw("state/get", self._replica.params(),
                                           on_response=self._answer(False, "resync"))
        with self._cond:
            self.resyncs += 1
        if "error" in response and not (
                self.path and response["error"].get("code") == INVALID_PARAMS):
            raise RPCError(response["error"])

    def sync(self, version: Optional[int] = None, timeout: float = 30) -> Any:
        """Waits until the mirror reflects `version` of the store (default: its version now),
        resyncing if a gap is seen; returns the state.

        A path subscription gets no patch for versions that left its subtree alone, so the
        mirror may never reach `version` itself: then a `state/get` tells. Its answer follows
        every patch written before it, and the reader applies those first, so once it arrives
        the mirror is as new as the version it carries."""
        deadline = time.monotonic() + timeout
        asked = False
        replica = self._replica
        while True:
            with self._cond:
                gap = self._gap
                if not gap and version is not None and replica.current >= version:
                    return replica.state
            if gap:
                self.resync()
                continue
            remaining = max(deadline - time.monotonic(), 0)
            if not asked and (version is None or self.path):
                asked = True
                reached = self._store_version(remaining)
                with self._cond:
                    if self._gap:
                        continue
                    if reached is None:  # the path has no value now
                        if replica.exists:
                            self._gap = True  # the mirror missed its removal: resync
                            continue
                        return replica.state
                    if not replica.exists:
                        self._gap = True  # the mirror missed the path's return: resync
                        continue
                    replica.reached(reached)
                    if version is None:
                        version = reached
                continue
            assert version is not None  # the first pass asked the store for it
            with self._cond:
                target = version
                if not self._cond.wait_for(
                        lambda: replica.current >= target or self._gap or self.client.closed,
                        remaining):
                    raise TimeoutError(
                        f"mirror of {self.store}{self.path} stuck at {replica.version} < "
                        f"{version}{self.client._stderr_hint()}")
                if replica.current < target and not self._gap:
                    raise ServerExited(
                        f"the server exited with the mirror of {self.store}{self.path} at "
                        f"{replica.version} < {version}{self.client._stderr_hint()}")

    def _store_version(self, timeout: float) -> Optional[int]:
        """The store's version from `state/get` of the path; None when the path is absent."""
        response = self.client.request_raw("state/get", self._replica.params(), timeout=timeout)
        if "error" in response:
            if response["error"].get("code") != INVALID_PARAMS or not self.path:
                raise RPCError(response["error"])
            return None
        version: int = response["result"]["version"]
        return version

    def wait_until(self, predicate: Callable[[Any], bool], timeout: float = 30) -> Any:
        """Waits until `predicate(state)` holds, checking each state the mirror reaches;
        returns that state. `TimeoutError` quotes the last state; `ServerExited` at once when
        the server is gone."""
        deadline = time.monotonic() + timeout
        replica = self._replica
        while True:
            with self._cond:
                gap = self._gap
                if not gap and replica.exists and predicate(replica.state):
                    return replica.state
                if not gap:
                    if self.client.closed:
                        raise ServerExited(
                            f"the server exited while waiting on {self.store}{self.path}; "
                            f"last state (version {replica.version}): {replica.state!r}")
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError(
                            f"{self.store}{self.path} never satisfied the predicate within "
                            f"{timeout}s; last state (version {replica.version}): "
                            f"{replica.state!r}{self.client._stderr_hint()}")
                    self._cond.wait(remaining)
                    continue
            self.resync()
