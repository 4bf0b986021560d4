"""History, time travel and record/replay through the protocol: `history/get` paging and
bounds, `state/get` at a version, `store/rewind` with an effect in flight, the debug log of
reduced actions, and `--record` sessions of every reference-app feature replayed by
`stateserver replay` (all match; a changed patch is named; another fingerprint is refused)."""
import json
import subprocess
import time

import pytest

from conftest import line_validator
from stateserver import RPCError


def counter_patches(client, start=0):
    return [m["params"] for m in client.messages[start:]
            if isinstance(m, dict) and m.get("method") == "state/patch"
            and m["params"]["store"] == "counter"]


def increments(client, count, store="counter"):
    for i in range(1, count + 1):
        client.send({"jsonrpc": "2.0", "id": f"i{i}", "method": "dispatch",
                     "params": {"store": store, "action": {"type": "increment"}}})
    return client.response(f"i{count}")["result"]["version"]


def test_history_pages_oldest_first_and_holds_about_the_bound(spawn):
    client = spawn("--history", "100")
    assert increments(client, 300) == 300
    whole = client.history("counter")
    first = whole["first"]
    assert whole["version"] == 300
    # The bound and fewer than a snapshot interval (64) more: entries leave 64 at a time.
    # Snapshots after entries 0, 64, ..., 256: 192 is the last with 100 entries after it.
    assert len(whole["entries"]) == 300 - 192
    assert first == 192
    assert first == whole["entries"][0]["version"] - 1
    assert [e["version"] for e in whole["entries"]] == list(range(first + 1, 301))
    entry = whole["entries"][-1]
    assert entry["action"] == {"type": "increment"}
    assert entry["origin"] == {"request": "i300"}
    assert entry["patch"] == [{"op": "replace", "path": "/count", "value": 300}]
    assert entry["kind"] == "action" and entry["durationUs"] >= 0 and entry["at"].endswith("Z")
    # Paging by `since` = the last version received visits every entry once.
    seen, since = [], first
    while True:
        page = client.history("counter", since=since, limit=30)
        assert page["first"] == first
        if not page["entries"]:
            break
        assert len(page["entries"]) <= 30
        seen += [e["version"] for e in page["entries"]]
        since = page["entries"][-1]["version"]
    assert seen == list(range(first + 1, 301))
    assert client.history("counter", since=300)["entries"] == []
    assert client.history("counter", limit=0)["entries"] == []


def test_state_at_every_held_version_and_refusals_past_the_bound(spawn):
    client = spawn("--history", "100")
    increments(client, 250)
    first = client.history("counter")["first"]
    # Every version held, from the checkpoint to the current one.
    for version in range(first, 251):
        assert client.state_at("counter", version) == {
            "store": "counter", "version": version, "state": {"count": version}}
    assert client.state_at("counter", 200, path="/count")["state"] == 200
    with pytest.raises(RPCError) as evicted:
        client.state_at("counter", first - 1)
    assert evicted.value.code == -32602
    assert evicted.value.data["oldest"] == first
    assert evicted.value.data["pointer"] == "/version"
    with pytest.raises(RPCError) as ahead:
        client.state_at("counter", 251)
    assert ahead.value.code == -32602 and ahead.value.data["current"] == 250
    # Without a version, state/get is the current state as before.
    assert client.request("state/get", {"store": "counter"})["version"] == 250


