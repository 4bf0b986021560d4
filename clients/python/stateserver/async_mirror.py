"""A local copy of a store's state for asyncio code, kept by applying the server's patches."""
import asyncio
from typing import Any, Callable, Dict, Optional, Set

import jsonpatch  # type: ignore[import-untyped]  # no stubs; one call, checked by tests

from .async_client import AsyncClient
from .errors import RPCError, ServerExited
from .mirror import ChangeCallback

INVALID_PARAMS = -32602  # what `state/get` of a path answers when the path has no value


class AsyncMirror:
    """Mirrors the state of `store` (or the subtree at `path`) on an `AsyncClient`.

    It subscribes (`state/subscribe`, or only `state/get` with `subscribe=False`); the answer
    takes effect exactly where it sits in the server's output, and each later `state/patch` of
    the subscription is applied in the reader task when its `from` fits the mirror's version.
    Any other `from` is a gap: the mirror fetches the state again (`resyncs` counts it).
    `on_change(state, change)` runs after every change (in the reader task: keep it short).

        cart = await AsyncMirror.open(client, "cart", on_change=lambda state, _: print(state))
        result = await client.dispatch("cart", {"type": "add", "id": "a", "name": "A", "price": 1})
        await cart.sync(result["version"])
    """

    def __init__(self, client: AsyncClient, store: str, path: str = "", subscribe: bool = True,
                 on_change: Optional[ChangeCallback] = None) -> None:
        self.client = client
        self.store = store
        self.path = path
        self.on_change = on_change
        self.state: Any = None
        self.exists = False
        self.patches = 0
        self.coalesced = 0
        self.resyncs = 0
        self._current = -1     # the newest store version the state is known to reflect
        self._floor = 0        # the oldest `from` a patch may have
        self._absent_unknown = False  # a fetch found the path absent: the next patch adds it
        self._loaded = False
        self._fetching = False
        self._failure: Optional[BaseException] = None
        self._tasks: Set["asyncio.Task[None]"] = set()
        self._event = asyncio.Event()
        client.add_listener(self._on_message)
        client.on_close(self._wake)
        self._ready = asyncio.ensure_future(
            self._fetch("state/subscribe" if subscribe else "state/get", first=True))

    @classmethod
    async def open(cls, client: AsyncClient, store: str, path: str = "", subscribe: bool = True,
                   on_change: Optional[ChangeCallback] = None) -> "AsyncMirror":
        """Creates a mirror and returns it once it holds the store's state."""
        mirror = cls(client, store, path, subscribe, on_change)
        await mirror.ready()
        return mirror

    async def ready(self) -> None:
        """Returns once the first state arrived (raises what fetching it raised)."""
        await asyncio.shield(self._ready)

    @property
    def version(self) -> int:
        """The newest store version the mirror reflects (-1 before the first state)."""
        return self._current

    def close(self) -> None:
        """Stops following patches."""
        self.client.remove_listener(self._on_message)

    def _params(self) -> Dict[str, Any]:
        return {"store": self.store, "path": self.path} if self.path else {"store": self.store}

    async def resync(self) -> None:
        """Fetches the state again with `state/get` (what a gap does by itself)."""
        self.resyncs += 1
        await self._fetch("state/get", first=False)

    async def sync(self, version: Optional[int] = None, timeout: float = 30) -> Any:
        """Returns the state once the mirror reflects store version `version` (default: the
        store's version at the time of the call, asked with `state/get`)."""
        deadline = asyncio.get_running_loop().time() + timeout
        await asyncio.wait_for(self.ready(), timeout)
        if version is None or (self.path and self._current < version):
            reached = await self._probe(timeout)
            version = reached if version is None else version
        target = version
        await self._wait(lambda: self._loaded and not self._fetching and self._current >= target,
                         deadline, f"version {target}")
        return self.state

    async def wait_until(self, predicate: Callable[[Any], bool], timeout: float = 30) -> Any:
        """Returns the first state (from now on) that satisfies `predicate`."""
        deadline = asyncio.get_running_loop().time() + timeout
        await asyncio.wait_for(self.ready(), timeout)
        await self._wait(lambda: self._loaded and not self._fetching and self.exists
                         and bool(predicate(self.state)), deadline, "the predicate")
        return self.state

    async def _wait(self, done: Callable[[], bool], deadline: float, what: str) -> None:
        loop = asyncio.get_running_loop()
        while not done():
            if self.client.closed:
                raise ServerExited(f"the server exited before the mirror of {self.store}"
                                   f"{self.path} reached {what} (at version {self._current})"
                                   f"{self.client._stderr_hint()}")
            if self._failure is not None and not self._fetching:
                raise self._failure
            event = self._event
            remaining = deadline - loop.time()
            try:
                if remaining <= 0:
                    raise asyncio.TimeoutError
                await asyncio.wait_for(event.wait(), remaining)
            except asyncio.TimeoutError:
                raise TimeoutError(
                    f"the mirror of {self.store}{self.path} never reached {what}; last state "
                    f"(version {self._current}): {self.state!r}{self.client._stderr_hint()}"
                ) from None

    def _wake(self) -> None:
        # Waiters hold the old event; a fresh one is armed for the next change.
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def _fetch(self, method: str, first: bool) -> None:
        self._fetching = True
        absent = False

        def on_response(response: Dict[str, Any]) -> None:
            nonlocal absent
            if "error" in response:
                # A resync of a path that is gone: absent until a patch adds it back.
                absent = response["error"].get("code") == INVALID_PARAMS
                if first or not self.path or not absent:
                    return
                self._fetching, self._failure, self._absent_unknown = False, None, True
                self._set(None, False, {"reason": "resync"})
                return
            result = response["result"]
            self._fetching, self._failure, self._absent_unknown = False, None, False
            self._loaded = True
            self._current = max(self._current, result["version"])
            # A subscription's next patch starts at its version; after a plain `state/get` a
            # path's next patch may start at any version since its subtree last changed.
            self._floor = result["version"] if method == "state/subscribe" or not self.path else 0
            self._set(result["state"], True, {"reason": "load" if first else "resync"})

        try:
            response = await self.client.request_raw(method, self._params(),
                                                     on_response=on_response)
            if "error" in response:
                raise RPCError(response["error"])
        except BaseException as error:
            if absent and not first and self.path:
                return  # handled when the answer was read: not a failure
            self._fetching, self._failure = False, error
            self._wake()
            raise

    async def _probe(self, timeout: float) -> int:
        """The store's version now, from `state/get`; read where its answer sits in the stream."""
        reached = self._current

        def on_response(response: Dict[str, Any]) -> None:
            nonlocal reached
            if "error" in response:
                if response["error"].get("code") == INVALID_PARAMS and self.path \
                        and self.exists and not self._fetching:
                    self._gap()  # the mirror missed the removal of its path
                return
            reached = response["result"]["version"]
            if self._fetching or not self.path:
                return  # a root mirror waits for its patches
            if not self.exists:
                self._gap()  # the mirror missed the path's return
            else:
                self._current = max(self._current, reached)
                self._wake()

        await self.client.request_raw("state/get", self._params(), timeout=timeout,
                                      on_response=on_response)
        return reached

    def _gap(self) -> None:
        task = asyncio.ensure_future(self._quiet_resync())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _quiet_resync(self) -> None:
        try:
            await self.resync()
        except Exception:  # noqa: BLE001 - reaches the waiters through _failure
            pass

    def _on_message(self, message: Any) -> None:
        if not isinstance(message, dict) or message.get("method") != "state/patch":
            return
        params = message["params"]
        if params.get("store") != self.store or params.get("path", "") != self.path:
            return
        if not self._loaded and not self._absent_unknown:
            return  # the first fetch's answer covers it
        start, to = params["from"], params["to"]
        if to <= self._current and not self._absent_unknown:
            return  # already reflected
        if not self._absent_unknown and not self._floor <= start <= self._current:
            if not self._fetching:
                self._gap()
            return
        document = {"root": self.state} if self.exists else {}
        try:
            operations = [self._rebase(op) for op in params["patch"]]
            document = jsonpatch.apply_patch(document, operations)
        except Exception:  # noqa: BLE001 - the patch does not fit: the copy is not the server's
            if not self._fetching:
                self._gap()
            return
        self._absent_unknown = False
        self._loaded = True
        self._current = self._floor = to
        self.patches += 1
        if to > start + 1:
            self.coalesced += 1
        self._set(document.get("root"), "root" in document,
                  {"reason": "patch", "from": start, "to": to, "patch": params["patch"]})

    def _rebase(self, op: Dict[str, Any]) -> Dict[str, Any]:
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

    def _set(self, state: Any, exists: bool, change: Dict[str, Any]) -> None:
        self.state, self.exists = state, exists
        if self.on_change is not None:
            full = dict(change, version=self._current, exists=exists)
            try:
                self.on_change(state, full)
            except Exception as error:  # noqa: BLE001 - a bad callback must not stop the mirror
                self.client.report_listener_error(full, error)
        self._wake()
