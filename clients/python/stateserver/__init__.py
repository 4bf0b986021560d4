"""Python client for stateserver (JSON-RPC 2.0 over NDJSON on stdio)."""
from .client import Client, RPCError, ServerExited
from .mirror import Mirror

__all__ = ["Client", "Mirror", "RPCError", "ServerExited"]
