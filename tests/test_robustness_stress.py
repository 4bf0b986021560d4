"""Semantics under stress, end to end: many stores opened with store/open, thousands of
pipelined dispatches interleaved across them (requests, notifications, `wait: "settled"` on
async actions: counter `incrementLater`, users `search`, cart `applyCoupon`), a Mirror per store
and per subscribed path. Every patch chain must be continuous, every response must come after the
patches it reports, every published cart must satisfy its derived totals, and at the end each
mirror must equal `state/get` and each store the state its actions imply.
"""
import json
import random
import threading

from stateserver import Mirror

SEED = 424242
TIMEOUT = 60


class Recorder:
    """Watches every message on the reader thread: per store, the chain of root patches (and the
    highest version written so far), and for each response, the versions patched before it."""

    def __init__(self, client):
        self.lock = threading.Lock()
        self.errors = []
        self.chain = {}          # store -> last `to` of a root patch
        self.patched = {}        # store -> highest root `to` written so far
        self.coalesced = 0
        self.patches = 0
        self.response_checks = {}  # id -> (store, highest patched `to` when the response came)
        self.causes = {}         # store -> set of cause ids seen
        client.add_listener(self.on_message)

    def start(self, store, version):
        with self.lock:
            self.chain[store] = version
            self.patched[store] = version

    def on_message(self, message):
        if isinstance(message, list):
            for reply in message:
                self.on_response(reply)
            return
        if message.get("method") == "state/patch":
            params = message["params"]
            store = params["store"]
            if params.get("path", "") != "":
                return
            with self.lock:
                self.patches += 1
                if store not in self.chain:
                    return
                if params["from"] != self.chain[store]:
                    self.errors.append(f"{store}: patch {params['from']}->{params['to']} after "
                                       f"{self.chain[store]}")
                if params["to"] <= params["from"]:
                    self.errors.append(f"{store}: patch {params['from']}->{params['to']}")
                elif params["to"] > params["from"] + 1:
                    self.coalesced += 1
                self.chain[store] = params["to"]
                self.patched[store] = max(self.patched[store], params["to"])
                if "cause" in params:
                    self.causes.setdefault(store, set()).add(json.dumps(params["cause"]))
        elif "id" in message and "method" not in message:
            self.on_response(message)

    def on_response(self, reply):
        result = reply.get("result")
        if isinstance(result, dict) and set(result) == {"store", "version"}:
            with self.lock:
                store = result["store"]
                if store in self.patched:
                    self.response_checks[json.dumps(reply["id"])] = (
                        store, result["version"], self.patched[store])


def cart_invariants(state):
    items = state["items"]
    assert state["total"] == sum(i["price"] * i["quantity"] for i in items), state
    assert state["badgeCount"] == sum(i["quantity"] for i in items), state
    assert len({i["id"] for i in items}) == len(items), state
    assert all(i["quantity"] > 0 for i in items), state