def test_state_at_across_snapshot_boundaries_and_a_rewind_matches_the_states_seen_then(spawn):
    # A snapshot of the published state is kept every 64 versions and a past state is the
    # nearest one patched forward; the oldest versions held come from the checkpoint instead.
    # A cart edited in place (items added, requantified, removed) and rewound midway.
    client = spawn("--history", "300")
    seen = {}

    def record():
        current = client.request("state/get", {"store": "cart"})
        seen[current["version"]] = current["state"]

    record()
    for step in range(420):
        item = f"sku-{step % 37}"
        if step % 7 == 3:
            client.dispatch("cart", {"type": "remove", "id": item})
        elif step % 5 == 1:
            client.dispatch("cart", {"type": "setQuantity", "id": item, "quantity": step % 9 + 1})
        else:
            client.dispatch("cart", {"type": "add", "id": item, "name": f"item {step}",
                                     "price": step % 400 + 1})
        record()
        if step == 250:
            client.rewind("cart", max(seen) - 100)
            record()
    first = client.history("cart")["first"]
    current = max(seen)
    assert current - first >= 200  # several snapshot intervals held, the bound passed
    for version in range(first, current + 1):
        if version in seen:
            assert client.state_at("cart", version)["state"] == seen[version], version
    with pytest.raises(RPCError) as evicted:
        client.state_at("cart", first - 1)
    assert evicted.value.data["oldest"] == first


def test_history_off_refuses_history_requests_and_says_how_to_turn_it_on(spawn):
    client = spawn("--history", "0")
    increments(client, 2)
    assert client.request("initialize", {})["capabilities"]["history"] == 0
    for method, params in (("history/get", {"store": "counter"}),
                           ("state/get", {"store": "counter", "version": 1}),
                           ("store/rewind", {"store": "counter", "version": 1})):
        with pytest.raises(RPCError) as refused:
            client.request(method, params)
        assert refused.value.code == -32602
        assert "--history" in refused.value.data["reason"]


def test_bad_history_params_are_refused_with_a_pointer(server):
    for params, pointer in (({"store": "counter", "since": -1}, "/since"),
                            ({"store": "counter", "limit": "ten"}, "/limit"),
                            ({}, "/store")):
        with pytest.raises(RPCError) as refused:
            server.request("history/get", params)
        assert refused.value.code == -32602 and refused.value.data["pointer"] == pointer
    with pytest.raises(RPCError) as missing:
        server.request("store/rewind", {"store": "counter"})
    assert missing.value.data["pointer"] == "/version"
    with pytest.raises(RPCError) as unknown:
        server.history("nope")
    assert unknown.value.code == -32001


def effect_statuses(client):
    return [effect["status"] for entry in client.history("counter")["entries"]
            for effect in entry["effects"]]


def test_rewind_cancels_the_effect_in_flight_and_no_late_patch_arrives(server):
    start = len(server.messages)
    increments(server, 2)
    # An effect that must still be in flight never ends during the test: ten minutes.
    server.dispatch("counter", {"type": "incrementLater", "afterMs": 600_000})
    assert effect_statuses(server) == ["running"]
    assert server.rewind("counter", 1) == {"store": "counter", "version": 3}
    deadline = time.monotonic() + 30
    while effect_statuses(server) != ["cancelled"]:
        assert time.monotonic() < deadline, effect_statuses(server)
        time.sleep(0.01)
    assert server.dispatch("counter", {"type": "increment"})["version"] == 4
    patches = counter_patches(server, start)
    assert [(p["from"], p["to"], p["patch"][0]["value"]) for p in patches] == [
        (0, 1, 1), (1, 2, 2), (2, 3, 1), (3, 4, 2)]
    rewind = server.history("counter", since=2)["entries"][0]
    assert rewind["kind"] == "rewind" and rewind["to"] == 1 and rewind["action"] is None
    # The cancelled effect's action is linked to the entry that started it.
    later = next(e for e in server.history("counter")["entries"]
                 if e["action"] == {"type": "incrementLater", "afterMs": 600_000})
    assert later["effects"][0]["action"] == later["seq"]
    # Mirrors stay exact: the state at the new version is the rewound one, and the old
    # versions still come back.
    assert server.state_at("counter", 3)["state"] == {"count": 1}
    assert server.state_at("counter", 2)["state"] == {"count": 2}


