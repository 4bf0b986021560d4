"""The Python client (clients/python) itself: what a test-suite author relies on."""
import os
import re
import threading
import time

from stateserver import Client, Mirror

TIMEOUT = 30  # only bounds a hang; replies can take seconds on a loaded machine


def test_client_drains_stderr_so_a_chatty_server_never_hangs(stateserver_bin):
    # Each failed notification logs a warning line: 2,000 of them are ~250 KiB of stderr, far
    # more than a pipe holds. An undrained pipe would block the server's next log write.
    with Client.spawn([stateserver_bin, "--ephemeral"]) as client:
        for _ in range(2000):
            client.notify("dispatch", {"store": "nope", "action": {"type": "x"}})
        assert "stores" in client.request("store/list", timeout=TIMEOUT)
        # Logs reach stderr through the server's own writer and the client's drainer thread,
        # neither ordered with stdout: under load the tail may still be empty when the answer
        # arrives, so wait for it (a failure bound only).
        deadline = time.monotonic() + TIMEOUT
        tail = client.stderr_text()
        while "notification failed" not in tail and time.monotonic() < deadline:
            time.sleep(0.05)
            tail = client.stderr_text()
        assert "notification failed" in tail
        assert len(tail) <= Client.STDERR_TAIL_BYTES


def test_client_stderr_can_be_redirected(stateserver_bin):
    with Client.spawn([stateserver_bin, "--ephemeral"], stderr=open(os.devnull, "wb")) as client:
        client.notify("dispatch", {"store": "nope", "action": {"type": "x"}})
        assert "stores" in client.request("store/list", timeout=TIMEOUT)
        assert client.stderr_text() == ""


def add_item(client, id, price, store="cart"):
    return client.dispatch(store, {"type": "add", "id": id, "name": id.upper(), "price": price})


def test_mirror_of_a_path_that_is_removed_and_added_again(spawn):
    client = spawn()
    add_item(client, "a", 1)
    mirror = Mirror(client, "cart", "/items/0")
    assert mirror.state["id"] == "a" and mirror.exists
    removed = client.dispatch("cart", {"type": "remove", "id": "a"})
    assert mirror.sync(removed["version"], timeout=TIMEOUT) is None and not mirror.exists
    added = add_item(client, "b", 2)
    assert mirror.sync(added["version"], timeout=TIMEOUT)["id"] == "b" and mirror.exists
    assert mirror.state == client.request("state/get", {"store": "cart", "path": "/items/0"})["state"]
    assert client.listener_errors == [] and mirror.resyncs == 0


def test_a_listener_that_raises_does_not_stop_the_client(spawn):
    client = spawn()

    def broken(message):
        raise ValueError("listener bug")

    client.add_listener(broken)
    assert "stores" in client.request("store/list", timeout=TIMEOUT)
    assert "stores" in client.request("store/list", timeout=TIMEOUT)
    assert len(client.listener_errors) == 2
    assert isinstance(client.listener_errors[0][1], ValueError)


def test_mirror_sync_on_a_path_whose_last_changes_were_elsewhere(spawn):
    client = spawn()
    add_item(client, "a", 1)
    mirror = Mirror(client, "cart", "/items/0")
    # Adding "b" changes /items/1 and the totals: the /items/0 subscription gets no patch for
    # this version, so the mirror's own version stays behind it.
    version = add_item(client, "b", 2)["version"]
    assert mirror.sync(version, timeout=TIMEOUT)["id"] == "a"
    assert mirror.version < version
    assert mirror.sync(timeout=TIMEOUT)["id"] == "a"  # default: the store's version now
    # Later changes of the subtree still apply on top (from = the subscription's last `to`).
    changed = client.dispatch("cart", {"type": "setQuantity", "id": "a", "quantity": 5})
    assert mirror.sync(changed["version"], timeout=TIMEOUT)["quantity"] == 5
    assert mirror.resyncs == 0 and client.listener_errors == []


def test_server_keeps_serving_when_nobody_reads_its_stderr(stateserver_bin):
    # A parent (a GUI, a forgotten pipe) that never reads stderr: ~700 KiB of warnings fill the
    # pipe, yet requests are still answered. The lines past the server's bound are dropped and
    # counted; once someone reads again, the notice of the drop arrives before the exit.
    read_end, write_end = os.pipe()
    stderr = _PipeReader(read_end)
    reader = threading.Thread(target=stderr.read_to_end, daemon=True)
    client = None
    try:
        client = Client.spawn([stateserver_bin, "--ephemeral"], stderr=write_end)
        os.close(write_end)
        sender = threading.Thread(target=lambda: [
            client.notify("dispatch", {"store": "nope", "action": {"type": "x"}})
            for _ in range(5000)], daemon=True)
        sender.start()
        sender.join(timeout=TIMEOUT)
        assert not sender.is_alive(), "the server stopped reading its stdin"
        assert "stores" in client.request("store/list", timeout=TIMEOUT)
        reader.start()
        # Once stderr is read again, the next warning that fits brings the notice of the drop
        # with it. Wait for everything to arrive before ending the input: at exit the server
        # flushes its logs for at most 0.5 s, which a loaded machine can spend before this
        # reader has caught up. So: more warnings (each one processed, then dropped or kept)
        # until the notice is out, then one that must be kept, and wait for that one.
        notice = b"log records dropped: stderr is not being read\n"
        sent = 5000
        deadline = time.monotonic() + TIMEOUT
        while not stderr.wait_for(notice, 0.05):
            assert time.monotonic() < deadline, "no notice of the dropped log records"
            client.notify("dispatch", {"store": f"more-{sent}", "action": {"type": "x"}})
            sent += 1
            assert "stores" in client.request("store/list", timeout=TIMEOUT)
        client.notify("dispatch", {"store": "last", "action": {"type": "x"}})
        sent += 1
        assert stderr.wait_for(b"no open store 'last'", TIMEOUT), "the last warning never came"
        assert client.close(timeout=TIMEOUT) == 0
        reader.join(timeout=TIMEOUT)
        assert not reader.is_alive()
        logs = stderr.data().decode()
        assert logs.startswith("stateserver: warning: notification failed")
        dropped = re.findall(r"warning: (\d+) log records dropped: stderr is not being read\n", logs)
        assert len(dropped) == 1
        assert logs.count("notification failed") + int(dropped[0]) == sent
    finally:
        if client is not None and client.process.poll() is None:
            client.process.kill()
        if reader.is_alive():
            reader.join(timeout=TIMEOUT)
        os.close(read_end)


class _PipeReader:
    """Reads a descriptor to its end on a thread; the test can wait for bytes to arrive."""

    def __init__(self, fd):
        self.fd = fd
        self._data = bytearray()
        self._cond = threading.Condition()

    def read_to_end(self):
        while chunk := os.read(self.fd, 1 << 16):
            with self._cond:
                self._data += chunk
                self._cond.notify_all()

    def wait_for(self, needle, timeout):
        with self._cond:
            return self._cond.wait_for(lambda: needle in self._data, timeout)

    def data(self):
        with self._cond:
            return bytes(self._data)
