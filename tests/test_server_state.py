"""Stores through the protocol: ordering, versions, waiting, cancellation, subscriptions,
opening and closing, a client that stops reading, and shutdown with effects in flight.
Uses the reference `counter` feature (increment, set, incrementLater {afterMs})."""
import array
import fcntl
import json
import os
import signal
import subprocess
import termios
import threading
import time

import pytest

from stateserver import Mirror, RPCError


def increment(i, store="counter"):
    return {"jsonrpc": "2.0", "id": i, "method": "dispatch",
            "params": {"store": store, "action": {"type": "increment"}}}


def index_of(messages, predicate):
    return next(i for i, m in enumerate(messages) if isinstance(m, dict) and predicate(m))


def is_patch(m, store="counter"):
    return m.get("method") == "state/patch" and m["params"]["store"] == store


def test_patch_comes_before_its_response_with_consecutive_versions(server):
    start = len(server.messages)
    for i in range(1, 51):
        server.send(increment(f"d{i}"))
    server.response("d50")
    messages = server.messages[start:]
    patches = [m["params"] for m in messages if is_patch(m)]
    assert [(p["from"], p["to"]) for p in patches] == [(i, i + 1) for i in range(50)]
    for i in range(1, 51):
        patch_at = index_of(messages, lambda m: is_patch(m) and m["params"].get("cause") == f"d{i}")
        response_at = index_of(messages, lambda m: m.get("id") == f"d{i}")
        assert patch_at < response_at
        assert messages[response_at]["result"] == {"store": "counter", "version": i}
    assert messages[index_of(messages, is_patch)]["params"]["patch"] == [
        {"op": "replace", "path": "/count", "value": 1}]


def test_reduced_answers_at_once_and_settled_after_the_effect(server):
    reduced = server.dispatch("counter", {"type": "incrementLater", "afterMs": 60_000})
    assert reduced == {"store": "counter", "version": 0}
    start = len(server.messages)
    settled = server.dispatch("counter", {"type": "incrementLater", "afterMs": 20},
                              wait="settled", id="settled")
    assert settled == {"store": "counter", "version": 1}
    messages = server.messages[start:]
    patch_at = index_of(messages, lambda m: is_patch(m) and m["params"].get("cause") == "settled")
    assert patch_at < index_of(messages, lambda m: m.get("id") == "settled")


def test_cancel_request_answers_minus_32800(spawn):
    client = spawn("--drain-timeout", "0")
    client.send({"jsonrpc": "2.0", "id": "slow", "method": "dispatch", "params": {
        "store": "counter", "action": {"type": "incrementLater", "afterMs": 600_000}, "wait": "settled"}})
    client.notify("$/cancelRequest", {"id": "slow"})
    reply = client.response("slow")
    assert reply["error"]["code"] == -32800
    # The server is still serving, and the cancelled wait did not cancel the store's effect.
    assert client.request("state/get", {"store": "counter"})["version"] == 0
    assert client.close() == 0


def test_invalid_and_refused_actions(server):
    for action, code, pointer in [
        ({"type": "set", "value": "seven"}, -32602, "/action/value"),
        ({"type": "set"}, -32602, "/action/value"),
        ({"type": "incrementLater", "afterMs": -1}, -32602, "/action/afterMs"),
        ({"type": "explode"}, -32003, None),
        ({"kind": "increment"}, -32602, "/action/type"),
    ]:
        with pytest.raises(RPCError) as raised:
            server.dispatch("counter", action)
        assert raised.value.code == code, action
        if pointer:
            assert raised.value.data["pointer"] == pointer, action
        assert raised.value.data["reason"]
    assert server.request("state/get", {"store": "counter"})["version"] == 0


def test_internal_action_is_refused(server):
    # cart's couponApplied is the result of its coupon effect: only the core may send it.
    features = server.request("features/list")["features"]
    cart = next(f for f in features if f["name"] == "cart")
    assert "couponApplied" not in cart["actions"]
    with pytest.raises(RPCError) as raised:
        server.dispatch("cart", {"type": "couponApplied", "code": "SAVE10", "items": []})
    assert raised.value.code == -32003
    assert server.request("state/get", {"store": "cart"})["version"] == 0


def test_state_get_with_a_path(server):
    server.dispatch("counter", {"type": "set", "value": 41})
    assert server.request("state/get", {"store": "counter", "path": "/count"}) == {
        "store": "counter", "version": 1, "state": 41}
    with pytest.raises(RPCError) as raised:
        server.request("state/get", {"store": "counter", "path": "/nothing/here"})
    assert raised.value.code == -32602 and raised.value.data["pointer"] == "/path"


