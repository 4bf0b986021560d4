"""The devtools' connection to the core: stores, history entries and events, kept bounded."""
import asyncio
import collections
import os
from typing import Any, Awaitable, Callable, Deque, Dict, List, Optional, Set, Tuple

from ..async_client import AsyncClient
from ..errors import RPCError

Message = Dict[str, Any]
Broadcast = Callable[[Message], Awaitable[None]]

#: The most history entries one poll asks a store for; a store that made more since the last
#: poll is skipped ahead (the page says how many it did not see).
PAGE = 500


class CoreLink:
    """Follows every open store of one core through `store/list` and `history/get`.

    It polls rather than asks for every patch: at 10,000 actions/s the core answers a few
    requests a second per store, each at most `PAGE` entries, whatever the rate. Entries whose
    effects still run are asked for again until the effects end, so spans get their end.
    `keep` bounds what is held here (the newest entries win; `pushed_out` counts the rest).
    """

    def __init__(self, client: AsyncClient, keep: int = 2000, interval: float = 0.2,
                 recording: Optional[str] = None) -> None:
        self.client = client
        self.keep = keep
        self.interval = interval
        self.recording = recording  # the core's --record file, when known
        self.stores: Dict[str, Message] = {}
        self.features: List[Message] = []
        self.entries: Deque[Message] = collections.deque()  # at most `keep`
        self._held: Dict[Tuple[str, int], Message] = {}  # (store, seq) -> entry in `entries`
        self.events: Deque[Message] = collections.deque(maxlen=keep)
        self.skipped = 0  # entries never read: a store ran more than a page ahead of a poll
        self.pushed_out = 0  # entries read, then pushed out of `entries` by newer ones
        self._seen: Dict[str, int] = {}  # store -> highest seq seen
        self._version: Dict[str, int] = {}  # store -> version of the highest seq seen
        self._running: Dict[str, Dict[int, int]] = {}  # store -> seq -> version, effects running
        self._listeners: Set[Broadcast] = set()
        self._task: Optional["asyncio.Task[None]"] = None

    async def start(self) -> None:
        # No patches: history says what changed, and a subscriber would make the core encode
        # and queue every patch for this connection too.
        await self.client.request("initialize", {"client": {"name": "stateserver-devtools"},
                                                 "subscribe": "none"})
        self.features = (await self.client.request("features/list"))["features"]
        await self.poll()
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass

    def subscribe(self, listener: Broadcast) -> None:
        self._listeners.add(listener)

    def unsubscribe(self, listener: Broadcast) -> None:
        self._listeners.discard(listener)

    def snapshot(self) -> Message:
        """What a page that just connected needs."""
        return {"type": "snapshot", "stores": list(self.stores.values()),
                "features": self.features, "entries": list(self.entries),
                "events": list(self.events), "skipped": self.skipped,
                "pushedOut": self.pushed_out, "keep": self.keep,
                "recording": self.recording is not None}

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.poll()
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the core went away or refused: say so, keep trying
                await self._send({"type": "error", "message": str(error)})
                if self.client.closed:
                    return

    async def poll(self) -> None:
        listed = await self.client.request("store/list")
        stores = {store["store"]: store for store in listed.get("stores", [])}
        if stores != self.stores:
            self.stores = stores
            await self._send({"type": "stores", "stores": list(stores.values()),
                              "attachedClients": listed.get("attachedClients")})
        for store in stores:
            await self._poll_history(store)

    async def _poll_history(self, store: str) -> None:
        seen = self._seen.get(store, -1)
        running = self._running.get(store, {})
        current = int(self.stores.get(store, {}).get("version", 0))
        last = self._version.get(store, 0)
        since: Optional[int] = None
        if seen >= 0:
            if current - last > PAGE:
                # Too far behind: jump to the newest page rather than read everything.
                self.skipped += current - PAGE - last
                running.clear()
                since = current - PAGE
            else:
                # The run of the last version again (an action that changed nothing shares
                # its version), and from the oldest entry whose effects still run.
                oldest = min([last] + [v for v in running.values() if v >= current - PAGE])
                since = oldest - 1 if oldest > 0 else None
        params: Message = {"store": store, "limit": PAGE}
        if since is not None:
            params["since"] = since
        try:
            page = await self.client.request("history/get", params)
        except RPCError:
            return  # a store without history (--history 0) shows its versions only
        fresh: List[Message] = []
        for entry in page.get("entries", []):
            entry["store"] = store
            seq = int(entry["seq"])
            runs = any(effect.get("status") == "running" for effect in entry.get("effects", []))
            if seq <= seen:
                if seq in running and not runs:
                    del running[seq]  # its effects ended: the page updates the entry
                    held = self._held.get((store, seq))
                    if held is not None:
                        held.update(entry)
                    fresh.append(entry)
                continue
            if runs:
                running[seq] = int(entry["version"])
            fresh.append(entry)
            if len(self.entries) >= self.keep:
                evicted = self.entries.popleft()
                self._held.pop((evicted["store"], evicted["seq"]), None)
                self.pushed_out += 1
            self.entries.append(entry)
            self._held[(store, seq)] = entry
            for event in entry.get("events", []):
                self.events.append({"store": store, "seq": seq, "event": event,
                                    "at": entry.get("at")})
            seen = seq
            self._version[store] = int(entry["version"])
        self._seen[store] = max(seen, 0)
        self._running[store] = running
        if fresh:
            await self._send({"type": "entries", "store": store, "entries": fresh,
                              "skipped": self.skipped})

    async def _send(self, message: Message) -> None:
        for listener in list(self._listeners):
            try:
                await listener(message)
            except Exception:
                self._listeners.discard(listener)

    # What the page asks for, passed to the core.

    async def state_at(self, store: str, version: int) -> Any:
        return await self.client.request("state/get", {"store": store, "version": version})

    async def rewind(self, store: str, version: int) -> Any:
        return await self.client.request("store/rewind", {"store": store, "version": version})

    # The branching methods go through the client's generic `request_raw`, so that the page
    # shows the server's own error (its `data.pointer`, `data.oldest`).
    async def skip(self, store: str, version: int, skipped: bool) -> Any:
        return await self.client.request_raw(
            "history/skip", {"store": store, "version": version, "skipped": skipped})

    async def fork(self, store: str, version: int, name: Optional[str]) -> Any:
        params: Message = {"store": store, "version": version}
        if name:
            params["as"] = name
        return await self.client.request_raw("store/fork", params)

    async def blame(self, store: str, path: str) -> Any:
        return await self.client.request_raw("state/blame", {"store": store, "path": path})

    async def dispatch(self, store: str, action: Message) -> Any:
        return await self.client.request_raw("dispatch", {"store": store, "action": action})

    def export(self) -> Optional[bytes]:
        """The core's recording (`--record` format), when this link knows its file."""
        if self.recording is None or not os.path.exists(self.recording):
            return None
        with open(self.recording, "rb") as file:
            return file.read()
