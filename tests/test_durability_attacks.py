"""Persistence that cannot be fooled: each attack a careless or hostile client (or a person
with `sqlite3`) can make on the state directory. The server starts, says what it set aside,
and keeps everything else."""
import json
import os
import signal
import sqlite3
import subprocess

import pytest

from features_support import RPCError, Server

TIMEOUT = 30


def database(tmp_path):
    return tmp_path / "stateserver.sqlite"


def seed(tmp_path, notes=30):
    """A clean run that leaves `notes` notes and a profile draft; returns the notes' texts."""
    texts = [f"note {n}" for n in range(notes)]
    with Server("--latency", "0", state_dir=tmp_path) as server:
        for text in texts:
            server.dispatch("notes", {"type": "add", "text": text})
        server.dispatch("profile", {"type": "edit", "name": "Kept"})
        assert server.close() == 0
    return texts


def texts_of(server):
    return [note["text"] for note in server.state("notes")["notes"]]


def set_snapshot_version(tmp_path, store, sql_value):
    connection = sqlite3.connect(database(tmp_path))
    with connection:
        connection.execute(f"UPDATE snapshots SET version = {sql_value} WHERE store = ?", (store,))
    connection.close()


@pytest.mark.parametrize("sql_value, shown", [
    ("-5", "-5"), ("9223372036854775807", "9223372036854775807"), ("'seven'", "'seven'"),
    ("1.5", "1.5"), ("1e30", "1e+30")])
def test_a_version_out_of_range_is_set_aside_and_named(tmp_path, sql_value, shown):
    seed(tmp_path)
    set_snapshot_version(tmp_path, "notes", sql_value)
    with Server("--latency", "0", state_dir=tmp_path) as server:
        # Never a crash: the store starts fresh, the other store keeps its data.
        assert texts_of(server) == [] and server.version("notes") == 0
        assert server.state("profile")["draft"] == "Kept"
        result = server.dispatch("notes", {"type": "add", "text": "after"})
        assert result["version"] == 1
        assert server.close() == 0
        assert f"version {shown} is not a whole number" in server.stderr
        assert "set_aside" in server.stderr
    # Never overwritten: the set-aside row still holds what was there, and the journal too.
    connection = sqlite3.connect(database(tmp_path))
    rows = connection.execute(
        "SELECT store, typeof(version), state FROM set_aside WHERE store = 'notes'").fetchall()
    journal = connection.execute(
        "SELECT count(*) FROM journal_set_aside WHERE store = 'notes'").fetchone()[0]
    connection.close()
    assert len(rows) == 1
    assert journal > 0
    with Server(state_dir=tmp_path) as server:
        assert texts_of(server) == ["after"]
        assert server.close() == 0


def test_a_snapshots_table_with_other_columns_is_set_aside(tmp_path):
    seed(tmp_path, notes=3)
    connection = sqlite3.connect(database(tmp_path))
    with connection:
        connection.execute("ALTER TABLE snapshots RENAME TO old")
        connection.execute("CREATE TABLE snapshots (store TEXT, something TEXT)")
        connection.execute("INSERT INTO snapshots VALUES ('notes', 'not ours')")
    connection.close()
    with Server("--latency", "0", state_dir=tmp_path) as server:
        # Saving works again: acknowledged changes are on disk for the next run.
        server.dispatch("notes", {"type": "add", "text": "saved"})
        assert server.close() == 0
        assert "table snapshots" in server.stderr and "renamed it to" in server.stderr
    with Server(state_dir=tmp_path) as server:
        assert texts_of(server) == ["saved"]
        assert server.close() == 0
    connection = sqlite3.connect(database(tmp_path))
    aside = connection.execute(
        "SELECT name FROM sqlite_master WHERE name LIKE 'snapshots_set_aside_%'").fetchall()
    assert len(aside) == 1
    assert connection.execute(f'SELECT * FROM "{aside[0][0]}"').fetchall() == [
        ("notes", "not ours")]
    connection.close()


def test_a_second_server_on_the_same_directory_exits_2_naming_the_first(tmp_path):
    with Server("--latency", "0", state_dir=tmp_path) as first:
        first.dispatch("notes", {"type": "add", "text": "first"})
        second = subprocess.run(
            [first.process.args[0], "--state-dir", str(tmp_path)], input=b"",
            capture_output=True, timeout=TIMEOUT)
        assert second.returncode == 2
        assert f"pid {first.process.pid}" in second.stderr.decode()
        assert second.stdout == b""
        # The first one is untouched and carries on.
        first.dispatch("notes", {"type": "add", "text": "still first"})
        assert first.close() == 0
    with Server(state_dir=tmp_path) as server:
        assert texts_of(server) == ["first", "still first"]
        assert server.close() == 0


