"""Restart with a large persisted store (issue 28): a snapshot of 4 MiB or more written whole is
read with its large arrays left as text, each note parsed and decoded by the store's decode on
two threads, and the journal's changes inside one note applied to that note as it is parsed
(any other change reaching the array parses it first). The restored store must be exactly the
store that was closed, whatever the journal did; saved data that does not restore so is read
again whole and, when broken, set aside as it always was."""
import sqlite3

NOTES = 32_000  # a snapshot of about 4.2 MB
ARGS = ("--max-message-bytes", str(64 << 20), "--log-level", "info", "--clock", "virtual")
TEXT_RESTORE = "read from the snapshot's text"


def note(i):
    return {"id": f"n{i}", "serverId": None, "text": f"note {i}",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
            "syncStatus": "synchronized", "serverText": None}


def save(spawn, state_dir, actions):
    """Opens a persisted store of NOTES notes, dispatches `actions`, and returns its state and
    version as the client last saw them."""
    client = spawn("--state-dir", str(state_dir), *ARGS, check_schema=False)
    client.request("store/open", {"feature": "notes", "store": "big", "persist": True,
                                  "state": {"notes": [note(i) for i in range(NOTES)]}},
                   timeout=120)
    for action in actions:
        client.dispatch("big", action)
    current = client.request("state/get", {"store": "big"}, timeout=120)
    assert client.close(timeout=120) == 0
    return current["state"], current["version"]


def saved_rows(state_dir):
    database = sqlite3.connect(state_dir / "stateserver.sqlite")
    kind, length = database.execute(
        "SELECT typeof(state), length(state) FROM snapshots WHERE store = 'big'").fetchone()
    journal = database.execute("SELECT count(*) FROM journal WHERE store = 'big'").fetchone()[0]
    database.close()
    return kind, length, journal


def reopen(spawn, state_dir):
    client = spawn("--state-dir", str(state_dir), *ARGS, check_schema=False)
    opened = client.request("store/open", {"feature": "notes", "store": "big", "persist": True},
                            timeout=120)
    return client, opened


EDITS_INSERTS_DELETES = [
    {"type": "edit", "id": "n7", "text": "first"},
    {"type": "edit", "id": "n31999", "text": "last"},
    {"type": "edit", "id": "n7", "text": "first, again"},
    {"type": "add", "text": "a new note"},
    {"type": "delete", "id": "n100"},
    {"type": "edit", "id": "n16000", "text": "after the array changed"},
]


def test_a_restore_from_text_is_the_store_that_was_closed(spawn, tmp_path):
    state, version = save(spawn, tmp_path, EDITS_INSERTS_DELETES)
    kind, length, journal = saved_rows(tmp_path)
    # The path under test: a snapshot written whole, large, with changes journaled after it.
    assert kind == "text" and length >= 4 << 20 and journal >= len(EDITS_INSERTS_DELETES)
    client, opened = reopen(spawn, tmp_path)
    assert opened["version"] == version
    assert opened["state"] == state
    assert TEXT_RESTORE in client.stderr_text()


def test_edits_inside_notes_only_are_applied_as_the_notes_are_parsed(spawn, tmp_path):
    state, version = save(spawn, tmp_path, EDITS_INSERTS_DELETES[:3])
    client, opened = reopen(spawn, tmp_path)
    assert (opened["version"], opened["state"]) == (version, state)
    assert [n["text"] for n in opened["state"]["notes"][7:8]] == ["first, again"]
    assert TEXT_RESTORE in client.stderr_text()


def test_a_broken_snapshot_is_read_again_whole_and_set_aside(spawn, tmp_path):
    save(spawn, tmp_path, EDITS_INSERTS_DELETES[:1])
    database = sqlite3.connect(tmp_path / "stateserver.sqlite")
    with database:
        # Inside a note: the brackets still close, the text is not JSON.
        database.execute("UPDATE snapshots SET state = replace(state, '\"note 20000\"', "
                         "'\"note 20000\" x') WHERE store = 'big'")
    database.close()
    client, opened = reopen(spawn, tmp_path)
    assert opened["state"]["notes"] == []
    log = client.stderr_text()
    assert "reading it again whole" in log
    assert "cannot be used (state is not valid JSON" in log
    database = sqlite3.connect(tmp_path / "stateserver.sqlite")
    assert database.execute("SELECT count(*) FROM set_aside").fetchone()[0] == 1
    database.close()


def test_a_compacted_snapshot_in_pieces_is_restored_from_text(spawn, tmp_path):
    """Edits long enough that the journal outweighs the snapshot: it is compacted, written in
    pieces, and the restore assembles them into text of its own before reading it so."""
    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)
    client.request("store/open", {"feature": "notes", "store": "big", "persist": True,
                                  "state": {"notes": [note(i) for i in range(NOTES)]}},
                   timeout=120)
    filler = "x" * 3000
    for n in range(2500):
        client.send({"jsonrpc": "2.0", "method": "dispatch",
                     "params": {"store": "big", "action": {
                         "type": "edit", "id": f"n{(n * 7919) % NOTES}", "text": f"{n} {filler}"}}})
    client.dispatch("big", {"type": "edit", "id": "n1", "text": "after the burst"})
    current = client.request("state/get", {"store": "big"}, timeout=120)
    assert client.close(timeout=120) == 0
    database = sqlite3.connect(tmp_path / "stateserver.sqlite")
    marker = database.execute("SELECT state FROM snapshots WHERE store = 'big'").fetchone()[0]
    database.close()
    assert marker.startswith("pieces "), marker[:40]
    client, opened = reopen(spawn, tmp_path)
    assert (opened["version"], opened["state"]) == (current["version"], current["state"])
    assert TEXT_RESTORE in client.stderr_text()
