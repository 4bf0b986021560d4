"""Restart with a big persisted store (issue 28): the first answer does not wait for a store's
saved state. A persistent default store with saved data is read by the first request that needs
it (StoreRegistry's deferred stores); `initialize` lists it from its saved version alone.

The signal is the saved state itself, changed on disk after the first answer: a server that had
read the store before answering would show the state as it was; one that reads it when first
asked shows the change. No timing is involved. 100,000 notes keeps the suite fast; the benchmark
(bench/scale) restarts with 1,000,000."""
import sqlite3

NOTES = 100_000
ARGS = ("--max-message-bytes", str(256 << 20))


def note(i):
    return {"id": f"n{i}", "serverId": None, "text": f"note {i}",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
            "syncStatus": "synchronized", "serverText": None}


def save_big_default_store(spawn, state_dir):
    """Saves 100,000 notes as the default `notes` store's data (opened under another id, since
    the default store exists already, then renamed in the database), with one edit journaled
    after the snapshot; returns the saved version."""
    client = spawn("--state-dir", str(state_dir), *ARGS, check_schema=False)
    opened = client.request("store/open", {"feature": "notes", "store": "big", "persist": True,
                                           "state": {"notes": [note(i) for i in range(NOTES)]}},
                            timeout=120)
    assert opened["version"] == 0
    client.dispatch("big", {"type": "edit", "id": "n7", "text": "edited before the restart"})
    version = client.request("state/get", {"store": "big", "path": "/sync"})["version"]
    assert client.close(timeout=120) == 0
    database = sqlite3.connect(state_dir / "stateserver.sqlite")
    with database:
        for table in ("snapshots", "journal"):
            database.execute(f"DELETE FROM {table} WHERE store = 'notes'")
            database.execute(f"UPDATE {table} SET store = 'notes' WHERE store = 'big'")
    database.close()
    return version


def test_the_first_answer_comes_before_a_big_default_store_is_read(spawn, tmp_path):
    saved_version = save_big_default_store(spawn, tmp_path)
    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)

    first = client.request("initialize", {"protocolVersion": 1}, timeout=60)
    listed = {s["store"]: s for s in first["stores"]}
    assert listed["notes"] == {"store": "notes", "feature": "notes", "version": saved_version}

    # Changed on disk after the first answer: only a store read after it can show this.
    database = sqlite3.connect(tmp_path / "stateserver.sqlite")
    with database:
        (found,) = database.execute("SELECT instr(state, '\"text\":\"note 3\"') FROM snapshots "
                                    "WHERE store = 'notes'").fetchone()
        assert found > 0
        database.execute(
            "UPDATE snapshots SET state = replace(state, '\"text\":\"note 3\"', "
            "'\"text\":\"changed after the first answer\"') WHERE store = 'notes'")
    database.close()

    # The first request that needs the store reads it, and waits for it.
    current = client.request("state/get", {"store": "notes"}, timeout=120)
    assert current["version"] == saved_version
    notes = current["state"]["notes"]
    assert len(notes) == NOTES
    assert notes[3]["text"] == "changed after the first answer"
    assert notes[7]["text"] == "edited before the restart"
    assert notes[NOTES - 1] == note(NOTES - 1)

    # Opened in the place it took at start, and it keeps saving.
    assert [s["store"] for s in client.request("store/list")["stores"]] == \
        [s["store"] for s in first["stores"]]
    client.dispatch("notes", {"type": "edit", "id": "n0", "text": "after the restart"})
    assert client.close(timeout=120) == 0
    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)
    again = client.request("state/get", {"store": "notes", "path": "/notes/0/text"}, timeout=120)
    assert again["state"] == "after the restart"
    assert client.close(timeout=120) == 0


def test_a_default_store_never_asked_for_keeps_its_saved_state(spawn, tmp_path):
    saved_version = save_big_default_store(spawn, tmp_path)
    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)
    client.request("initialize", {"protocolVersion": 1}, timeout=60)
    client.dispatch("counter", {"type": "increment"})
    assert client.close(timeout=120) == 0
    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)
    current = client.request("state/get", {"store": "notes", "path": "/notes/7/text"}, timeout=120)
    assert (current["version"], current["state"]) == (saved_version, "edited before the restart")
    assert client.close(timeout=120) == 0
