"""Time travel that branches, over the wire: `history/skip` recomputes the state without a past
action (compared with a store that never saw it), `store/fork` opens a sandbox at a version,
`state/diff` compares two stores, `state/blame` names the entry that last changed a value and
who set it off, and a recorded skip replays."""
import json
import subprocess

import pytest

from stateserver import RPCError


def patches(client, store, start=0):
    return [m["params"] for m in client.messages[start:]
            if isinstance(m, dict) and m.get("method") == "state/patch"
            and m["params"]["store"] == store]


def three_edits(client, store="counter"):
    """increment, set 10, increment: skipping any one of them gives a different count."""
    client.dispatch(store, {"type": "increment"}, id="e1")
    client.dispatch(store, {"type": "set", "value": 10}, id="e2")
    return client.dispatch(store, {"type": "increment"}, id="e3")["version"]


def skip(client, version, skipped=True, store="counter", id=None):
    return client.request("history/skip", {"store": store, "version": version,
                                           "skipped": skipped}, id=id)


def test_skipping_the_middle_of_three_edits_equals_a_store_that_never_saw_it(spawn):
    client = spawn("--history", "100")
    assert three_edits(client) == 3
    start = len(client.messages)
    assert skip(client, 2, id="skip") == {"store": "counter", "version": 4}
    client.request("store/open", {"feature": "counter", "store": "never"})
    client.dispatch("never", {"type": "increment"})
    client.dispatch("never", {"type": "increment"})
    assert client.request("state/get", {"store": "counter"})["state"] == {"count": 2}
    diff = client.request("state/diff", {"store": "counter", "other": "never"})
    assert diff["patch"] == [] and diff["version"] == 4 and diff["otherVersion"] == 2
    # One ordinary patch to every subscriber, caused by the skip request.
    [patch] = patches(client, "counter", start)
    assert patch == {"store": "counter", "from": 3, "to": 4, "cause": "skip",
                     "patch": [{"op": "replace", "path": "/count", "value": 2}]}
    entries = client.history("counter")["entries"]
    assert [(e["kind"], e.get("skipped")) for e in entries] == [
        ("action", False), ("action", True), ("action", False), ("skip", True)]
    assert entries[-1]["entry"] == entries[1]["seq"]
    assert entries[-1]["origin"] == {"request": "skip"}
    # The skipped entry keeps what it published then.
    assert client.state_at("counter", 2)["state"] == {"count": 10}


def test_unskip_restores_and_a_toggle_to_the_same_value_changes_nothing(spawn):
    client = spawn("--history", "100")
    three_edits(client)
    skip(client, 2)
    assert skip(client, 1)["version"] == 5
    assert client.request("state/get", {"store": "counter"})["state"] == {"count": 1}
    skip(client, 2, skipped=False)
    assert client.request("state/get", {"store": "counter"})["state"] == {"count": 11}
    # Back to all three: the same view as before, so no new version, but a skip entry.
    assert skip(client, 1, skipped=False)["version"] == 6
    assert client.request("state/get", {"store": "counter"})["state"] == {"count": 11}
    assert [e["skipped"] for e in client.history("counter")["entries"][:3]] == [False] * 3
    # A toggle to what the flag already is changes nothing and makes no entry.
    assert skip(client, 1, skipped=False)["version"] == 6
    assert len(client.history("counter")["entries"]) == 7


def test_a_skip_history_trimmed_before_says_the_oldest_recomputable(spawn):
    client = spawn("--history", "4")
    for i in range(20):
        client.dispatch("counter", {"type": "increment"})
    first = client.history("counter")["first"]
    with pytest.raises(RPCError) as trimmed:
        skip(client, 1)
    assert trimmed.value.code == -32005
    assert trimmed.value.data["oldest"] == first + 1
    assert trimmed.value.data["pointer"] == "/version"
    assert "trimmed" in trimmed.value.data["reason"]
    with pytest.raises(RPCError) as ahead:
        skip(client, 21)
    assert ahead.value.code == -32602 and ahead.value.data["current"] == 20
    with pytest.raises(RPCError) as missing:
        client.request("history/skip", {"store": "counter", "version": 20})
    assert missing.value.code == -32602 and missing.value.data["pointer"] == "/skipped"


def test_an_action_before_a_rewind_is_refused_with_the_rewind_named(spawn):
    client = spawn("--history", "100")
    three_edits(client)
    client.request("store/rewind", {"store": "counter", "version": 1})
    client.dispatch("counter", {"type": "increment"})
    with pytest.raises(RPCError) as rewound:
        skip(client, 2)
    assert rewound.value.code == -32005
    assert rewound.value.data["rewound"] == 4 and rewound.value.data["oldest"] == 5