def test_interleaved_dispatches_across_many_stores_keep_every_mirror_exact(spawn):
    client = spawn("--latency", "3", "--drain-timeout", "1")
    rng = random.Random(SEED)
    recorder = Recorder(client)

    all_users = client.dispatch("users", {"type": "load"}, wait="settled")
    users = client.request("state/get", {"store": "users", "path": "/users"})["state"]
    assert all_users["version"] >= 1 and len(users) == 50

    counters = [f"c{i}" for i in range(6)]
    carts = [f"k{i}" for i in range(4)]
    searches = [f"u{i}" for i in range(3)]
    stores = {}
    for name in counters:
        stores[name] = client.request("store/open", {"feature": "counter", "store": name})
    for name in carts:
        stores[name] = client.request("store/open", {"feature": "cart", "store": name})
    for name in searches:
        stores[name] = client.request("store/open", {"feature": "users", "store": name})
    # A store opened with a merge patch and a generated id.
    preset = client.request("store/open", {"feature": "counter", "state": {"count": 100}})
    assert preset["state"] == {"count": 100} and preset["version"] == 0
    counters.append(preset["store"])

    mirrors = {}
    for name in list(counters) + carts + searches:
        mirror = Mirror(client, name)
        recorder.start(name, mirror.version)
        mirrors[name] = mirror
    # Path subscriptions next to the root ones.
    path_mirrors = [Mirror(client, counters[0], "/count"), Mirror(client, carts[0], "/items"),
                    Mirror(client, searches[0], "/query")]

    cart_states = []

    def keep_cart_state(message):
        # Runs after the mirrors' listeners (added earlier): every published cart state.
        if isinstance(message, dict) and message.get("method") == "state/patch":
            params = message["params"]
            if params["store"] in carts and params.get("path", "") == "":
                cart_states.append(mirrors[params["store"]].state)

    client.add_listener(keep_cart_state)

    expected_count = {name: 0 for name in counters}
    expected_count[preset["store"]] = 100
    changes = {name: 0 for name in counters}
    last_query = {name: "" for name in searches}
    requests = []
    settled = []
    for n in range(3000):
        kind = rng.random()
        if kind < 0.55:
            store = rng.choice(counters)
            roll = rng.random()
            if roll < 0.5:
                action = {"type": "increment"}
                expected_count[store] += 1
            elif roll < 0.7:
                action = {"type": "decrement"}
                expected_count[store] -= 1
            else:
                action = {"type": "incrementLater", "afterMs": rng.choice([0, 1, 5, 20])}
                expected_count[store] += 1
            changes[store] += 1
        elif kind < 0.85:
            store = rng.choice(carts)
            roll = rng.random()
            item = rng.choice(["a", "b", "c", "d"])
            if roll < 0.45:
                action = {"type": "add", "id": item, "name": item.upper(),
                          "price": rng.choice([100, 250, 999])}
            elif roll < 0.65:
                action = {"type": "setQuantity", "id": item, "quantity": rng.randint(0, 4)}
            elif roll < 0.75:
                action = {"type": "remove", "id": item}
            elif roll < 0.93:
                action = {"type": "applyCoupon", "code": rng.choice(["SAVE10", "save10", "NOPE"])}
            else:
                action = {"type": "clearCoupon"}
        else:
            store = rng.choice(searches)
            query = rng.choice(["", "a", "an", "ar", "e", "zzz", "ñ", "."])
            action = {"type": "search", "query": query}
            last_query[store] = query
        params = {"store": store, "action": action}
        wait = action["type"] in ("incrementLater", "search", "applyCoupon") and rng.random() < 0.6
        if wait:
            params["wait"] = "settled"
        if not wait and rng.random() < 0.2:
            client.notify("dispatch", params)  # fire and forget
            continue
        id = rng.choice([10**9 + n, f"r{n}"])  # apart from the client's own ids
        client.send({"jsonrpc": "2.0", "id": id, "method": "dispatch", "params": params})
        requests.append((id, store))
        if wait:
            settled.append(id)

    # Every request is answered with its store's version, after the patches it reports.
    for id, store in requests:
        reply = client.response(id, timeout=TIMEOUT)
        assert "result" in reply, reply
        assert reply["result"]["store"] == store
    # Quiesce: a last settled search per users store, coupons cancelled, so nothing changes
    # while the final states are compared.
    for name in searches:
        last_query[name] = "an"
        client.dispatch(name, {"type": "search", "query": "an"}, wait="settled",
                        id=f"quiet-{name}", timeout=TIMEOUT)
        requests.append((f"quiet-{name}", name))
    for name in carts:
        client.dispatch(name, {"type": "clearCoupon"}, wait="settled", id=f"quiet-{name}",
                        timeout=TIMEOUT)
        requests.append((f"quiet-{name}", name))
    # The last of each counter's incrementLater may still run (reduced waits do not wait for
    # effects): the mirrors reach the version that every action implies.
    for name in counters:
        mirrors[name].sync(changes[name], timeout=TIMEOUT)
    with recorder.lock:
        assert not recorder.errors, recorder.errors[:10]
        for id, store in requests:
            owner, version, patched = recorder.response_checks[json.dumps(id)]
            assert owner == store
            assert patched >= version, (
                f"response {id!r} reports {store} at {version} before its patch (at {patched})")

    for name in counters:
        state = client.request("state/get", {"store": name})
        assert state["version"] == changes[name], name
        assert state["state"] == {"count": expected_count[name]}, name
    for name in list(mirrors):
        state = client.request("state/get", {"store": name})
        assert mirrors[name].sync(state["version"], timeout=TIMEOUT) == state["state"], name
        assert mirrors[name].resyncs == 0, f"{name}: a gap in the patches"
    for mirror in path_mirrors:
        # A path subscription skips versions that left its subtree alone, so Mirror.sync cannot
        # wait for the store's version; nothing changes any more and this response comes after
        # every patch written before it, which the mirror has applied by then.
        state = client.request("state/get", {"store": mirror.store, "path": mirror.path})
        assert mirror.version <= state["version"] and mirror.resyncs == 0
        assert mirror.state == state["state"], mirror.path
    for name in carts:
        cart_invariants(client.request("state/get", {"store": name})["state"])
    for state in cart_states:
        cart_invariants(state)
    for name in searches:
        state = client.request("state/get", {"store": name})["state"]
        query = last_query[name]
        assert state["query"] == query and state["searching"] is False, name
        if query.strip():
            wanted = [u["id"] for u in users
                      if query.lower() in u["name"].lower() or query.lower() in u["email"].lower()]
            assert [u["id"] for u in state["results"]] == wanted, (name, query)
    # Causes name requests sent to the same store (notifications carry none).
    sent_to = {}
    for id, store in requests:
        sent_to.setdefault(store, set()).add(json.dumps(id))
    for store, causes in recorder.causes.items():
        if store in sent_to:
            assert causes <= sent_to[store], (store, causes - sent_to[store])
    assert client.close(timeout=TIMEOUT) == 0


