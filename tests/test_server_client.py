"""The Python client (clients/python) itself: what a test-suite author relies on."""
import os

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
