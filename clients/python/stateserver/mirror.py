"""A local copy of a store's state, kept by applying the server's patches."""
import copy
import threading
import time

import jsonpatch

from .client import RPCError


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
    """

    def __init__(self, client, store, path="", subscribe=True):
        self.client = client
        self.store = store
        self.path = path
        self.resyncs = 0
        self.patches = 0
        self.coalesced = 0
        self._gap = False
        self._cond = threading.Condition()
        self.state = None
        self.exists = True
        self.version = -1
        # The newest store version the mirror is known to reflect (>= version for a path).
        self._current = -1
        # After a resync found the path absent (no version known): the next patch is its `add`.
        self._absent_unknown = False
        client.add_listener(self._on_message)
        params = {"store": store}
        if path:
            params["path"] = path
        result = client.request("state/subscribe" if subscribe else "state/get", params)
        with self._cond:
            if result["version"] >= self.version:
                self.state, self.version = result["state"], result["version"]
                self.exists = True
            self._current = max(self._current, result["version"])

    def _params(self):
        params = {"store": self.store}
        if self.path:
            params["path"] = self.path
        return params

    def _on_message(self, message):
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

    def _rebase(self, pointer):
        """Paths are from the store's root; the mirror holds the subtree at `path` under a
        wrapper key so a whole-subtree replacement is an ordinary operation."""
        assert pointer.startswith(self.path), f"{pointer} is outside {self.path}"
        return "/root" + pointer[len(self.path):]

    def resync(self):
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

    def sync(self, version=None, timeout=30):
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
            with self._cond:
                if not self._cond.wait_for(
                        lambda: self._current >= version or self._gap, remaining):
                    raise TimeoutError(
                        f"mirror of {self.store}{self.path} stuck at {self.version} < {version}")

    def _store_version(self, timeout):
        """The store's version from `state/get` of the path; None when the path is absent."""
        try:
            return self.client.request("state/get", self._params(), timeout=timeout)["version"]
        except RPCError as error:
            if error.code != -32602 or not self.path:
                raise
            return None
