"""Persistence, end to end: notes and profile survive a restart at the same version, and a
corrupted database is set aside while the server still starts."""
import json
import os

from features_support import Server


def test_notes_and_profile_survive_a_restart(tmp_path):
    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.dispatch("notes", {"type": "add", "text": "Synced"})
        server.dispatch("notes", {"type": "sync"})
        server.dispatch("notes", {"type": "add", "text": "Still pending"})
        server.dispatch("profile", {"type": "edit", "name": "Ada"})
        server.dispatch("profile", {"type": "save"})
        server.dispatch("profile", {"type": "edit", "name": "Ada L (draft)"})
        saved = {store: (server.version(store), server.state(store))
                 for store in ("notes", "profile")}
        assert server.close() == 0

    with Server("--latency", "0", state_dir=tmp_path) as server:
        for store in ("notes", "profile"):
            assert (server.version(store), server.state(store)) == saved[store]
        notes = server.state("notes")["notes"]
        assert [n["syncStatus"] for n in notes] == ["synchronized", "pendingUpload"]
        # The restored store carries on from its version.
        result = server.dispatch("notes", {"type": "add", "text": "After restart"})
        assert result["version"] == saved["notes"][0] + 1


def test_a_profile_saved_mid_save_comes_back_idle_at_the_next_version(tmp_path):
    """Profile does not say what its decoding changed (`Feature.decodingChanged`), so the
    restore compares the whole state encoded again: a save in flight at the close comes back
    idle, another state, so another version; saved settled, it came back at the same one above."""
    # A backend that never answers during the test: the save is in flight at the close.
    with Server("--latency", "600000", "--drain-timeout", "0", state_dir=tmp_path) as server:
        server.dispatch("profile", {"type": "edit", "name": "Grace"})
        server.dispatch("profile", {"type": "save"}, wait="reduced")
        version = server.version("profile")
        assert server.state("profile")["saveState"]["status"] == "saving"
        assert server.close() == 0

    with Server("--latency", "0", state_dir=tmp_path) as server:
        view = server.state("profile")
        assert view["saveState"]["status"] == "idle" and view["draft"] == "Grace"
        assert server.version("profile") == version + 1


def test_ephemeral_writes_nothing(tmp_path):
    # No state_dir: the server runs --ephemeral, here with a state directory it must ignore.
    with Server("--state-dir", str(tmp_path)) as server:
        server.dispatch("profile", {"type": "edit", "name": "Nobody"})
        assert server.close() == 0
    assert list(tmp_path.iterdir()) == []


def test_a_corrupted_database_is_set_aside_and_the_server_starts(tmp_path):
    database = tmp_path / "stateserver.sqlite"
    garbage = b"this is not a database" * 512
    database.write_bytes(garbage)
    with Server("--latency", "0", state_dir=tmp_path) as server:
        assert server.state("notes")["notes"] == []
        server.dispatch("notes", {"type": "add", "text": "Fresh start"})
        assert server.close() == 0
        assert "stateserver.sqlite.set-aside-" in server.stderr
    aside = [name for name in os.listdir(tmp_path) if name.startswith("stateserver.sqlite.set-aside-")]
    assert len(aside) == 1
    assert (tmp_path / aside[0]).read_bytes() == garbage
    with Server(state_dir=tmp_path) as server:
        assert [n["text"] for n in server.state("notes")["notes"]] == ["Fresh start"]


def test_set_aside_warnings_follow_the_log_format(tmp_path):
    (tmp_path / "stateserver.sqlite").write_bytes(b"not a database" * 512)
    with Server("--log-format", "json", state_dir=tmp_path) as server:
        assert server.state("notes")["notes"] == []
        assert server.close() == 0
        records = [json.loads(line) for line in server.stderr.splitlines()]
    warnings = [r for r in records if r["level"] == "warning" and "set-aside" in r["message"]]
    assert len(warnings) == 1, records
    assert "could not be read" in warnings[0]["message"]


def test_a_snapshot_that_does_not_decode_is_set_aside(tmp_path):
    import sqlite3

    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.dispatch("notes", {"type": "add", "text": "Will be damaged"})
        server.dispatch("profile", {"type": "edit", "name": "Kept"})
        assert server.close() == 0
    database = sqlite3.connect(tmp_path / "stateserver.sqlite")
    with database:
        database.execute("UPDATE snapshots SET state = '[1, 2]' WHERE store = 'notes'")
    database.close()

    with Server(state_dir=tmp_path) as server:
        assert server.state("notes")["notes"] == [] and server.version("notes") == 0
        assert server.state("profile")["draft"] == "Kept"
        assert server.close() == 0
        assert "notes" in server.stderr
    database = sqlite3.connect(tmp_path / "stateserver.sqlite")
    rows = database.execute("SELECT store, state FROM set_aside").fetchall()
    database.close()
    assert rows == [("notes", "[1, 2]")]


def test_a_store_opened_with_persist_is_restored_by_id(tmp_path):
    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.request("store/open", {"feature": "notes", "store": "trip", "persist": True})
        server.dispatch("trip", {"type": "add", "text": "Day one"})
        version = server.version("trip")
        assert server.close() == 0
    with Server(state_dir=tmp_path) as server:
        opened = server.request("store/open", {"feature": "notes", "store": "trip", "persist": True})
        assert opened["version"] == version
        assert [n["text"] for n in opened["state"]["notes"]] == ["Day one"]


def test_sigterm_keeps_every_acknowledged_change(tmp_path):
    import signal

    with Server("--latency", "0", state_dir=tmp_path) as server:
        for n in range(20):
            server.dispatch("notes", {"type": "add", "text": f"note {n}"}, wait="reduced")
        version = server.version("notes")
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 0
    with Server(state_dir=tmp_path) as server:
        assert server.version("notes") == version
        assert len(server.state("notes")["notes"]) == 20
