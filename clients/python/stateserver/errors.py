"""The errors both clients raise."""
from typing import Any, Mapping


class RPCError(Exception):
    """A JSON-RPC error response: `code`, `message` and `data` as the server sent them."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.code: Any = error.get("code")
        self.message: Any = error.get("message")
        self.data: Any = error.get("data")
        super().__init__(f"{self.code} {self.message}: {self.data}")


class ServerExited(Exception):
    """The server ended (or broke the protocol: a line that is not JSON) before the awaited
    message arrived. Raised at once, never after a timeout."""
