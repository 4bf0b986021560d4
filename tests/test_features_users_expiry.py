"""Issue 30: `isStale` follows the list's age. A load sets a timer on the server's clock for
`expiresAt`; with `--clock virtual` moving time past it patches `isStale` to true, with no
sleeping and no `load` needed to notice. The timer runs in the background: `wait: "settled"`
does not wait for it, nor does the shutdown."""
import time

TTL_MS = 300_000   # --users-ttl's default, 300 s
LATENCY_MS = 50    # the backend's default latency


def load_view(client):
    return client.request("state/get", {"store": "users", "path": "/load"})["state"]


def stale_patches(client, start):
    return [m["params"] for m in client.messages[start:]
            if m.get("method") == "state/patch" and m["params"]["store"] == "users"
            and any(op["path"] == "/load/isStale" for op in m["params"]["patch"])]


def test_advancing_past_expires_at_patches_is_stale(virtual_clock):
    client = virtual_clock.client
    client.request("dispatch", {"store": "users", "action": {"type": "load"}})
    virtual_clock.advance(LATENCY_MS)
    view = load_view(client)
    assert view["status"] == "loaded" and view["isStale"] is False

    start = len(client.messages)
    virtual_clock.advance(TTL_MS - 1)
    assert load_view(client)["isStale"] is False and stale_patches(client, start) == []

    started = time.monotonic()
    virtual_clock.advance(1)
    patch, = stale_patches(client, start)
    assert {"op": "replace", "path": "/load/isStale", "value": True} in patch["patch"]
    assert "cause" not in patch or patch["cause"] is None  # no client's request made it
    assert load_view(client)["isStale"] is True
    assert time.monotonic() - started < 5  # moved, not waited for


def test_a_reload_restarts_the_timer(virtual_clock):
    client = virtual_clock.client
    client.request("dispatch", {"store": "users", "action": {"type": "load"}})
    virtual_clock.advance(LATENCY_MS)
    virtual_clock.advance(200_000)
    client.request("dispatch", {"store": "users", "action": {"type": "refresh"}})
    virtual_clock.advance(LATENCY_MS)
    virtual_clock.advance(TTL_MS - 1)  # the first load's time has long passed
    assert load_view(client)["isStale"] is False
    virtual_clock.advance(1)
    assert load_view(client)["isStale"] is True


def test_a_settled_load_does_not_wait_for_the_timer(stateserver_spawn):
    # A real clock: were the five-minute timer waited for, this reply would not come.
    client = stateserver_spawn("--latency", "0")
    started = time.monotonic()
    reply = client.request("dispatch", {"store": "users", "action": {"type": "load"},
                                        "wait": "settled"}, timeout=30)
    assert reply["version"] >= 1
    assert load_view(client)["status"] == "loaded"
    assert time.monotonic() - started < 30
    # Nor does the shutdown's drain: the timer is cancelled, not waited out.
    started = time.monotonic()
    assert client.close() == 0
    assert time.monotonic() - started < 10
    assert "effects still running after the drain timeout" not in client.stderr_text()
