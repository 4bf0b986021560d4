"""A crash during compaction loses nothing: `notes` edited with long texts, so that its journal
outweighs its snapshot every hundred edits or so and a compacted snapshot is written in pieces
(256 KB each) again and again, while the server is killed with SIGKILL after a random number of
responses. After each restart every note holds its last acknowledged text, or one sent after it.

Compaction runs on its own connection beside the commits, so the kills fall before, between and
after its pieces; the Swift test `CompactionInPiecesTests` holds a compaction at each of its
steps and checks the restore there, deterministically. This one checks the whole server.
"""
import json
import random
import sqlite3

from crash_support import TIMEOUT, burst_then_kill, request, start

TRIALS = 12
NOTES = 100
FILLER = "x" * 3000


def test_a_kill_during_compaction_loses_no_acknowledged_edit(stateserver_bin, tmp_path):
    rng = random.Random(99)
    state_dir = str(tmp_path / "state")
    server = start(stateserver_bin, state_dir)
    for n in range(NOTES):
        request(server, "dispatch",
                {"store": "notes", "action": {"type": "add", "text": f"note {n} {FILLER}"}}, n)
    ids = [note["id"] for note in
           request(server, "state/get", {"store": "notes"}, "ids")["state"]["notes"]]
    server.stdin.close()
    assert server.wait(timeout=TIMEOUT) == 0
    for pipe in (server.stdout, server.stderr):
        pipe.close()

    sent = {id: [] for id in ids}  # every text sent to each note, in order
    acknowledged = {}  # note id -> index in sent[id] of its last acknowledged text
    for trial in range(TRIALS):
        burst = rng.randint(150, 400)
        kill_after = rng.randint(1, burst)
        requests, lines = {}, []
        for n in range(burst):
            note = rng.choice(ids)
            sent[note].append(f"trial {trial} edit {n} {FILLER}")
            requests[f"t{trial}-{n}"] = (note, len(sent[note]) - 1)
            lines.append(json.dumps(
                {"jsonrpc": "2.0", "id": f"t{trial}-{n}", "method": "dispatch",
                 "params": {"store": "notes",
                            "action": {"type": "edit", "id": note, "text": sent[note][-1]}}}))

        def acknowledge(message):
            note, index = requests[message["id"]]
            acknowledged[note] = max(index, acknowledged.get(note, -1))

        server = start(stateserver_bin, state_dir)
        burst_then_kill(server, lines, requests, kill_after, acknowledge)

        check = start(stateserver_bin, state_dir)
        try:
            notes = request(check, "state/get", {"store": "notes"}, "check")["state"]["notes"]
            texts = {note["id"]: note["text"] for note in notes}
            assert sorted(texts) == sorted(ids), f"trial {trial}: notes lost or added"
            for note, index in acknowledged.items():
                assert texts[note] in sent[note][index:], (
                    f"trial {trial}: note {note} lost its acknowledged text")
            check.stdin.close()
            assert check.wait(timeout=TIMEOUT) == 0
        finally:
            if check.poll() is None:
                check.kill()
                check.wait(timeout=TIMEOUT)
            check.stdout.close()
            check.stderr.close()
    assert len(acknowledged) > NOTES // 2
    # The trials did compact, in pieces (a snapshot of about 300 KB is two of them).
    with sqlite3.connect(f"{state_dir}/stateserver.sqlite") as database:
        (state,) = database.execute("SELECT state FROM snapshots WHERE store = 'notes'").fetchone()
        (pieces,) = database.execute("SELECT count(*) FROM snapshot_pieces").fetchone()
    assert state.startswith("pieces ") and pieces >= 2, (state[:40], pieces)
