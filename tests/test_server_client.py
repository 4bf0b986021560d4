"""The Python client (clients/python) itself: what a test-suite author relies on."""
import os
import re
import threading

from stateserver import Client, Mirror


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


def add_item(client, id, price, store="cart"):
    return client.dispatch(store, {"type": "add", "id": id, "name": id.upper(), "price": price})


def test_mirror_of_a_path_that_is_removed_and_added_again(spawn):
    client = spawn()
    add_item(client, "a", 1)
    mirror = Mirror(client, "cart", "/items/0")
    assert mirror.state["id"] == "a" and mirror.exists
    removed = client.dispatch("cart", {"type": "remove", "id": "a"})
    assert mirror.sync(removed["version"], timeout=10) is None and not mirror.exists
    added = add_item(client, "b", 2)
    assert mirror.sync(added["version"], timeout=10)["id"] == "b" and mirror.exists
    assert mirror.state == client.request("state/get", {"store": "cart", "path": "/items/0"})["state"]
    assert client.listener_errors == [] and mirror.resyncs == 0


def test_a_listener_that_raises_does_not_stop_the_client(spawn):
    client = spawn()

    def broken(message):
        raise ValueError("listener bug")

    client.add_listener(broken)
    assert "stores" in client.request("store/list", timeout=10)
    assert "stores" in client.request("store/list", timeout=10)
    assert len(client.listener_errors) == 2
    assert isinstance(client.listener_errors[0][1], ValueError)


def test_mirror_sync_on_a_path_whose_last_changes_were_elsewhere(spawn):
    client = spawn()
    add_item(client, "a", 1)
    mirror = Mirror(client, "cart", "/items/0")
    # Adding "b" changes /items/1 and the totals: the /items/0 subscription gets no patch for
    # this version, so the mirror's own version stays behind it.
    version = add_item(client, "b", 2)["version"]
    assert mirror.sync(version, timeout=10)["id"] == "a"
    assert mirror.version < version
    assert mirror.sync(timeout=10)["id"] == "a"  # default: the store's version now
    # Later changes of the subtree still apply on top (from = the subscription's last `to`).
    changed = client.dispatch("cart", {"type": "setQuantity", "id": "a", "quantity": 5})
    assert mirror.sync(changed["version"], timeout=10)["quantity"] == 5
    assert mirror.resyncs == 0 and client.listener_errors == []


def test_server_keeps_serving_when_nobody_reads_its_stderr(stateserver_bin):
    # A parent (a GUI, a forgotten pipe) that never reads stderr: ~700 KiB of warnings fill the
    # pipe, yet requests are still answered. The lines past the server's bound are dropped and
    # counted; once someone reads again, the notice of the drop arrives before the exit.
    read_end, write_end = os.pipe()
    received = []
    reader = threading.Thread(target=lambda: received.append(_read_all(read_end)), daemon=True)
    client = None
    try:
        client = Client.spawn([stateserver_bin, "--ephemeral"], stderr=write_end)
        os.close(write_end)
        sender = threading.Thread(target=lambda: [
            client.notify("dispatch", {"store": "nope", "action": {"type": "x"}})
            for _ in range(5000)], daemon=True)
        sender.start()
        sender.join(timeout=10)
        assert not sender.is_alive(), "the server stopped reading its stdin"
        assert "stores" in client.request("store/list", timeout=10)
        reader.start()
        assert client.close(timeout=10) == 0
        reader.join(timeout=10)
        logs = received[0].decode()
        assert logs.startswith("stateserver: warning: notification failed")
        dropped = re.findall(r"warning: (\d+) log records dropped: stderr is not being read\n", logs)
        assert len(dropped) == 1
        assert logs.count("notification failed") + int(dropped[0]) == 5000
    finally:
        if client is not None and client.process.poll() is None:
            client.process.kill()
        if reader.is_alive():
            reader.join(timeout=10)
        os.close(read_end)


def _read_all(fd):
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)