def test_settled_waits_on_one_store_do_not_wait_for_other_transactions(spawn):
    """`settled` covers the effects of its own action (and what they feed back), not a slower
    action sent before it: a 20 ms incrementLater settles while a 60 s one is still pending."""
    client = spawn("--drain-timeout", "0")
    slow = client.dispatch("counter", {"type": "incrementLater", "afterMs": 60_000})
    assert slow == {"store": "counter", "version": 0}
    for i in range(20):
        result = client.dispatch("counter", {"type": "incrementLater", "afterMs": 1},
                                 wait="settled", timeout=TIMEOUT)
        assert result == {"store": "counter", "version": i + 1}
    assert client.close(timeout=TIMEOUT) == 0


def test_patches_are_merged_for_a_stalled_reader_and_the_mirror_stays_exact(spawn):
    """A client that stops reading while thousands of cart and counter changes go in: the
    patches it later gets may be coalesced (to > from + 1) but the chains stay continuous and the
    mirrors equal state/get."""
    client = spawn("--drain-timeout", "0")
    recorder = Recorder(client)
    for name, feature in (("s-counter", "counter"), ("s-cart", "cart")):
        client.request("store/open", {"feature": feature, "store": name})
    mirrors = {name: Mirror(client, name) for name in ("s-counter", "s-cart")}
    for name, mirror in mirrors.items():
        recorder.start(name, mirror.version)
    client.pause()
    lines = []
    for n in range(20_000):
        if n % 2:
            params = {"store": "s-counter", "action": {"type": "increment"}}
        else:
            params = {"store": "s-cart", "action": {"type": "add", "id": f"i{n % 50}",
                                                    "name": "N", "price": 1}}
        lines.append(json.dumps({"jsonrpc": "2.0", "method": "dispatch", "params": params}))
    lines.append(json.dumps({"jsonrpc": "2.0", "id": "last", "method": "store/list"}))
    writer = threading.Thread(target=lambda: client.send_bytes(("\n".join(lines) + "\n").encode()))
    writer.start()
    # The server must keep reading while its output is stuck (patches merge, nothing is owed
    # but one response), so the whole input goes in although nobody reads.
    writer.join(timeout=TIMEOUT)
    assert not writer.is_alive(), "the server stopped reading while only patches were queued"
    client.resume()
    client.response("last", timeout=TIMEOUT)
    for name, mirror in mirrors.items():
        state = client.request("state/get", {"store": name})
        assert mirror.sync(state["version"], timeout=TIMEOUT) == state["state"], name
        assert mirror.resyncs == 0
    assert mirrors["s-counter"].state == {"count": 10_000}
    assert mirrors["s-cart"].state["badgeCount"] == 10_000
    cart_invariants(mirrors["s-cart"].state)
    with recorder.lock:
        assert not recorder.errors, recorder.errors[:10]
        assert recorder.coalesced > 0, "nothing was coalesced: the reader was never behind"
    assert client.close(timeout=TIMEOUT) == 0