def test_path_subscription_gets_only_its_subtree(server):
    server.request("initialize", {"subscribe": "none"})
    server.request("store/open", {"feature": "cart", "store": "c"})
    items = Mirror(server, "c", path="/items")
    badge = Mirror(server, "c", path="/badgeCount")
    start = len(server.messages)
    server.dispatch("c", {"type": "add", "id": "sku-1", "name": "Pen", "price": 250})
    server.dispatch("c", {"type": "add", "id": "sku-2", "name": "Ink", "price": 900})
    last = server.dispatch("c", {"type": "setQuantity", "id": "sku-1", "quantity": 3})
    items.sync(last["version"])
    badge.sync(last["version"])
    patches = [m["params"] for m in server.messages[start:] if is_patch(m, "c")]
    item_patches = [p for p in patches if p["path"] == "/items"]
    # Each action changed the items, the total and the badge: the /items subscription got
    # only the operations under /items (paths from the store's root), nothing about /total.
    assert len(item_patches) == 3
    assert all(op["path"].startswith("/items") for p in item_patches for op in p["patch"])
    assert {p["path"] for p in patches} == {"/items", "/badgeCount"}
    assert items.state == server.request("state/get", {"store": "c", "path": "/items"})["state"]
    assert badge.state == 4 and badge.resyncs == 0 and items.resyncs == 0


def test_subscribe_none_sends_no_patches_until_subscribed(server):
    server.request("initialize", {"subscribe": "none"})
    start = len(server.messages)
    server.dispatch("counter", {"type": "increment"})
    assert not any(is_patch(m) for m in server.messages[start:] if isinstance(m, dict))
    assert server.request("state/subscribe", {"store": "counter"})["version"] == 1
    server.dispatch("counter", {"type": "increment"}, id="after")
    patches = [m["params"] for m in server.messages[start:] if isinstance(m, dict) and is_patch(m)]
    assert [(p["from"], p["to"]) for p in patches] == [(1, 2)]
    assert server.request("state/unsubscribe", {"store": "counter"}) == {}
    start = len(server.messages)
    server.dispatch("counter", {"type": "increment"})
    assert not any(is_patch(m) for m in server.messages[start:] if isinstance(m, dict))


def test_subscribe_none_still_delivers_the_events_of_a_dispatch(server):
    # Subscriptions choose the state a client mirrors; events are one-off and never replayed,
    # so they reach the client whatever it subscribed to, before the dispatch's response.
    server.request("initialize", {"subscribe": "none"})
    start = len(server.messages)
    server.dispatch("navigation", {"type": "openURL", "url": "nonsense"}, id="nav")
    kinds = [m.get("method", "response") for m in server.messages[start:] if isinstance(m, dict)]
    assert kinds == ["store/event", "response"]
    event = server.messages[start]["params"]
    assert event["store"] == "navigation" and event["event"]["type"] == "toast"


def test_store_open_and_close_cancels_effects(server):
    opened = server.request("store/open", {"feature": "counter", "store": "c2", "state": {"count": 10}})
    assert opened == {"store": "c2", "feature": "counter", "version": 0, "state": {"count": 10}}
    with pytest.raises(RPCError) as raised:
        server.request("store/open", {"feature": "counter", "store": "c2"})
    assert raised.value.code == -32004
    with pytest.raises(RPCError) as raised:
        server.request("store/open", {"feature": "no-such-feature"})
    assert raised.value.code == -32002
    generated = server.request("store/open", {"feature": "counter"})["store"]
    assert generated != "c2" and generated in {s["store"] for s in server.request("store/list")["stores"]}
    server.send({"jsonrpc": "2.0", "id": "waiting", "method": "dispatch", "params": {
        "store": "c2", "action": {"type": "incrementLater", "afterMs": 600_000}, "wait": "settled"}})
    start = len(server.messages)
    assert server.request("store/close", {"store": "c2"}, id="close") == {}
    # Closing cancelled the effect: the settled wait ends without the increment ever happening.
    assert server.response("waiting")["result"] == {"store": "c2", "version": 0}
    messages = server.messages[start:]
    closed_at = index_of(messages, lambda m: m.get("method") == "store/closed")
    assert messages[closed_at]["params"] == {"store": "c2", "reason": "closed"}
    assert closed_at < index_of(messages, lambda m: m.get("id") == "close")
    with pytest.raises(RPCError) as raised:
        server.dispatch("c2", {"type": "increment"})
    assert raised.value.code == -32001
    assert "c2" not in {s["store"] for s in server.request("store/list")["stores"]}


def test_mirror_follows_a_thousand_fire_and_forget_dispatches(server):
    mirror = Mirror(server, "counter")
    for _ in range(1000):
        server.dispatch("counter", {"type": "increment"}, notify=True)
    final = server.request("state/get", {"store": "counter"})
    assert final["version"] == 1000
    assert mirror.sync(1000) == final["state"] == {"count": 1000}


def peak_rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))


# The bound stated in docs/reference/protocol.md: a client that stops reading costs the server at
# most this much resident memory (4,096 queued responses, one coalesced patch per subscription,
# and the input it stopped reading), whatever the number of actions sent.
SLOW_READER_BOUND_MB = 64


