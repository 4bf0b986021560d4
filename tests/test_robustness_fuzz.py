"""A seeded fuzz of the whole input surface, end to end through the release binary.

Thousands of lines (random bytes, mutated and truncated requests, wrong types in every params
field of every method, odd pointers and ids, batches, huge numbers, deep nesting, unicode and NUL)
go to one server, each followed by a probe request. After each line the test checks that exactly
the replies JSON-RPC 2.0 requires arrived (see test_robustness_oracle.py: one per request with its
id echoed exactly, none for notifications, valid codes and messages) and that the server is
alive; at the end a fresh store still works and end of input exits 0. The `spawn` fixture checks
every line the server writes against the protocol schema.

Set STATESERVER_FUZZ_SEED to explore other seeds, STATESERVER_FUZZ_LINES for a longer run.
"""
import json
import os
import random

import pytest

from fuzz_generator import Fuzzer
from test_robustness_oracle import Ledger, expectation_for_bytes

SEED = int(os.environ.get("STATESERVER_FUZZ_SEED", "20261129"))
LINES = int(os.environ.get("STATESERVER_FUZZ_LINES", "3000"))
TIMEOUT = 30  # seconds any one reply may take on a loaded machine


def _responses(messages):
    """Response lines (objects with an id and no method, or batch arrays)."""
    return [m for m in messages
            if isinstance(m, list) or (isinstance(m, dict) and "method" not in m)]


def run_session(client, fuzzer, lines, chunk=100):
    """Sends `lines` fuzz lines, each followed by a probe, `chunk` at a time; checks each
    segment of replies with the ledger. Returns the ledger, the number of lines sent and the
    index of the first message not yet accounted for."""
    ledger = Ledger()
    sent = 0
    cases = []
    while len(cases) < lines:
        case = fuzzer.line()
        if case is not None:
            cases.append(case)
    seen = len(client.messages)
    for start in range(0, len(cases), chunk):
        block = cases[start:start + chunk]
        payload = bytearray()
        for index, (data, _) in enumerate(block, start):
            payload += data + b"\n"
            payload += json.dumps({"jsonrpc": "2.0", "id": f"probe-{index}",
                                   "method": "store/list"}).encode() + b"\n"
        client.send_bytes(bytes(payload))
        for index, (data, expectation) in enumerate(block, start):
            probe = f"probe-{index}"
            try:
                found = client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == probe,
                                        timeout=TIMEOUT, start=seen)
            except Exception as error:
                pytest.fail(f"no answer to the probe after line {index} {data[:300]!r}: "
                            f"{error!r}; exit code {client.process.poll()}")
            at = client.messages.index(found, seen)
            ledger.expect(f"line {index} {data[:300]!r}", expectation)
            ledger.segment(_responses(client.messages[seen:at]))
            seen = at + 1
            sent += 1
    return ledger, sent, seen


def finish_session(client, ledger, seen):
    """A final valid request on a fresh store, then end of input: exit 0, and every reply owed
    (from message index `seen` on) arrived."""
    store = f"final-{SEED}"
    opened = client.request("store/open", {"feature": "counter", "store": store},
                            id="final-open", timeout=TIMEOUT)
    assert opened["version"] == 0 and opened["state"] == {"count": 0}
    result = client.request("dispatch", {"store": store, "action": {"type": "increment"}},
                            id="final-dispatch", timeout=TIMEOUT)
    assert result == {"store": store, "version": 1}
    assert client.close(timeout=TIMEOUT) == 0
    # Deferred "settled" replies come before end of input is served, or at the drain timeout.
    finals = ("final-open", "final-dispatch")
    ledger.finish([m for m in _responses(client.messages[seen:])
                   if not (isinstance(m, dict) and m.get("id") in finals)])


def test_fuzz_lines_get_exactly_the_required_replies(spawn):
    client = spawn("--drain-timeout", "1")
    fuzzer = Fuzzer(random.Random(SEED))
    ledger, sent, seen = run_session(client, fuzzer, LINES)
    assert sent == LINES
    assert client.process.poll() is None, "the server died"
    finish_session(client, ledger, seen)


def test_fuzz_batches_and_notifications_only(spawn):
    """Lines made of notifications (valid, failing and malformed) get no reply at all, and
    batches of only notifications no line: checked line by line with probes."""
    client = spawn("--drain-timeout", "1")
    rng = random.Random(SEED + 1)
    fuzzer = Fuzzer(rng)
    ledger = Ledger()
    sent = 0
    seen = len(client.messages)
    for index in range(400):
        elements = []
        for _ in range(rng.randint(1, 5)):
            message = fuzzer.message()
            message.pop("id", None)
            if message.get("method") == "shutdown":
                continue
            elements.append(message)
        if not elements:
            continue
        value = elements if rng.random() < 0.5 or len(elements) > 1 else elements[0]
        data = json.dumps(value).encode()
        expectation = expectation_for_bytes(data)  # keys with U+0000 make it a parse error
        client.send_line(data)
        client.send({"jsonrpc": "2.0", "id": f"probe-{index}", "method": "store/list"})
        found = client.wait_for(lambda m: isinstance(m, dict) and m.get("id") == f"probe-{index}",
                                timeout=TIMEOUT, start=seen)
        at = client.messages.index(found, seen)
        ledger.expect(f"line {index} {data[:300]!r}", expectation)
        ledger.segment(_responses(client.messages[seen:at]))
        seen = at + 1
        sent += 1
    assert sent > 300
    finish_session(client, ledger, seen)


class PersistingFuzzer(Fuzzer):
    """Opens most stores with `persist: true`, so the fuzz also goes through SQLite."""

    def params(self, method):
        params = super().params(method)
        if method == "store/open" and isinstance(params, dict) and self.rng.random() < 0.6:
            params["persist"] = True
        return params


def test_fuzz_with_persistent_stores_across_restarts(spawn, tmp_path):
    """The same fuzz against a state directory, three servers in a row on the same database:
    persistent stores come back (store/open of an existing persisted id restores it)."""
    for round in range(3):
        client = spawn("--state-dir", str(tmp_path), "--drain-timeout", "1")
        fuzzer = PersistingFuzzer(random.Random(SEED + 10 + round))
        ledger, sent, seen = run_session(client, fuzzer, 600)
        assert client.process.poll() is None, "the server died"
        finish_session(client, ledger, seen)