def test_debug_log_names_each_reduced_action(spawn):
    client = spawn("--log-level", "debug")
    client.request("dispatch", {"store": "counter", "action": {"type": "increment"}}, id="a")
    client.dispatch("counter", {"type": "set", "value": 5}, id=7)
    assert client.close() == 0
    lines = [line for line in client.stderr_text().splitlines() if ": reduced " in line]
    assert len(lines) == 2, client.stderr_text()
    assert lines[0].startswith(
        "stateserver: debug: reduced store=counter type=increment origin=request \"a\" version=1 ")
    assert lines[1].startswith(
        "stateserver: debug: reduced store=counter type=set origin=request 7 version=2 ")
    assert all(" durationUs=" in line for line in lines)


# Record and replay

def settled(client, store, action):
    return client.dispatch(store, action, wait="settled")


def every_feature_session(client):
    """The walk through the reference app (docs/guide/reference-app.md), plus a rewind and a
    store opened and closed: every feature, every kind of entry."""
    settled(client, "counter", {"type": "increment"})
    settled(client, "counter", {"type": "incrementLater", "afterMs": 20})
    settled(client, "backend", {"type": "setLatency", "ms": 5})
    settled(client, "users", {"type": "load"})
    settled(client, "users", {"type": "search", "query": "carla"})
    settled(client, "users", {"type": "select", "id": 42})
    settled(client, "cart", {"type": "add", "id": "tea", "name": "Tea", "price": 450})
    settled(client, "cart", {"type": "add", "id": "tea", "name": "Tea", "price": 450})
    with pytest.raises(RPCError):
        settled(client, "cart", {"type": "setQuantity", "id": "tea", "quantity": -1})
    settled(client, "cart", {"type": "applyCoupon", "code": "SAVE10"})
    settled(client, "profile", {"type": "edit", "name": "Ada Lovelace"})
    settled(client, "profile", {"type": "save"})
    settled(client, "notes", {"type": "add", "text": "Heron at the pier"})
    settled(client, "notes", {"type": "sync"})
    settled(client, "backend", {"type": "remoteEdit", "noteId": "note-1", "text": "Egret"})
    settled(client, "notes", {"type": "edit", "id": "note-1", "text": "Grey heron"})
    settled(client, "notes", {"type": "sync"})
    settled(client, "notes", {"type": "resolveConflict", "id": "note-1", "keep": "local"})
    settled(client, "notes", {"type": "sync"})
    settled(client, "navigation", {"type": "openURL", "url": "app://users/42"})
    settled(client, "navigation", {"type": "push",
                                   "destination": {"screen": "userDetail", "userId": 7}})
    settled(client, "navigation", {"type": "openURL", "url": "app://nowhere"})
    settled(client, "navigation", {"type": "pop"})
    client.rewind("cart", 1)
    client.request("store/open", {"feature": "counter", "store": "c2", "state": {"count": 40}})
    settled(client, "c2", {"type": "increment"})
    client.request("store/close", {"store": "c2"})


def flaky_session(client):
    """Failures at 30 %: retries with backoff, and a debounced search typed fast."""
    settled(client, "users", {"type": "load"})
    for i, query in enumerate(["c", "ca", "car", "carl"]):
        client.notify("dispatch", {"store": "users", "action": {"type": "search", "query": query}})
    settled(client, "users", {"type": "search", "query": "carla"})
    for i in range(4):
        settled(client, "notes", {"type": "add", "text": f"note {i}"})
        settled(client, "notes", {"type": "sync"})
    settled(client, "profile", {"type": "edit", "name": "Grace"})
    settled(client, "profile", {"type": "save"})
    settled(client, "navigation", {"type": "openURL", "url": "app://users/3"})


def record(spawn, path, session, *flags):
    client = spawn("--record", str(path), "--latency", "5", *flags)
    session(client)
    assert client.close() == 0
    return [json.loads(line) for line in path.read_text().splitlines()]


def replay(stateserver_bin, path):
    return subprocess.run([stateserver_bin, "replay", str(path)], capture_output=True, text=True,
                          timeout=120)


