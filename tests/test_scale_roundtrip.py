"""State at scale (issue 28): a `notes` store of 100,000 notes round-trips exactly through
`store/open`, edits, past views, a skip, `store/rewind`, a restart from SQLite and a rewind after it. The benchmark
(bench/scale) takes the same path at 1,000,000; 100,000 keeps the suite fast."""
import copy

NOTES = 100_000
# A store/open line of 100,000 notes is about 15 MB, past the default 16 MiB only with margin.
ARGS = ("--max-message-bytes", str(256 << 20), "--history", "1000")


def note(i):
    # Every field in the server's own form (nulls written, dates to the millisecond), so that
    # what comes back can be compared with what went in byte for byte.
    return {"id": f"n{i}", "serverId": None, "text": f"note {i}",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
            "syncStatus": "synchronized", "serverText": None}


def state_of(client):
    current = client.request("state/get", {"store": "big"}, timeout=120)
    return current["version"], current["state"]


def edit(client, notes, positions, text):
    """Edits the notes at `positions` and returns what the state must then be: only those
    notes changed, with the new text, pending upload, and the server's new `updatedAt`."""
    for position in positions:
        client.dispatch("big", {"type": "edit", "id": notes[position]["id"],
                                "text": f"{text} {position}"})
    version, state = state_of(client)
    expected = copy.copy(notes)
    for position in positions:
        changed = dict(notes[position], text=f"{text} {position}", syncStatus="pendingUpload",
                       updatedAt=state["notes"][position]["updatedAt"])
        assert changed["updatedAt"] != notes[position]["updatedAt"]
        expected[position] = changed
    assert state["notes"] == expected
    return version, state


def test_a_100k_note_state_round_trips_through_edits_rewinds_and_a_restart(spawn, tmp_path):
    notes = [note(i) for i in range(NOTES)]
    edited = (0, 1, NOTES // 2, NOTES - 1)
    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)
    opened = client.request("store/open", {"feature": "notes", "store": "big", "persist": True,
                                           "state": {"notes": notes}}, timeout=120)
    assert opened["state"]["notes"] == notes
    assert opened["state"]["sync"]["pending"] == 0
    opened_version = opened["version"]

    first_version, first = edit(client, notes, edited, "first")
    # A past version's view, held apart and written as text (Store.pastView): whole, at a path,
    # and still the view it published after a skip recomputed the state.
    past = client.request("state/get", {"store": "big", "version": opened_version}, timeout=120)
    assert (past["version"], past["state"]) == (opened_version, opened["state"])
    at = client.request("state/get", {"store": "big", "version": opened_version,
                                      "path": f"/notes/{NOTES - 1}/text"})
    assert at["state"] == f"note {NOTES - 1}"
    client.request("history/skip", {"store": "big", "version": first_version, "skipped": True},
                   timeout=120)
    assert state_of(client)[1]["notes"][NOTES - 1] == notes[NOTES - 1]
    past = client.request("state/get", {"store": "big", "version": first_version}, timeout=120)
    assert past["state"] == first
    # The rewind replaces the notes whole: its patch is written from the state while it is
    # sent (HeldValue), one `replace` carrying every note, before the rewind's answer.
    patches = []
    client.add_listener(lambda m: patches.append(m) if m.get("method") == "state/patch"
                        and m["params"]["store"] == "big" else None)
    client.rewind("big", opened_version, timeout=120)
    whole = [op for m in patches for op in m["params"]["patch"] if op["path"] == "/notes"]
    assert whole == [{"op": "replace", "path": "/notes", "value": notes}]
    _, rewound = state_of(client)
    assert rewound["notes"] == notes

    saved_version, saved = edit(client, notes, edited, "second")
    assert saved["sync"]["pending"] == len(edited)
    assert client.close(timeout=120) == 0

    client = spawn("--state-dir", str(tmp_path), *ARGS, check_schema=False)
    restored = client.request("store/open", {"feature": "notes", "store": "big", "persist": True},
                              timeout=120)
    assert (restored["version"], restored["state"]) == (saved_version, saved)

    edit(client, saved["notes"], (2, NOTES // 3), "third")
    client.rewind("big", saved_version, timeout=120)
    assert state_of(client)[1] == saved
    assert client.close(timeout=120) == 0


def test_every_whole_view_of_100k_notes_is_the_opened_state(spawn):
    """The answers that write a whole view from the state (`store/open`, `state/get`,
    `state/subscribe`, `store/fork`) write a large array's elements on two threads
    (ElementPipeline): each must still carry every note, in order."""
    notes = [note(i) for i in range(NOTES)]
    client = spawn(*ARGS, check_schema=False)
    opened = client.request("store/open", {"feature": "notes", "store": "big",
                                           "state": {"notes": notes}}, timeout=120)
    assert opened["state"]["notes"] == notes
    assert state_of(client)[1] == opened["state"]
    subscribed = client.request("state/subscribe", {"store": "big"}, timeout=120)
    assert subscribed["state"] == opened["state"]
    forked = client.request("store/fork", {"store": "big", "as": "copy"}, timeout=120)
    assert forked["state"] == opened["state"]
    assert client.close(timeout=120) == 0