def queued(fd):
    """Bytes waiting in the pipe behind `fd` (either end)."""
    size = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, size)
    return size[0]


F_GETPIPE_SZ = 1032


def half_full(fd):
    return queued(fd) >= fcntl.fcntl(fd, F_GETPIPE_SZ) // 2


def server_blocked_writing(pid, out_fd):
    """True when one of the server's threads sleeps in a pipe write (its stdout is full).

    Where the kernel hides wait channels, a stdout pipe at least half full stands in."""
    channels = []
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/wchan") as wchan:
                channels.append(wchan.read())
        except OSError:
            continue
    if any("pipe_write" in channel for channel in channels):
        return True
    if any(channel not in ("", "0") for channel in channels):
        return False
    return half_full(out_fd)


def test_a_client_that_stops_reading_while_100000_actions_go_in(server):
    mirror = Mirror(server, "counter")
    count = 100_000
    server.pause()
    payload = b"".join(
        json.dumps(increment(i), separators=(",", ":")).encode() + b"\n" for i in range(1, count + 1))
    sender = threading.Thread(target=server.send_bytes, args=(payload,))
    sender.start()
    # The server's stdout pipe fills and its writer blocks; its reading pauses; our writes block.
    # We wait on that condition itself, not on time: a server thread asleep in the kernel's pipe
    # write, and our stdin pipe at least half full while the sender is still blocked in it.
    # (Fill levels alone are not enough: how full a "full" pipe is depends on the sizes of the
    # writes that filled it, and a pipe may hold far less than 64 KiB on a busy machine.)
    out_fd, in_fd = server.process.stdout.fileno(), server.process.stdin.fileno()
    deadline = time.monotonic() + 60
    while not (server_blocked_writing(server.process.pid, out_fd) and half_full(in_fd)):
        assert sender.is_alive(), "the server read all the input without ever blocking its writer"
        assert time.monotonic() < deadline, \
            f"no backpressure: stdout holds {queued(out_fd)} bytes, stdin {queued(in_fd)}"
        threading.Event().wait(0.01)
    stalled_kb = peak_rss_kb(server.process.pid)
    server.resume()
    sender.join()
    last = server.response(count, timeout=120)
    assert last["result"]["version"] == count
    final = server.request("state/get", {"store": "counter"})
    assert mirror.sync(count) == final["state"] == {"count": count}
    assert mirror.coalesced > 0, "the patches should have been coalesced while the client stalled"
    peak_kb = peak_rss_kb(server.process.pid)
    print(f"slow reader: peak RSS {peak_kb} kB, {stalled_kb} kB while stalled")
    assert peak_kb < SLOW_READER_BOUND_MB * 1024, f"peak RSS {peak_kb} kB (stalled: {stalled_kb} kB)"


def test_end_of_input_with_an_effect_in_flight_prints_its_patch_and_exits_zero(stateserver_bin):
    request = {"jsonrpc": "2.0", "id": 1, "method": "dispatch", "params": {
        "store": "counter", "action": {"type": "incrementLater", "afterMs": 100}}}
    # The drain ends when the effect does; its timeout (60 s, not the default 2 s) only
    # bounds a hang, so a loaded machine cannot cancel the 100 ms effect.
    result = subprocess.run([stateserver_bin, "--ephemeral", "--drain-timeout", "60"],
                            input=json.dumps(request).encode() + b"\n", capture_output=True,
                            timeout=90)
    assert result.returncode == 0
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[0] == {"jsonrpc": "2.0", "id": 1, "result": {"store": "counter", "version": 0}}
    assert lines[1]["method"] == "state/patch"
    assert lines[1]["params"]["to"] == 1 and lines[1]["params"]["cause"] == 1


def test_effects_past_the_drain_timeout_are_cancelled_and_the_exit_is_zero(stateserver_bin):
    request = {"jsonrpc": "2.0", "id": 1, "method": "dispatch", "params": {
        "store": "counter", "action": {"type": "incrementLater", "afterMs": 600_000}}}
    result = subprocess.run([stateserver_bin, "--ephemeral", "--drain-timeout", "0.05"],
                            input=json.dumps(request).encode() + b"\n", capture_output=True, timeout=30)
    assert result.returncode == 0
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1]


def test_sigint_drains_like_end_of_input(spawn):
    client = spawn("--drain-timeout", "60")  # ends with the effect; the timeout bounds a hang
    client.dispatch("counter", {"type": "incrementLater", "afterMs": 100}, id="later")
    client.process.send_signal(signal.SIGINT)
    assert client.process.wait(timeout=30) == 0
    client.wait_closed()
    patches = [m["params"] for m in client.messages if isinstance(m, dict) and is_patch(m)]
    assert [(p["from"], p["to"], p.get("cause")) for p in patches] == [(0, 1, "later")]
