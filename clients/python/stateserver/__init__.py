"""Python client for stateserver (JSON-RPC 2.0 over NDJSON on stdio).

`Client` and `Mirror` for threads, `AsyncClient` and `AsyncMirror` for asyncio; the pytest
plugin (`stateserver.pytest_plugin`, registered by entry point) gives tests a `stateserver`
fixture."""
from .async_client import AsyncClient, ProgressUpdates
from .async_mirror import AsyncMirror
from .client import Client
from .errors import RPCError, ServerExited
from .log import MessageLog
from .mirror import Mirror

__all__ = ["AsyncClient", "AsyncMirror", "Client", "MessageLog", "Mirror",
           "ProgressUpdates", "RPCError", "ServerExited"]