@pytest.mark.parametrize("damage", ["flip", "truncate", "delete", "garbage"])
def test_a_damaged_or_missing_wal_after_a_clean_exit_loses_nothing(tmp_path, damage):
    texts = seed(tmp_path)
    wal = tmp_path / "stateserver.sqlite-wal"
    if damage == "flip":
        if wal.exists() and wal.stat().st_size > 0:
            data = bytearray(wal.read_bytes())
            data[len(data) // 2] ^= 0xFF
            wal.write_bytes(bytes(data))
        else:
            wal.write_bytes(b"\xff" * 4096)
    elif damage == "truncate":
        if wal.exists():
            os.truncate(wal, 0)
    elif damage == "delete":
        if wal.exists():
            wal.unlink()
    else:
        wal.write_bytes(os.urandom(8192))
    with Server("--latency", "0", state_dir=tmp_path) as server:
        assert texts_of(server) == texts
        assert server.state("profile")["draft"] == "Kept"
        assert server.close() == 0


def test_a_store_id_cannot_be_reopened_as_another_feature(tmp_path):
    texts = seed(tmp_path, notes=5)
    with Server("--latency", "0", state_dir=tmp_path) as server:
        assert server.request("store/close", {"store": "notes"}) == {}
        with pytest.raises(RPCError) as refused:
            server.request("store/open", {"feature": "profile", "store": "notes", "persist": True})
        assert refused.value.code == -32602
        assert "feature 'notes'" in refused.value.data["reason"]
        with pytest.raises(RPCError):
            server.dispatch("notes", {"type": "edit", "name": "overwrite"})
        reopened = server.request(
            "store/open", {"feature": "notes", "store": "notes", "persist": True})
        assert [n["text"] for n in reopened["state"]["notes"]] == texts
        assert server.close() == 0
    with Server(state_dir=tmp_path) as server:
        assert texts_of(server) == texts
        assert server.close() == 0
    connection = sqlite3.connect(database(tmp_path))
    assert connection.execute("SELECT count(*) FROM set_aside").fetchone()[0] == 0
    connection.close()


def test_a_read_only_database_still_serves_what_it_holds(tmp_path):
    texts = seed(tmp_path, notes=4)
    # Byte 18 of the header is SQLite's write version: above 2 the file is read-only to SQLite
    # (a chmod would not do: the tests may run as root).
    path = database(tmp_path)
    data = bytearray(path.read_bytes())
    data[18] = 3
    path.write_bytes(bytes(data))
    with Server("--latency", "0", state_dir=tmp_path) as server:
        assert texts_of(server) == texts
        assert server.state("profile")["draft"] == "Kept"
        server.dispatch("notes", {"type": "add", "text": "in memory"})
        assert server.close() == 0
        assert "read-only" in server.stderr
    assert path.read_bytes() == bytes(data)


def test_a_commit_that_fails_is_an_error_not_an_acknowledgement(tmp_path):
    seed(tmp_path, notes=1)
    with Server("--latency", "0", state_dir=tmp_path) as server:
        server.dispatch("notes", {"type": "add", "text": "before"})
        saboteur = sqlite3.connect(database(tmp_path))
        with saboteur:
            saboteur.execute("""CREATE TRIGGER refuse BEFORE INSERT ON journal
                                BEGIN SELECT RAISE(ABORT, 'the disk says no'); END""")
        for wait in ("reduced", "settled"):
            reply = server.call("dispatch", {"store": "notes", "wait": wait,
                                             "action": {"type": "add", "text": f"lost {wait}"}})
            assert reply["error"]["code"] == -32603, reply
            assert "the disk says no" in reply["error"]["data"]["reason"]
        # An ephemeral-feature store is not concerned.
        assert "result" in server.call("dispatch", {"store": "counter",
                                                    "action": {"type": "increment"}})
        with saboteur:
            saboteur.execute("DROP TRIGGER refuse")
        saboteur.close()
        # The changes kept in memory are committed with the next one, which is acknowledged.
        result = server.dispatch("notes", {"type": "add", "text": "after"})
        expected = texts_of(server)
        assert server.close() == 0
    with Server(state_dir=tmp_path) as server:
        assert texts_of(server) == expected
        assert expected[-1] == "after" and server.version("notes") == result["version"]
        assert server.close() == 0


def test_sigkill_right_after_one_acknowledged_add(tmp_path):
    """The issue's first measurement: one add, answered, then kill -9."""
    with Server("--latency", "0", state_dir=tmp_path) as server:
        result = server.dispatch("notes", {"type": "add", "text": "answered"})
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=TIMEOUT)
    with Server(state_dir=tmp_path) as server:
        assert texts_of(server) == ["answered"]
        assert server.version("notes") == result["version"]
        assert server.close() == 0


def test_a_long_journal_is_compacted_and_restores_the_same_state(tmp_path):
    """Past 256 KiB of journal (more than the snapshot), the snapshot is rewritten in the
    background and the journal rows it covers deleted; restore gives the same state."""
    texts = [f"{n} " + "x" * 2000 for n in range(300)]
    with Server("--latency", "0", state_dir=tmp_path) as server:
        for text in texts:
            server.dispatch("notes", {"type": "add", "text": text}, wait="reduced")
        state, version = server.state("notes"), server.version("notes")
        assert server.close() == 0
    connection = sqlite3.connect(database(tmp_path))
    rows = connection.execute("SELECT count(*) FROM journal WHERE store = 'notes'").fetchone()[0]
    snapshot = connection.execute("SELECT version FROM snapshots WHERE store = 'notes'").fetchone()
    connection.close()
    assert rows < 300 and snapshot[0] > 0, (rows, snapshot)
    with Server(state_dir=tmp_path) as server:
        assert server.state("notes") == state and server.version("notes") == version
        assert server.close() == 0
