"""A `store/open` line of 4 MiB or more whose state holds an array of 1 MiB or more leaves that
array as text, each element parsed and decoded by the store's decode on two threads (issue 28;
docs/architecture.md, "The open at scale"). It must answer exactly as the line parsed whole.

The oracle is the server itself: a method name spelled `store\\/open` is the same JSON string,
but the framer looks for the plain spelling before leaving anything as text, so that line is
parsed whole. The method is written after the params, so every defect sits at the same byte in
both lines, and the two answers must be equal, whatever the defect: a bad token, a broken
string, a repeated key, a number out of range, nesting too deep, at the array's first or last
element or at the split between the two threads, or a note that does not decode."""
import json
import subprocess

import pytest

NOTES = 32_000  # about 4.2 MB: past the 4 MiB from which a line is read this way
ARGS = ("--max-message-bytes", str(64 << 20))


def note(i):
    return {"id": f"n{i:05}", "serverId": None, "text": f"note {i} é",
            "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
            "syncStatus": "synchronized", "serverText": None}


NOTE_TEXTS = [json.dumps(note(i), separators=(",", ":"), ensure_ascii=False) for i in range(NOTES)]


def open_line(store, notes_text, method, feature="notes", request_id=1):
    params = '{"feature":"%s","store":"%s","state":{"notes":[%s]}}' % (feature, store, notes_text)
    return ('{"jsonrpc":"2.0","id":%d,"params":%s,"method":"%s"}'
            % (request_id, params, method)).encode()


def answers(client, line, tag):
    """What the server writes for `line`, up to the answer of a probe sent after it."""
    start = len(client.messages)
    client.send_line(line)
    client.send({"jsonrpc": "2.0", "id": f"probe-{tag}", "method": "store/list"})
    probe = client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == f"probe-{tag}",
                            start=start, timeout=120)
    index = client.messages.index(probe, start)
    return client.messages[start:index], probe["result"]


def with_defect(position, defect):
    """The notes' text with note `position`'s text changed by `defect`."""
    texts = list(NOTE_TEXTS)
    texts[position] = defect(texts[position])
    return ",".join(texts)


MIDDLE = NOTES // 2
DEFECTS = {
    "well-formed": (0, lambda t: t),
    "bad-token-first": (0, lambda t: t.replace('"serverId":null', '"serverId":nul')),
    "bad-token-middle": (MIDDLE, lambda t: t.replace('"serverId":null', '"serverId":nulll')),
    "bad-token-last": (NOTES - 1, lambda t: t + "x"),
    "missing-comma": (MIDDLE + 1, lambda t: t.replace(",", " ", 1)),
    "trailing-comma": (NOTES - 1, lambda t: t + ","),
    "control-character": (MIDDLE - 1, lambda t: t.replace("note", "no\u0007te")),
    "lone-surrogate": (3, lambda t: t.replace("note", "\\ud800")),
    "bad-escape": (NOTES - 2, lambda t: t.replace("note", "\\q")),
    "repeated-key": (MIDDLE, lambda t: t.replace('"serverId":null', '"text":"x"')),
    "integer-out-of-range": (7, lambda t: t.replace("null", "99999999999999999999", 1)),
    "number-beyond-double": (MIDDLE + 2, lambda t: t.replace("null", "1e999", 1)),
    "too-deep": (MIDDLE, lambda t: t.replace("null", "[" * 2100 + "]" * 2100, 1)),
    "unclosed-string": (NOTES - 1, lambda t: t[:-2]),
    "wrong-type": (MIDDLE + 3, lambda t: t.replace('"text":"note', '"text":7,"x":"')),
    "unknown-status": (MIDDLE - 3, lambda t: t.replace("synchronized", "lost")),
    "repeated-id": (NOTES - 1, lambda t: t.replace(f"n{NOTES - 1:05}", "n00000")),
    "not-an-object": (MIDDLE, lambda t: "[1,2]"),
}


@pytest.fixture
def server(spawn):
    return spawn(*ARGS, check_schema=False)


@pytest.mark.parametrize("name", list(DEFECTS))
def test_a_large_open_answers_as_the_whole_parse(server, name):
    position, defect = DEFECTS[name]
    notes_text = with_defect(position, defect)
    whole = open_line(f"w-{name}", notes_text, "store\\/open")
    from_text = open_line(f"t-{name}", notes_text, "store/open")
    assert len(from_text) >= 4 << 20
    expected, stores_after_whole = answers(server, whole, f"w-{name}")
    got, stores_after_text = answers(server, from_text, f"t-{name}")
    # The store names differ by their first letter only: their answers say which.
    assert json.loads(json.dumps(got).replace(f"t-{name}", f"w-{name}")) == expected
    opened = [s["store"] for s in stores_after_text["stores"]]
    assert (f"t-{name}" in opened) == (f"w-{name}" in opened)
    if name == "well-formed":
        assert expected[0]["result"]["state"]["notes"] == [note(i) for i in range(NOTES)]
    else:
        assert "error" in expected[0]


def test_an_unknown_feature_with_broken_notes_is_a_parse_error(server):
    notes_text = with_defect(MIDDLE, lambda t: t + "]")
    got, _ = answers(server, open_line("x", notes_text, "store/open", feature="nope"), "nope")
    assert got[0]["error"]["code"] == -32700
    got, _ = answers(server, open_line("x", ",".join(NOTE_TEXTS), "store/open", feature="nope"),
                     "nope-well-formed")
    assert got[0]["error"]["code"] == -32002  # unknown feature


def test_an_open_of_a_store_in_use_with_broken_notes_is_a_parse_error(server):
    answers(server, open_line("in-use", "", "store/open"), "in-use")
    notes_text = with_defect(NOTES - 1, lambda t: t[:-1])
    got, _ = answers(server, open_line("in-use", notes_text, "store/open"), "in-use-broken")
    assert got[0]["error"]["code"] == -32700


def test_large_opens_sent_back_to_back_each_open_whole(stateserver_bin):
    """Three large opens and a small request in one write: each long line's read buffer goes
    with its request, and the bytes already read after it move to the next buffer intact."""
    notes = [note(i) for i in range(NOTES)]
    lines = [json.dumps({"jsonrpc": "2.0", "id": k, "method": "store/open",
                         "params": {"feature": "notes", "store": f"s{k}",
                                    "state": {"notes": notes}}}, separators=(",", ":"),
                        ensure_ascii=False)
             for k in range(3)]
    lines.append('{"jsonrpc":"2.0","id":9,"method":"store/list"}')
    done = subprocess.run([stateserver_bin, "--ephemeral", *ARGS],
                          input=("\n".join(lines) + "\n").encode(), capture_output=True,
                          timeout=120)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [0, 1, 2, 9]
    assert all(a["result"]["state"]["notes"] == notes for a in answers[:3])
    assert {"s0", "s1", "s2"} <= {s["store"] for s in answers[3]["result"]["stores"]}