def test_a_fork_starts_at_the_version_and_edits_apart(spawn):
    client = spawn("--history", "100")
    three_edits(client)
    fork = client.request("store/fork", {"store": "counter", "version": 2, "as": "sandbox"})
    assert fork == {"store": "sandbox", "feature": "counter", "from": "counter", "version": 2,
                    "state": {"count": 10}}
    client.dispatch("sandbox", {"type": "decrement"})
    assert client.request("state/get", {"store": "sandbox"})["state"] == {"count": 9}
    assert client.request("state/get", {"store": "counter"})["state"] == {"count": 11}
    diff = client.request("state/diff", {"store": "counter", "other": "sandbox"})
    assert diff["patch"] == [{"op": "replace", "path": "/count", "value": 9}]
    stores = {s["store"]: s for s in client.request("store/list")["stores"]}
    assert "sandbox" in stores
    with pytest.raises(RPCError) as exists:
        client.request("store/fork", {"store": "counter", "as": "sandbox"})
    assert exists.value.code == -32004
    with pytest.raises(RPCError) as gone:
        client.request("store/fork", {"store": "counter", "version": 99})
    assert gone.value.code == -32602 and gone.value.data["current"] == 3


def test_blame_names_the_last_writer_its_predecessors_and_who_set_them_off(spawn):
    client = spawn("--history", "100")
    client.dispatch("counter", {"type": "set", "value": 4}, id="s1")
    client.dispatch("counter", {"type": "incrementLater", "afterMs": 0}, id="later",
                    wait="settled")
    blame = client.request("state/blame", {"store": "counter", "path": "/count"})
    last = blame["last"]
    assert last["version"] == 2 and last["path"] == "/count"
    # Sent by the effect of incrementLater, which the request "later" sent.
    trigger, request = last["chain"]
    assert trigger["action"] == {"type": "incrementLater", "afterMs": 0}
    assert [e["kind"] for e in trigger["effects"]] == ["run"]
    assert request == {"request": "later"}
    assert [e["version"] for e in blame["before"]] == [1]
    assert blame["before"][0]["chain"] == [{"request": "s1"}]
    with pytest.raises(RPCError) as nowhere:
        client.request("state/blame", {"store": "counter", "path": "/nothing"})
    assert nowhere.value.code == -32602 and nowhere.value.data["pointer"] == "/path"


def test_rpc_discover_lists_the_branching_methods(server):
    names = {m["name"] for m in server.request("rpc.discover")["methods"]}
    assert {"history/skip", "store/fork", "state/diff", "state/blame"} <= names


def test_a_recorded_skip_replays(spawn, stateserver_bin, tmp_path):
    path = tmp_path / "skip.ndjson"
    client = spawn("--record", str(path), "--history", "100")
    three_edits(client)
    skip(client, 2)
    client.dispatch("counter", {"type": "increment"})
    assert client.close() == 0
    kinds = [json.loads(line).get("kind") for line in path.read_text().splitlines()]
    assert "skip" in kinds
    result = subprocess.run([stateserver_bin, "replay", str(path)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["replay"] == "match"


def test_the_python_clients_speak_the_branching_methods(spawn, stateserver_bin):
    """`skip`, `fork`, `diff` and `blame` on both clients send the methods above and return
    their results."""
    import asyncio

    from stateserver import AsyncClient

    client = spawn("--history", "100")
    three_edits(client)
    assert client.skip("counter", 2) == {"store": "counter", "version": 4}
    fork = client.fork("counter", 1, as_="sandbox")
    assert fork["store"] == "sandbox" and fork["state"] == {"count": 1}
    assert client.diff("counter", "sandbox")["patch"] == [
        {"op": "replace", "path": "/count", "value": 1}]
    assert client.blame("counter", "/count")["last"]["version"] == 4
    assert client.skip("counter", 2, skipped=False) == {"store": "counter", "version": 5}

    async def run():
        async with await AsyncClient.spawn([stateserver_bin, "--ephemeral", "--history", "100"]) \
                as other:
            await other.dispatch("counter", {"type": "increment"})
            await other.dispatch("counter", {"type": "set", "value": 10})
            assert await other.skip("counter", 2) == {"store": "counter", "version": 3}
            assert (await other.fork("counter", as_="copy"))["store"] == "copy"
            assert (await other.diff("counter", "copy"))["patch"] == []
            assert (await other.blame("counter", "/count", limit=1))["last"]["version"] == 3
    asyncio.run(run())


def test_a_typed_store_forks_into_a_store_of_its_own_type(spawn):
    """The generated bindings' `TypedStore` skips, forks (typed as the original), diffs and
    blames."""
    from stateserver import features

    client = spawn("--history", "100")
    counter = features.store(client, "counter")
    three_edits(client)
    sandbox = counter.fork(1, as_="typed-sandbox")
    assert sandbox.store == "typed-sandbox" and sandbox.state() == {"count": 1}
    assert counter.diff(sandbox) == [{"op": "replace", "path": "/count", "value": 1}]
    assert counter.skip(2) == {"store": "counter", "version": 4}
    assert counter.blame("/count")["last"]["version"] == 4
