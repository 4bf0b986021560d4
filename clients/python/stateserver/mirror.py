"""A local copy of a store's state, kept by applying the server's patches."""
import copy
import threading

import jsonpatch


class Mirror:
    """Mirrors the state of `store` (or the subtree at `path`) on `client`.

    On creation it subscribes (`state/subscribe`), which returns the state and its version;
    then each `state/patch` for the subscription is applied when its `from` equals the mirror's
    version. A patch from another version (a gap, or an old patch crossing the subscription's
    answer) triggers the resync rule: `state/get`, then carry on. `resyncs` counts them.
    Patches are applied on the client's reader thread; `sync()` waits for a given version.
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
        self.version = -1
        client.add_listener(self._on_message)
        params = {"store": store}
        if path:
            params["path"] = path
        result = client.request("state/subscribe" if subscribe else "state/get", params)
        with self._cond:
            if result["version"] >= self.version:
                self.state, self.version = result["state"], result["version"]

    def _on_message(self, message):
        if not isinstance(message, dict) or message.get("method") != "state/patch":
            return
        params = message["params"]
        if params["store"] != self.store or params.get("path", "") != self.path:
            return
        with self._cond:
            if params["to"] <= self.version:
                return  # already reflected (the subscription's answer carried a newer state)
            if params["from"] != self.version:
                self._gap = True
                self._cond.notify_all()
                return
            document = {"root": self.state}
            operations = [dict(op, path=self._rebase(op["path"])) for op in params["patch"]]
            for op in operations:
                if "from" in op:
                    op["from"] = self._rebase(op["from"])
            self.state = jsonpatch.apply_patch(document, operations)["root"]
            self.version = params["to"]
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
        params = {"store": self.store}
        if self.path:
            params["path"] = self.path
        result = self.client.request("state/get", params)
        with self._cond:
            self.resyncs += 1
            self._gap = False
            if result["version"] >= self.version:
                self.state, self.version = copy.deepcopy(result["state"]), result["version"]

    def sync(self, version, timeout=30):
        """Waits until the mirror reaches `version` (resyncing if a gap is seen)."""
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self.version >= version or self._gap, timeout)
                if self.version >= version:
                    return self.state
                if not self._gap:
                    raise TimeoutError(f"mirror of {self.store} stuck at {self.version} < {version}")
            self.resync()
