"""A local copy of a store's state, kept by applying the server's patches."""
import copy
import threading
import time
from typing import Any, Callable, Dict, Optional

import jsonpatch  # type: ignore[import-untyped]  # no stubs; one call, checked by tests

from .client import Client, Message
from .errors import RPCError, ServerExited

#: `on_change(state, change)`: `change` has `reason` ("load", "patch" or "resync"), `version`,
#: `exists`, and for a patch its `from`, `to` and `patch`.
ChangeCallback = Callable[[Any, Dict[str, Any]], None]


class Mirror:
    """Mirrors the state of `store` (or the subtree at `path`) on `client`.

    On creation it subscribes (`state/subscribe`), which returns the state and its version;
    then each `state/patch` for the subscription is applied when its `from` equals the mirror's
    version. A patch from another version (a gap, or an old patch crossing the subscription's
    answer) triggers the resync rule: `state/get`, then carry on. `resyncs` counts them.
    Patches are applied on the client's reader thread; `sync()` waits for a given version.

    A path's subtree can disappear (a `remove` of the path) and come back (an `add`): while it
    is absent `exists` is False and `state` is None. `version` is the `to` of the last patch
    the subscription got; a path subscription skips versions that left its subtree alone.

    `on_change(state, change)` is called after every change of `state` (the first load, each
    patch, each resync), on the reader thread for patches: keep it short, and hand work to
    your own thread. An exception it raises is kept in `client.listener_errors`.
    `wait_until(predicate)` waits for a state that satisfies a predicate.
    """

    def __init__(self, client: Client, store: str, path: str = "", subscribe: bool = True,
                 on_change: Optional[ChangeCallback] = None) -> None:
        self.client = client
        self.on_change = on_change
        self.store = store
        self.path = path
        self.resyncs = 0
        self.patches = 0
        self.coalesced = 0
        self._gap = False
        self._cond = threading.Condition()
        self.state: Any = None
        self.exists = True
        self.version = -1
        # The newest store version the mirror is known to reflect (>= version for a path).
        self._current = -1
        # After a resync found the path absent (no version known): the next patch is its `add`.
        self._absent_unknown = False
        client.add_listener(self._on_message)
        client.on_close(self._wake)
        params: Dict[str, Any] = {"store": store}
        if path:
            params["path"] = path
        result = client.request("state/subscribe" if subscribe else "state/get", params)
        with self._cond:
            loaded = result["version"] >= self.version
            if loaded:
                self.state, self.version = result["state"], result["version"]
                self.exists = True
            self._current = max(self._current, result["version"])
        if loaded:
            self._changed({"reason": "load"})

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _changed(self, change: Dict[str, Any]) -> None:
        """Tells `on_change`, outside the lock (a callback may read the mirror or wait)."""
        if self.on_change is None:
            return
        with self._cond:
            state, change = self.state, dict(change, version=self.version, exists=self.exists)
        try:
            self.on_change(state, change)
        except Exception as error:  # noqa: BLE001 - a bad callback must not stop the mirror
            self.client.report_listener_error(change, error)

    def _params(self) -> Dict[str, Any]:
        params = {"store": self.store}
        if self.path:
            params["path"] = self.path
        return params

    def _on_message(self, message: Message) -> None:
        if not isinstance(message, dict) or message.get("method") != "state/patch":
            return
        params = message["params"]
        if params["store"] != self.store or params.get("path", "") != self.path:
            return
        with self._cond:
            if params["to"] <= self.version:
                return  # already reflected (the subscription's answer carried a newer state)
            # `from` may pass the last patch's `to` when a `state/get` showed the mirror current
            # up to `from` (a path subscription skips versions that left its subtree alone).
            if not (self.version <= params["from"] <= self._current or self._absent_unknown):
                self._gap = True
                self._cond.notify_all()
                return
            document = {"root": self.state} if self.exists else {}
            operations = [dict(op, path=self._rebase(op["path"])) for op in params["patch"]]
            for op in operations:
                if "from" in op:
                    op["from"] = self._rebase(op["from"])
            document = jsonpatch.apply_patch(document, operations)
            # A `remove` of the subscribed path leaves no "root": the subtree is absent.
            self.exists = "root" in document
            self.state = document.get("root")
            self.version = params["to"]
            self._current = max(self._current, self.version)
            self._absent_unknown = False
            self.patches += 1
            if params["to"] > params["from"] + 1:
                self.coalesced += 1
            self._cond.notify_all()
        self._changed({"reason": "patch", "from": params["from"], "to": params["to"],
                       "patch": params["patch"]})

    def _rebase(self, pointer: str) -> str:
        """Paths are from the store's root; the mirror holds the subtree at `path` under a
        wrapper key so a whole-subtree replacement is an ordinary operation."""
        assert pointer.startswith(self.path), f"{pointer} is outside {self.path}"
        return "/root" + pointer[len(self.path):]

    def resync(self) -> None:
        try:
            result = self.client.request("state/get", self._params())
        except RPCError as error:
            if error.code != -32602 or not self.path:
                raise
            result = None  # the subscribed path has no value now
        with self._cond:
            self.resyncs += 1
            self._gap = False
            if result is None:
                self.exists, self.state, self._absent_unknown = False, None, True
            elif result["version"] >= self.version:
                self.state, self.version = copy.deepcopy(result["state"]), result["version"]
                self.exists = True
                self._current = max(self._current, self.version)
                self._absent_unknown = False
        self._changed({"reason": "resync"})

    def sync(self, version: Optional[int] = None, timeout: float = 30) -> Any:
        """Waits until the mirror reflects `version` of the store (default: its version now),
        resyncing if a gap is seen; returns the state.

        A path subscription gets no patch for versions that left its subtree alone, so the
        mirror may never reach `version` itself: then a `state/get` tells. Its answer follows
        every patch written before it, and the reader applies those first, so once it arrives
        the mirror is as new as the version it carries."""
        deadline = time.monotonic() + timeout
        asked = False
        while True:
            with self._cond:
                gap = self._gap
                if not gap and version is not None and self._current >= version:
                    return self.state
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
                        if self.exists:
                            self._gap = True  # the mirror missed its removal: resync
                            continue
                        return self.state
                    self._current = max(self._current, reached)
                    if version is None:
                        version = reached
                continue
            assert version is not None  # the first pass asked the store for it
            with self._cond:
                target = version
                if not self._cond.wait_for(
                        lambda: self._current >= target or self._gap or self.client.closed,
                        remaining):
                    raise TimeoutError(
                        f"mirror of {self.store}{self.path} stuck at {self.version} < {version}"
                        f"{self.client._stderr_hint()}")
                if self._current < target and not self._gap:
                    raise ServerExited(
                        f"the server exited with the mirror of {self.store}{self.path} at "
                        f"{self.version} < {version}{self.client._stderr_hint()}")

    def _store_version(self, timeout: float) -> Optional[int]:
        """The store's version from `state/get` of the path; None when the path is absent."""
        try:
            version: int = self.client.request("state/get", self._params(),
                                               timeout=timeout)["version"]
            return version
        except RPCError as error:
            if error.code != -32602 or not self.path:
                raise
            return None

    def wait_until(self, predicate: Callable[[Any], bool], timeout: float = 30) -> Any:
        """Waits until `predicate(state)` holds, checking each state the mirror reaches;
        returns that state. `TimeoutError` quotes the last state; `ServerExited` at once when
        the server is gone."""
        deadline = time.monotonic() + timeout
        while True:
            with self._cond:
                gap = self._gap
                if not gap and self.exists and predicate(self.state):
                    return self.state
                if not gap:
                    if self.client.closed:
                        raise ServerExited(
                            f"the server exited while waiting on {self.store}{self.path}; "
                            f"last state (version {self.version}): {self.state!r}")
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise TimeoutError(
                            f"{self.store}{self.path} never satisfied the predicate within "
                            f"{timeout}s; last state (version {self.version}): "
                            f"{self.state!r}{self.client._stderr_hint()}")
                    self._cond.wait(remaining)
                    continue
            self.resync()
