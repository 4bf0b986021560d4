"""notes, end to end: pending until synced, offline, conflicts kept until resolved."""
from features_support import Server, expect_refused


def notes_by_id(server):
    return {n["id"]: n for n in server.state("notes")["notes"]}


def test_sync_offline_and_conflict():
    with Server("--latency", "0") as server:
        expect_refused(server, "notes", {"type": "add", "text": "   "}, -32602, "/action/text")
        server.dispatch("notes", {"type": "add", "text": "Heron at the pier"})
        server.dispatch("notes", {"type": "add", "text": "Kingfisher"})
        view = server.state("notes")
        assert view["sync"]["pending"] == 2
        assert {n["syncStatus"] for n in view["notes"]} == {"pendingUpload"}

        # Offline: nothing leaves, everything stays pending.
        server.dispatch("backend", {"type": "setOnline", "online": False})
        server.dispatch("notes", {"type": "sync"})
        view = server.state("notes")
        assert view["sync"]["status"] == "offline" and view["sync"]["pending"] == 2

        server.dispatch("backend", {"type": "setOnline", "online": True})
        server.dispatch("notes", {"type": "sync"})
        view = server.state("notes")
        assert view["sync"]["status"] == "idle" and view["sync"]["pending"] == 0
        assert view["sync"]["lastSyncedAt"] is not None
        notes = notes_by_id(server)
        assert all(n["syncStatus"] == "synchronized" and n["serverId"] for n in notes.values())

        # Someone changes note-1 on the server while we edit it here.
        server.dispatch("backend", {"type": "remoteEdit", "noteId": "note-1", "text": "Egret"})
        server.dispatch("notes", {"type": "edit", "id": "note-1", "text": "Grey heron"})
        server.dispatch("notes", {"type": "sync"})
        note = notes_by_id(server)["note-1"]
        assert note["syncStatus"] == "conflict"
        assert (note["text"], note["serverText"]) == ("Grey heron", "Egret")

        # Not overwritten by another sync; resolved by the user.
        server.dispatch("notes", {"type": "sync"})
        assert notes_by_id(server)["note-1"]["syncStatus"] == "conflict"
        server.dispatch("notes", {"type": "resolveConflict", "id": "note-1", "keep": "local"})
        server.dispatch("notes", {"type": "sync"})
        note = notes_by_id(server)["note-1"]
        assert (note["text"], note["syncStatus"], note["serverText"]) == (
            "Grey heron", "synchronized", None)


def test_failed_uploads_are_retried_then_marked_failed():
    with Server("--latency", "0", "--fail-rate", "1") as server:
        server.dispatch("notes", {"type": "add", "text": "Lost"})
        server.dispatch("notes", {"type": "sync"})
        view = server.state("notes")
        assert view["sync"]["status"] == "failed"
        assert view["notes"][0]["syncStatus"] == "failed"
        assert view["sync"]["pending"] == 1
        assert server.state("backend")["requests"]["uploadNote"] == 4


def test_store_open_accepts_many_notes():
    notes = [{"id": f"n{i}", "text": f"note {i}", "createdAt": "2026-01-01T00:00:00Z",
              "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
             for i in range(2000)]
    with Server() as server:
        opened = server.request("store/open", {"feature": "notes", "store": "bench",
                                               "state": {"notes": notes}})
        assert opened["version"] == 0 and len(opened["state"]["notes"]) == 2000
        assert opened["state"]["sync"]["pending"] == 0
        server.dispatch("bench", {"type": "edit", "id": "n1234", "text": "changed"})
        assert server.state("bench", "/sync/pending") == 1
        assert server.state("bench", "/notes/1234/syncStatus") == "pendingUpload"
