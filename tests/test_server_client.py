"""The Python client (clients/python) itself: what a test-suite author relies on."""
import os

from stateserver import Client


def test_client_drains_stderr_so_a_chatty_server_never_hangs(stateserver_bin):
    # Each failed notification logs a warning line: 2,000 of them are ~250 KiB of stderr, far
    # more than a pipe holds. An undrained pipe would block the server's next log write.
    with Client.spawn([stateserver_bin, "--ephemeral"]) as client:
        for _ in range(2000):
            client.notify("dispatch", {"store": "nope", "action": {"type": "x"}})
        assert "stores" in client.request("store/list", timeout=10)
        tail = client.stderr_text()
        assert "notification failed" in tail
        assert len(tail) <= Client.STDERR_TAIL_BYTES


def test_client_stderr_can_be_redirected(stateserver_bin):
    with Client.spawn([stateserver_bin, "--ephemeral"], stderr=open(os.devnull, "wb")) as client:
        client.notify("dispatch", {"store": "nope", "action": {"type": "x"}})
        assert "stores" in client.request("store/list", timeout=10)
        assert client.stderr_text() == ""
