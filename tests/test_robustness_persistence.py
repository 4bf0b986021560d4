"""Persistence under a burst, end to end: hundreds of pipelined actions (valid and refused) on
the persistent default stores and on stores opened with `persist: true`, with odd ids and text,
then a clean exit in the middle of the effects; the next server must resume every persistent
store at exactly the acknowledged state and version, and leave non-persistent ones fresh.
"""
import random

from stateserver import Mirror

from fuzz_generator import STRINGS

TIMEOUT = 60
IDS = ["p-1", "ünï ✓", "a/b", "~0~1", " ", "x" * 300, "😀", "a\u0000b", "a"]


def test_a_burst_then_a_clean_exit_loses_no_acknowledged_change(spawn, tmp_path):
    rng = random.Random(777)
    state_dir = str(tmp_path / "state")
    # The drain ends as soon as the effects do; its timeout only bounds a hang (with 2 s, a
    # loaded machine could cancel a sync mid-flight and the restored state would differ).
    first = spawn("--state-dir", state_dir, "--latency", "1", "--drain-timeout", "60")
    for id in IDS:
        first.request("store/open", {"feature": rng.choice(["notes", "profile"]), "store": id,
                                     "persist": True})
    first.request("store/open", {"feature": "notes", "store": "scratch"})  # not persistent
    persistent = ["notes", "profile", *IDS]
    features = {s["store"]: s["feature"] for s in first.request("store/list")["stores"]}
    mirrors = {store: Mirror(first, store) for store in persistent}
    last = None
    for n in range(600):
        store = rng.choice(persistent + ["scratch"])
        if features[store] == "notes":
            action = rng.choice([
                {"type": "add", "text": rng.choice(STRINGS)},
                {"type": "add", "text": f"note {n}"},
                {"type": "edit", "id": rng.choice(["n1", "n2", "n3", "nope"]),
                 "text": rng.choice(STRINGS)},
                {"type": "delete", "id": rng.choice(["n1", "n4", "nope"])},
                {"type": "sync"}])
        else:
            action = rng.choice([{"type": "edit", "name": rng.choice(STRINGS)},
                                 {"type": "save"}, {"type": "cancelSave"},
                                 {"type": "dismissError"}])
        last = f"burst-{n}"
        first.send({"jsonrpc": "2.0", "id": last, "method": "dispatch",
                    "params": {"store": store, "action": action}})
    first.response(last, timeout=TIMEOUT)
    # End of input while syncs and saves are in flight: they finish within the drain, every
    # change is flushed, exit 0.
    assert first.close(timeout=TIMEOUT) == 0

    second = spawn("--state-dir", state_dir, "--latency", "1")
    restored = {}
    for store in persistent:
        if store in ("notes", "profile"):
            restored[store] = second.request("state/get", {"store": store})
        else:
            restored[store] = second.request(
                "store/open", {"feature": features[store], "store": store, "persist": True})
        # Exactly what the first server published last (its final patches included).
        assert restored[store]["version"] == mirrors[store].version, store
        assert restored[store]["state"] == mirrors[store].state, store
    assert sum(r["version"] for r in restored.values()) > 200, "the burst changed little"
    scratch = second.request("store/open", {"feature": "notes", "store": "scratch"})
    assert scratch["version"] == 0 and scratch["state"]["notes"] == []
    # The state itself survived: a third run (no actions in between) sees the same.
    assert second.close(timeout=TIMEOUT) == 0
    third = spawn("--state-dir", state_dir)
    for store in persistent:
        if store in ("notes", "profile"):
            again = third.request("state/get", {"store": store})
        else:
            again = third.request(
                "store/open", {"feature": features[store], "store": store, "persist": True})
        assert again["version"] == restored[store]["version"], store
        assert again["state"] == restored[store]["state"], store
    assert third.close(timeout=TIMEOUT) == 0


def test_closing_a_persistent_store_mid_sync_and_reopening_it(spawn, tmp_path):
    """store/close while the store's sync is in flight: the wait is answered, the effect's late
    result is dropped, and reopening (in this server and the next) restores exactly the state
    and version at the close."""
    state_dir = str(tmp_path / "state")
    # A backend that never answers during the test: the sync is still in flight at state/get
    # and at the close however long this process is descheduled (a 200 ms latency was not).
    client = spawn("--state-dir", state_dir, "--latency", "600000", "--drain-timeout", "0")
    client.request("store/open", {"feature": "notes", "store": "field", "persist": True})
    mirror = Mirror(client, "field")
    for n in range(5):
        client.dispatch("field", {"type": "add", "text": f"note {n}"})
    client.send({"jsonrpc": "2.0", "id": "sync", "method": "dispatch", "params": {
        "store": "field", "action": {"type": "sync"}, "wait": "settled"}})
    at_close = client.request("state/get", {"store": "field"})
    assert at_close["state"]["sync"]["status"] == "syncing"
    assert client.request("store/close", {"store": "field"}) == {}
    assert "result" in client.response("sync", timeout=TIMEOUT)
    assert mirror.state == at_close["state"] and mirror.version == at_close["version"]
    # The interrupted sync comes back idle with its notes still pending. (Whether that change
    # may keep the same version is open: NOTES.md 19:40.)
    expected = dict(at_close["state"], sync=dict(at_close["state"]["sync"], status="idle"))
    again = client.request("store/open", {"feature": "notes", "store": "field", "persist": True})
    assert again["version"] >= at_close["version"] and again["state"] == expected
    assert client.close(timeout=TIMEOUT) == 0
    later = spawn("--state-dir", state_dir)
    reopened = later.request("store/open", {"feature": "notes", "store": "field", "persist": True})
    assert (reopened["version"], reopened["state"]) == (again["version"], expected)
    assert later.close(timeout=TIMEOUT) == 0
