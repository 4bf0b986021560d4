"""A client that stops reading, end to end: patches of a store merge while the output is stuck,
but events are never merged, dropped or reordered, a merged patch never crosses an event of its
store, path subscriptions stay exact, and closing and reopening a store under the same id while
stuck never mixes the two stores' versions.
"""
import json
import threading

from stateserver import Mirror

TIMEOUT = 60


def send_while_paused(client, lines):
    """Writes `lines` with the client's reading paused; returns once the server read them all
    (it must keep reading: only patches and fewer events than its bound are queued)."""
    client.pause()
    writer = threading.Thread(
        target=lambda: client.send_bytes(("\n".join(json.dumps(m) for m in lines) + "\n").encode()))
    writer.start()
    writer.join(timeout=TIMEOUT)
    assert not writer.is_alive(), "the server stopped reading while its output was stuck"
    client.resume()


def dispatch(store, action, id=None):
    message = {"jsonrpc": "2.0", "method": "dispatch", "params": {"store": store, "action": action}}
    if id is not None:
        message["id"] = id
    return message


def test_events_are_never_merged_dropped_or_reordered_while_patches_merge(spawn):
    client = spawn("--drain-timeout", "0")
    start = len(client.messages)
    subscribed = client.request("state/subscribe", {"store": "navigation"})
    base = subscribed["version"]
    path_mirror = Mirror(client, "navigation", "/path")
    lines, expected_events, depth, version = [], [], 0, base
    versions_before_event = []
    for n in range(12_000):
        # The stack stays shallow (publishing a navigation view costs its length).
        kind = n % 6
        if kind in (0, 1) and depth < 3:
            lines.append(dispatch("navigation", {"type": "push",
                                                 "destination": {"screen": "settings"}}))
            depth, version = depth + 1, version + 1
        elif kind in (0, 1, 2):
            lines.append(dispatch("navigation", {"type": "pop"}))
            if depth:
                depth, version = depth - 1, version + 1
        elif kind == 3:
            url = f"bad-{n}"
            lines.append(dispatch("navigation", {"type": "openURL", "url": url}))
            expected_events.append({"type": "toast", "message": f"Cannot open {url}."})
            versions_before_event.append(version)
        else:
            lines.append(dispatch("counter", {"type": "increment"}))
    lines.append({"jsonrpc": "2.0", "id": "done", "method": "store/list"})
    send_while_paused(client, lines)
    client.response("done", timeout=TIMEOUT)

    seen_version = base
    events = []
    merged = 0
    for message in client.messages[start:]:
        if not isinstance(message, dict) or message.get("method") is None:
            continue
        params = message["params"]
        if params.get("store") != "navigation":
            continue
        if message["method"] == "state/patch" and params.get("path", "") == "":
            assert params["from"] == seen_version, (params["from"], seen_version)
            merged += params["to"] > params["from"] + 1
            seen_version = params["to"]
        elif message["method"] == "store/event":
            # Every change made before this event's action was written before the event, and no
            # change made after it was merged into a patch before it.
            assert seen_version == versions_before_event[len(events)], len(events)
            events.append(params["event"])
    assert events == expected_events
    assert seen_version == version
    state = client.request("state/get", {"store": "navigation"})
    assert state["version"] == version and len(state["state"]["path"]) == depth
    assert path_mirror.state == state["state"]["path"] and path_mirror.resyncs == 0
    counter = client.request("state/get", {"store": "counter"})
    assert counter["state"] == {"count": 4000}
    # Counter patches had no events in their way: the stall must have merged some.
    counter_patches = [m["params"] for m in client.messages[start:]
                       if isinstance(m, dict) and m.get("method") == "state/patch"
                       and m["params"]["store"] == "counter"]
    assert any(p["to"] > p["from"] + 1 for p in counter_patches), "nothing was coalesced"
    assert client.close(timeout=TIMEOUT) == 0


def test_path_subscriptions_stay_exact_through_coalescing(spawn):
    client = spawn("--drain-timeout", "0")
    client.request("store/open", {"feature": "cart", "store": "k"})
    for n in range(5):
        client.dispatch("k", {"type": "add", "id": f"i{n}", "name": f"N{n}", "price": 100 + n})
    mirrors = [Mirror(client, "k", path) for path in ("", "/items", "/total", "/coupon",
                                                      "/items/0", "/items/0/quantity")]
    lines = []
    for n in range(15_000):
        item = f"i{n % 5}"
        if n % 3 == 0:
            lines.append(dispatch("k", {"type": "setQuantity", "id": item, "quantity": 1 + n % 7}))
        elif n % 3 == 1:
            lines.append(dispatch("k", {"type": "add", "id": item, "name": "x", "price": 1}))
        else:
            lines.append(dispatch("counter", {"type": "increment"}))
    lines.append({"jsonrpc": "2.0", "id": "done", "method": "store/list"})
    send_while_paused(client, lines)
    client.response("done", timeout=TIMEOUT)
    state = client.request("state/get", {"store": "k"})
    for mirror in mirrors:
        expected = state["state"]
        for token in mirror.path.split("/")[1:]:
            expected = expected[int(token)] if isinstance(expected, list) else expected[token]
        assert mirror.resyncs == 0, mirror.path
        assert mirror.state == expected, mirror.path
    assert mirrors[0].coalesced > 0, "nothing was coalesced"
    assert client.close(timeout=TIMEOUT) == 0


def test_close_and_reopen_under_the_same_id_while_stuck(spawn):
    client = spawn("--drain-timeout", "0")
    start = len(client.messages)
    client.request("store/open", {"feature": "counter", "store": "r"})
    lines = []
    for round in range(4):
        lines += [dispatch("r", {"type": "increment"}) for _ in range(1500 + 500 * round)]
        lines.append({"jsonrpc": "2.0", "id": f"close-{round}", "method": "store/close",
                      "params": {"store": "r"}})
        lines.append({"jsonrpc": "2.0", "id": f"open-{round}", "method": "store/open",
                      "params": {"feature": "counter", "store": "r"}})
    lines += [dispatch("r", {"type": "increment"}) for _ in range(100)]
    lines.append({"jsonrpc": "2.0", "id": "done", "method": "store/list"})
    send_while_paused(client, lines)
    client.response("done", timeout=TIMEOUT)
    # Per incarnation of `r`: a continuous chain from 0 to its count, then store/closed.
    chains, current = [], []
    for message in client.messages[start:]:
        if not isinstance(message, dict):
            continue
        params = message.get("params") or {}
        if message.get("method") == "state/patch" and params["store"] == "r":
            current.append((params["from"], params["to"]))
        elif message.get("method") == "store/closed" and params["store"] == "r":
            chains.append(current)
            current = []
        elif str(message.get("id", "")).startswith("open-"):
            assert message["result"]["version"] == 0 and current == []
    chains.append(current)
    assert len(chains) == 5
    for chain, count in zip(chains, [1500, 2000, 2500, 3000, 100]):
        assert chain[0][0] == 0 and chain[-1][1] == count, (chain[:3], chain[-3:], count)
        for (_, to), (following, _) in zip(chain, chain[1:]):
            assert following == to
    assert client.request("state/get", {"store": "r"})["state"] == {"count": 100}
    assert client.close(timeout=TIMEOUT) == 0
