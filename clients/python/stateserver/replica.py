"""The copy of a store's state that both mirrors keep: which patch fits which version, and how
a patch of the store's root lands on a copy of one subtree. No I/O and no waiting: `Mirror`
and `AsyncMirror` feed it the answers and patches they read and act on what it says."""
from typing import Any, Callable, Dict, Mapping, Optional

import jsonpatch  # type: ignore[import-untyped]  # no stubs; one call, checked by tests

#: `on_change(state, change)` of both mirrors: `change` has `reason` ("load", "patch" or
#: "resync"), `version`, `exists`, and for a patch its `from`, `to` and `patch`.
ChangeCallback = Callable[[Any, Dict[str, Any]], None]

#: What `state/get` of a path answers when the path has no value.
INVALID_PARAMS = -32602

#: `Replica.patch` says one of these.
SKIPPED = "skipped"  # not this replica's, already reflected, or before the first state
GAP = "gap"          # does not follow the copy (or does not fit it): fetch the state again
APPLIED = "applied"


class Replica:
    """The state of `store` (or of the subtree at `path`) at a version.

    `version` is the `to` of the last patch applied (or the version of the last state loaded);
    `current` the newest store version the copy is known to reflect, which for a path can pass
    `version`: a path's subscription gets no patch for versions that left its subtree alone.
    """

    def __init__(self, store: str, path: str = "") -> None:
        self.store = store
        self.path = path
        self.state: Any = None
        self.exists = False
        self.loaded = False
        self.version = -1
        self.current = -1
        # The oldest `from` the next patch may have. After a subscription's answer it is that
        # answer's version; after a plain `state/get` of a path the next patch may start at any
        # version since the subtree last changed, so 0.
        self.floor = 0
        # A fetch found the path absent, at no known version: the next patch is its `add`.
        self.absent_unknown = False
        self.patches = 0
        self.coalesced = 0

    def params(self) -> Dict[str, Any]:
        """The `store` and `path` params of this replica's requests."""
        return {"store": self.store, "path": self.path} if self.path else {"store": self.store}

    def load(self, result: Mapping[str, Any], subscription: bool) -> None:
        """Takes the state of a `state/subscribe` (`subscription`) or `state/get` answer, read
        exactly where it sits in the server's output: every earlier patch is already in it."""
        self.state, self.exists, self.loaded = result["state"], True, True
        self.absent_unknown = False
        self.version = result["version"]
        self.current = max(self.current, result["version"])
        self.floor = result["version"] if subscription or not self.path else 0

    def answer(self, response: Mapping[str, Any], subscription: bool, first: bool) -> Optional[str]:
        """Takes the answer of a fetch (`first`: the mirror's first), read exactly where it sits
        in the server's output. Returns the reason of the change ("load" or "resync"), or None
        for an error the fetch's caller raises; a resync of a path that is gone is a change."""
        if "error" in response:
            if first or not self.path or response["error"].get("code") != INVALID_PARAMS:
                return None
            self.lose_path()
            return "resync"
        self.load(response["result"], subscription)
        return "load" if first else "resync"

    def lose_path(self) -> None:
        """A fetch of the path found no value: absent until a patch adds it back."""
        self.state, self.exists, self.absent_unknown = None, False, True

    def reached(self, version: int) -> None:
        """A `state/get` showed the store at `version` with the copy still right."""
        self.current = max(self.current, version)

    def owns(self, message: Any) -> bool:
        """Whether `message` is a `state/patch` of this replica's store and path."""
        if not isinstance(message, dict) or message.get("method") != "state/patch":
            return False
        params = message.get("params")
        return (isinstance(params, dict) and params.get("store") == self.store
                and params.get("path", "") == self.path)

    def patch(self, params: Mapping[str, Any]) -> str:
        """Applies the `state/patch` params when they follow the copy: `APPLIED`, `SKIPPED` or
        `GAP` (the caller fetches the state again)."""
        if not self.loaded and not self.absent_unknown:
            return SKIPPED  # the first fetch's answer, still to come, covers it
        start, to = params["from"], params["to"]
        if not self.absent_unknown:
            if to <= self.current:
                return SKIPPED
            if not self.floor <= start <= self.current:
                return GAP
        document = {"root": self.state} if self.exists else {}
        try:
            operations = [self._rebase(op) for op in params["patch"]]
            document = jsonpatch.apply_patch(document, operations)
        except Exception:  # noqa: BLE001 - a patch that does not fit: the copy is not the server's
            return GAP
        # A `remove` of the subscribed path leaves no "root": the subtree is absent.
        self.exists = "root" in document
        self.state = document.get("root")
        self.absent_unknown = False
        self.loaded = True
        self.version = self.current = self.floor = to
        self.patches += 1
        if to > start + 1:
            self.coalesced += 1
        return APPLIED

    def _rebase(self, op: Mapping[str, Any]) -> Dict[str, Any]:
        """Paths are from the store's root; the copy sits under a wrapper key so replacing or
        removing the whole subtree is an ordinary operation."""
        rebased = dict(op, path=self._rebase_pointer(op["path"]))
        if isinstance(op.get("from"), str):
            rebased["from"] = self._rebase_pointer(op["from"])
        return rebased

    def _rebase_pointer(self, pointer: str) -> str:
        if pointer != self.path and not pointer.startswith(self.path + "/"):
            raise ValueError(f"patch path {pointer!r} is outside the mirrored {self.path!r}")
        return "/root" + pointer[len(self.path):]


class ReplicaView:
    """What both mirrors read straight from their replica (each says itself what its `version`
    means)."""

    _replica: Replica

    @property
    def state(self) -> Any:
        return self._replica.state

    @property
    def exists(self) -> bool:
        return self._replica.exists

    @property
    def patches(self) -> int:
        return self._replica.patches

    @property
    def coalesced(self) -> int:
        return self._replica.coalesced
