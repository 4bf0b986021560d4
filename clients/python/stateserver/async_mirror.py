"""A local copy of a store's state for asyncio code, kept by applying the server's patches."""
import asyncio
from typing import Any, Callable, Dict, Optional, Protocol, Set

from .connection import Message, ResponseHook
from .errors import RPCError, ServerExited
from .replica import APPLIED, GAP, INVALID_PARAMS, ChangeCallback, Replica, ReplicaView

__all__ = ["AsyncMirror", "AsyncMirrorClient"]


class AsyncMirrorClient(Protocol):
    """What an `AsyncMirror` uses of its `AsyncClient` (named here so that this module does not
    import the client's, which imports this one)."""

    @property
    def closed(self) -> bool: ...

    async def request_raw(self, method: str, params: Any = None,
                          timeout: Optional[float] = 30,
                          on_response: Optional[ResponseHook] = None) -> Dict[str, Any]: ...

    def add_listener(self, listener: Callable[[Message], None]) -> None: ...

    def remove_listener(self, listener: Callable[[Message], None]) -> None: ...

    def on_close(self, callback: Callable[[], None]) -> None: ...

    def report_listener_error(self, message: Message, error: Exception) -> None: ...

    def _stderr_hint(self) -> str: ...


class AsyncMirror(ReplicaView):
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

    def __init__(self, client: AsyncMirrorClient, store: str, path: str = "",
                 subscribe: bool = True, on_change: Optional[ChangeCallback] = None) -> None:
        self.client = client
        self.store = store
        self.path = path
        self.on_change = on_change
        self.resyncs = 0
        self._replica = Replica(store, path)
        self._fetching = False
        self._failure: Optional[BaseException] = None
        self._tasks: Set["asyncio.Task[None]"] = set()
        self._event = asyncio.Event()
        client.add_listener(self._on_message)
        client.on_close(self._wake)
        self._ready = asyncio.ensure_future(
            self._fetch("state/subscribe" if subscribe else "state/get", first=True))

    @classmethod
    async def open(cls, client: AsyncMirrorClient, store: str, path: str = "", subscribe: bool = True,
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
        return self._replica.current

    def close(self) -> None:
        """Stops following patches."""
        self.client.remove_listener(self._on_message)

    async def resync(self) -> None:
        """Fetches the state again with `state/get` (what a gap does by itself)."""
        self.resyncs += 1
        await self._fetch("state/get", first=False)

    async def sync(self, version: Optional[int] = None, timeout: float = 30) -> Any:
        """Returns the state once the mirror reflects store version `version` (default: the
        store's version at the time of the call, asked with `state/get`)."""
        deadline = asyncio.get_running_loop().time() + timeout
        await asyncio.wait_for(self.ready(), timeout)
        if version is None or (self.path and self._replica.current < version):
            reached = await self._probe(timeout)
            version = reached if version is None else version
        target = version
        await self._wait(lambda: self._replica.loaded and not self._fetching
                         and self._replica.current >= target, deadline, f"version {target}")
        return self.state

    async def wait_until(self, predicate: Callable[[Any], bool], timeout: float = 30) -> Any:
        """Returns the first state (from now on) that satisfies `predicate`."""
        deadline = asyncio.get_running_loop().time() + timeout
        await asyncio.wait_for(self.ready(), timeout)
        await self._wait(lambda: self._replica.loaded and not self._fetching and self.exists
                         and bool(predicate(self.state)), deadline, "the predicate")
        return self.state

    async def _wait(self, done: Callable[[], bool], deadline: float, what: str) -> None:
        loop = asyncio.get_running_loop()
        while not done():
            if self.client.closed:
                raise ServerExited(f"the server exited before the mirror of {self.store}"
                                   f"{self.path} reached {what} (at version {self.version})"
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
                    f"(version {self.version}): {self.state!r}{self.client._stderr_hint()}"
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
            change = self._replica.answer(response, method == "state/subscribe", first)
            if change is None:
                return  # an error: raised below
            absent = "error" in response  # a resync of a path that is gone
            self._fetching, self._failure = False, None
            self._changed({"reason": change})

        try:
            response = await self.client.request_raw(method, self._replica.params(),
                                                     on_response=on_response)
            if "error" in response:
                raise RPCError(response["error"])
        except BaseException as error:
            if absent:
                return  # handled when the answer was read: not a failure
            self._fetching, self._failure = False, error
            self._wake()
            raise

    async def _probe(self, timeout: float) -> int:
        """The store's version now, from `state/get`; read where its answer sits in the stream."""
        reached = self._replica.current

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
                self._replica.reached(reached)
                self._wake()

        await self.client.request_raw("state/get", self._replica.params(), timeout=timeout,
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
        if not self._replica.owns(message):
            return
        params = message["params"]
        verdict = self._replica.patch(params)
        if verdict == GAP and not self._fetching:
            self._gap()
        elif verdict == APPLIED:
            self._changed({"reason": "patch", "from": params["from"], "to": params["to"],
                           "patch": params["patch"]})

    def _changed(self, change: Dict[str, Any]) -> None:
        if self.on_change is not None:
            full = dict(change, version=self._replica.current, exists=self._replica.exists)
            try:
                self.on_change(self._replica.state, full)
            except Exception as error:  # noqa: BLE001 - a bad callback must not stop the mirror
                self.client.report_listener_error(full, error)
        self._wake()
