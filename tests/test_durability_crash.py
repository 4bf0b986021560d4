"""Acknowledged means durable: bursts of pipelined changes to `notes` and `profile`, the server
killed with SIGKILL at a random moment, restarted on the same state directory. Every change whose
response the client had read must be there, at its acknowledged version or later.

The kill comes after a random number of responses have been read (not after a sleep), so the
moment is random but the test does not depend on the machine's speed.
"""
import json
import random

from crash_support import TIMEOUT, burst_then_kill, request, start

TRIALS = 24


def test_every_acknowledged_change_survives_kill_9(stateserver_bin, tmp_path):
    rng = random.Random(9)
    state_dir = str(tmp_path / "state")
    acknowledged_notes = {}  # text -> version acknowledged
    profile_names = []  # every name sent, in order, with its trial
    last_profile_ack = None  # (index in profile_names, version)
    total_acks = 0
    for trial in range(TRIALS):
        burst = rng.randint(50, 400)
        kill_after = rng.randint(1, burst)
        sent = {}
        lines = []
        for n in range(burst):
            id = f"t{trial}-{n}"
            if rng.random() < 0.7:
                text = f"trial {trial} note {n}"
                action = {"store": "notes", "action": {"type": "add", "text": text}}
                sent[id] = ("notes", text)
            else:
                name = f"trial {trial} name {n}"
                profile_names.append(name)
                action = {"store": "profile", "action": {"type": "edit", "name": name}}
                sent[id] = ("profile", len(profile_names) - 1)
            if rng.random() < 0.2:
                action["wait"] = "settled"
            lines.append(json.dumps(
                {"jsonrpc": "2.0", "id": id, "method": "dispatch", "params": action}))

        def acknowledge(message):
            nonlocal last_profile_ack
            store, what = sent[message["id"]]
            version = message["result"]["version"]
            if store == "notes":
                acknowledged_notes[what] = version
            elif last_profile_ack is None or what > last_profile_ack[0]:
                last_profile_ack = (what, version)

        server = start(stateserver_bin, state_dir)
        burst_then_kill(server, lines, sent, kill_after, acknowledge)
        total_acks += kill_after

        check = start(stateserver_bin, state_dir)
        try:
            notes = request(check, "state/get", {"store": "notes"}, "check-notes")
            texts = [note["text"] for note in notes["state"]["notes"]]
            assert len(texts) == len(set(texts)), "a note came back twice"
            missing = [t for t in acknowledged_notes if t not in texts]
            assert not missing, f"trial {trial}: acknowledged notes lost: {missing[:5]}"
            assert notes["version"] >= max(acknowledged_notes.values(), default=0)
            if last_profile_ack is not None:
                index, version = last_profile_ack
                profile = request(check, "state/get", {"store": "profile"}, "check-profile")
                assert profile["version"] >= version, f"trial {trial}"
                # The acknowledged name, or one sent after it (acknowledged or not).
                assert profile["state"]["draft"] in profile_names[index:], f"trial {trial}"
            check.stdin.close()
            assert check.wait(timeout=TIMEOUT) == 0
        finally:
            if check.poll() is None:
                check.kill()
                check.wait(timeout=TIMEOUT)
            check.stdout.close()
            check.stderr.close()
    assert total_acks >= TRIALS, "the bursts acknowledged almost nothing"
    assert len(acknowledged_notes) > 100
