"""A store of a known feature, its actions, state and events typed by the generated bindings.

`stateserver codegen --lang python --out DIR` writes `features.py`, whose `store(client,
feature)` returns a `TypedStore` typed by the feature; the reference app's bindings ship as
`stateserver.features`. mypy then refuses an action with a wrong field or type:

    from stateserver import features
    notes = features.store(client, "notes")
    notes.dispatch({"type": "add", "text": "Heron"})   # checked against NotesAddAction
    notes.state()["sync"]["pending"]                    # an int
    notes.mirror().state                                # Optional[NotesState], kept current
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Generic, Optional, TypeVar, cast

from .mirror import Mirror

ActionT = TypeVar("ActionT")
StateT = TypeVar("StateT")
EventT = TypeVar("EventT")


class TypedStore(Generic[ActionT, StateT, EventT]):
    """Store `store` on `client`, with the types of its feature."""

    def __init__(self, client: Any, store: str) -> None:
        self.client = client
        self.store = store

    def dispatch(self, action: ActionT, wait: Optional[str] = None, notify: bool = False,
                 timeout: float = 30,
                 on_progress: Optional[Callable[[Dict[str, Any]], None]] = None
                 ) -> Optional[Dict[str, Any]]:
        """Sends `action`; returns `{store, version}` (None when `notify`). `on_progress`
        hears the `$/progress` of its effects, as `Client.dispatch`'s does."""
        result = self.client.dispatch(self.store, action, wait=wait, notify=notify,
                                      timeout=timeout, on_progress=on_progress)
        return cast(Optional[Dict[str, Any]], result)

    def state(self, timeout: float = 30) -> StateT:
        """The store's published state now (`state/get`)."""
        result = self.client.request("state/get", {"store": self.store}, timeout=timeout)
        return cast(StateT, result["state"])

    def mirror(self, subscribe: bool = True) -> TypedMirror[StateT]:
        """A `Mirror` of the whole state, its `state` typed by the feature."""
        return TypedMirror(Mirror(self.client, self.store, subscribe=subscribe))

    def skip(self, version: int, skipped: bool = True, timeout: float = 30) -> Dict[str, Any]:
        """`history/skip`: the action that made `version` off (or on again), the state
        recomputed from the rest; returns `{store, version}`."""
        return cast(Dict[str, Any], self.client.skip(self.store, version, skipped,
                                                     timeout=timeout))

    def fork(self, version: Optional[int] = None, as_: Optional[str] = None,
             timeout: float = 30) -> "TypedStore[ActionT, StateT, EventT]":
        """`store/fork`: a sandbox of the same feature at `version`, typed as this store."""
        result = self.client.fork(self.store, version, as_=as_, timeout=timeout)
        return TypedStore(self.client, result["store"])

    def diff(self, other: "TypedStore[ActionT, StateT, EventT]",
             timeout: float = 30) -> Any:
        """`state/diff`: the RFC 6902 patch from this store's state to `other`'s."""
        return self.client.diff(self.store, other.store, timeout=timeout)["patch"]

    def blame(self, path: str, limit: Optional[int] = None, timeout: float = 30) -> Any:
        """`state/blame`: the entry that last changed the value at `path`, and those before."""
        return self.client.blame(self.store, path, limit=limit, timeout=timeout)


class TypedMirror(Generic[StateT]):
    """A `Mirror` of a whole store whose `state` has its feature's type; `mirror` is the
    untyped one underneath (callbacks, counters)."""

    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror

    @property
    def state(self) -> Optional[StateT]:
        return cast(Optional[StateT], self.mirror.state)

    @property
    def version(self) -> int:
        return self.mirror.version

    def sync(self, version: Optional[int] = None, timeout: float = 30) -> Optional[StateT]:
        """Waits until the mirror reflects `version` (default: the store's now); its state."""
        self.mirror.sync(version, timeout=timeout)
        return self.state