def test_a_session_of_every_feature_replays_exactly(spawn, stateserver_bin, protocol_schema,
                                                     tmp_path):
    path = tmp_path / "session.ndjson"
    lines = record(spawn, path, every_feature_session)
    check = line_validator(protocol_schema, "recordingLine")
    for line in lines:
        assert not list(check.iter_errors(line)), line
    assert lines[0]["type"] == "header" and lines[0]["history"] == 1000
    entries = [line for line in lines if line["type"] == "entry"]
    stores = {line["store"] for line in entries}
    assert {"counter", "backend", "users", "cart", "profile", "notes", "navigation",
            "c2"} <= stores
    assert any(line["kind"] == "rewind" for line in entries)
    # Actions sent by effects are recorded with the action whose effect sent them.
    assert any("action" in line["origin"] for line in entries)
    assert any(line["type"] == "close" and line["store"] == "c2" for line in lines)
    result = replay(stateserver_bin, path)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert summary["replay"] == "match"
    assert summary["entries"] == sum(1 for line in entries if line["kind"] != "events")


def test_a_flaky_session_with_retries_and_a_debounced_search_replays_exactly(
        spawn, stateserver_bin, tmp_path):
    path = tmp_path / "flaky.ndjson"
    lines = record(spawn, path, flaky_session, "--fail-rate", "0.3", "--seed", "11")
    effects = [line for line in lines if line["type"] == "effect"]
    # The debounce cancelled the searches typed over, and some backend calls failed.
    assert any(e["kind"] == "debounce" and e["status"] == "cancelled" for e in effects)
    assert json.dumps(lines).count("retrying") + json.dumps(lines).count("failed") > 0
    result = replay(stateserver_bin, path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout)["replay"] == "match"


def test_a_changed_patch_is_named_by_replay(spawn, stateserver_bin, tmp_path):
    path = tmp_path / "session.ndjson"
    lines = record(spawn, path, every_feature_session)
    target = next(line for line in lines if line["type"] == "entry"
                  and line["store"] == "cart" and line["version"] == 2)
    target["patch"][0]["value"] = "tampered"
    tampered = tmp_path / "tampered.ndjson"
    tampered.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = replay(stateserver_bin, tampered)
    assert result.returncode == 1
    divergence = json.loads(result.stdout)
    assert divergence["replay"] == "diverged"
    assert (divergence["store"], divergence["version"]) == ("cart", 2)
    assert divergence["expected"] == target["patch"]
    assert divergence["actual"] != target["patch"]
    assert divergence["action"] == target["action"]
    assert "store 'cart' diverges at version 2" in result.stderr


def test_another_fingerprint_or_a_malformed_file_is_refused_with_status_2(
        spawn, stateserver_bin, tmp_path):
    path = tmp_path / "session.ndjson"
    lines = record(spawn, path, lambda client: settled(client, "counter", {"type": "increment"}))
    header = dict(lines[0], fingerprint="0000000000000000",
                  features=dict(lines[0]["features"], counter="0000000000000000"))
    other = tmp_path / "other.ndjson"
    other.write_text("".join(json.dumps(line) + "\n" for line in [header, *lines[1:]]))
    result = replay(stateserver_bin, other)
    assert result.returncode == 2
    assert result.stdout == ""
    assert "other features" in result.stderr and "counter" in result.stderr
    malformed = tmp_path / "malformed.ndjson"
    malformed.write_text(path.read_text() + "{not json\n")
    result = replay(stateserver_bin, malformed)
    assert result.returncode == 2 and "is not JSON" in result.stderr
    headless = tmp_path / "headless.ndjson"
    headless.write_text("".join(json.dumps(line) + "\n" for line in lines[1:]))
    result = replay(stateserver_bin, headless)
    assert result.returncode == 2 and "header" in result.stderr
    assert replay(stateserver_bin, tmp_path / "missing.ndjson").returncode == 2
