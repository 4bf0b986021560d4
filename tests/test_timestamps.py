"""Timestamps in state are Swift `Date`s; on the wire, in snapshots and in recordings they are
ISO 8601 UTC strings with exactly three fraction digits, as when they were strings. A state
restored from its SQLite snapshot publishes the very strings it published before."""
import re

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def test_timestamps_are_iso_8601_with_milliseconds_and_survive_a_restart(spawn, tmp_path):
    state_dir = str(tmp_path / "state")
    first = spawn("--state-dir", state_dir, "--latency", "1")
    first.dispatch("notes", {"type": "add", "text": "Heron at the pier"}, wait="settled")
    first.dispatch("notes", {"type": "sync"}, wait="settled")
    first.dispatch("users", {"type": "load"}, wait="settled")
    notes = first.request("state/get", {"store": "notes"})["state"]
    load = first.request("state/get", {"store": "users", "path": "/load"})["state"]
    at = first.history("notes")["entries"][-1]["at"]
    assert first.close() == 0
    stamps = [notes["notes"][0]["createdAt"], notes["notes"][0]["updatedAt"],
              notes["sync"]["lastSyncedAt"], load["lastUpdated"], load["expiresAt"], at]
    assert all(ISO.match(stamp) for stamp in stamps), stamps

    second = spawn("--state-dir", state_dir)
    assert second.request("state/get", {"store": "notes"})["state"] == notes
    reloaded = second.request("state/get", {"store": "users", "path": "/load"})["state"]
    assert (reloaded["lastUpdated"], reloaded["expiresAt"]) == (load["lastUpdated"],
                                                                load["expiresAt"])
    assert second.close() == 0


def test_a_client_state_with_a_timestamp_that_is_not_a_date_is_refused_at_its_pointer(server):
    note = {"id": "a", "text": "x", "createdAt": "yesterday",
            "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
    reply = server.request_raw("store/open", {"feature": "notes", "store": "bad",
                                              "state": {"notes": [note]}})
    error = reply["error"]
    assert error["data"]["pointer"].endswith("/notes/0/createdAt"), error
    assert "ISO 8601" in error["data"]["reason"]
