"""The virtual clock over the wire (`--clock virtual`, `clock/advance`, `clock/now`): a client's
test of a debounce or a backend's latency moves time instead of sleeping through it."""
import time

import pytest

from stateserver.errors import RPCError

DEBOUNCE_MS = 300  # UsersFeature.searchDebounce
LATENCY_MS = 50    # the backend's default latency


def users(client):
    return client.request("state/get", {"store": "users"})["state"]


def searches(client):
    return client.request("state/get", {"store": "backend"})["state"]["requests"].get(
        "searchUsers", 0)


def test_the_debounced_search_runs_when_time_reaches_it_and_not_before(virtual_clock):
    client = virtual_clock.client
    client.request("dispatch", {"store": "users", "action": {"type": "load"}})
    assert users(client)["load"]["status"] == "loading"
    assert virtual_clock.advance(LATENCY_MS) == LATENCY_MS
    assert users(client)["load"]["status"] == "loaded"

    started = time.monotonic()
    for query in ["c", "ca", "carla"]:  # typing: each keystroke restarts the debounce
        client.request("dispatch", {"store": "users", "action": {"type": "search",
                                                                 "query": query}})
    assert virtual_clock.advance(DEBOUNCE_MS - 1) == LATENCY_MS + DEBOUNCE_MS - 1
    assert users(client)["searching"] is True and searches(client) == 0

    virtual_clock.advance(1)
    assert searches(client) == 1  # the backend was asked once, for the last query
    assert users(client)["searching"] is True  # its reply takes the backend's latency

    # The response comes after the patches of what ran: the last one before it is the results.
    start = len(client.messages)
    virtual_clock.advance(LATENCY_MS)
    patches = [m["params"] for m in client.messages[start:]
               if m.get("method") == "state/patch" and m["params"]["store"] == "users"]
    assert patches and any(op["path"] == "/results" for op in patches[-1]["patch"])
    view = users(client)
    assert view["searching"] is False
    assert view["results"] and all("Carla" in u["name"] for u in view["results"])
    assert virtual_clock.now() == 2 * LATENCY_MS + DEBOUNCE_MS
    # No real time was waited for: the whole search took well under its own debounce.
    assert time.monotonic() - started < DEBOUNCE_MS / 1000


def test_a_real_clock_refuses_to_advance_and_says_how_to_get_a_virtual_one(stateserver):
    assert stateserver.request("clock/now")["clock"] == "real"
    with pytest.raises(RPCError) as refused:
        stateserver.request("clock/advance", {"ms": 10})
    assert "--clock virtual" in refused.value.data["reason"]


def test_initialize_chooses_the_virtual_clock_for_a_spawned_test_server(stateserver):
    result = stateserver.request("initialize", {"protocolVersion": 1, "clock": "virtual"})
    assert result["capabilities"]["clock"] == "virtual"
    stateserver.request("dispatch", {"store": "users", "action": {"type": "load"}})
    stateserver.request("clock/advance", {"ms": LATENCY_MS - 1})
    assert users(stateserver)["load"]["status"] == "loading"
    assert stateserver.request("clock/advance", {"ms": 1}) == {"clock": "virtual",
                                                                "now": LATENCY_MS}
    assert users(stateserver)["load"]["status"] == "loaded"
    with pytest.raises(RPCError) as refused:
        stateserver.request("initialize", {"clock": "real"})
    assert refused.value.data["pointer"] == "/clock"


@pytest.mark.parametrize("ms, words", [(-1, "from 0 to"), ("10", "integer")])
def test_advance_refuses_a_negative_or_non_integer_duration(virtual_clock, ms, words):
    with pytest.raises(RPCError) as refused:
        virtual_clock.client.request("clock/advance", {"ms": ms})
    assert refused.value.data["pointer"] == "/ms"
    assert words in refused.value.data["reason"]


def test_both_python_clients_move_a_virtual_clock(stateserver_bin):
    """`advance` and `now` on the sync and the asyncio client are `clock/advance` and
    `clock/now`."""
    import asyncio

    from stateserver import AsyncClient, Client

    with Client.spawn([stateserver_bin, "--ephemeral", "--clock", "virtual"]) as client:
        assert client.now() == 0
        assert client.advance(250) == 250
        assert client.now() == 250

    async def run():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral", "--clock",
                                            "virtual"]) as other:
            assert await other.advance(40) == 40
            assert await other.now() == 40
    asyncio.run(run())
