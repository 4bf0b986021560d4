"""What the robustness tests share: an oracle that says which reply JSON-RPC 2.0 requires for an
input line (computed independently of the server, from Python's strict JSON parser and the
protocol's rules), and a checker that accounts for every reply line of a pipelined session.

A line gets at most one reply line (an object, or an array for a batch). It is due before the
answer to the probe request sent right after the line, except a `dispatch` with
`wait: "settled"`, whose reply may come any time later (before the process exits).
"""
import json
import math

KNOWN_CODES = {-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32010,
               -32800}
METHODS = ["dispatch", "state/get", "state/subscribe", "state/unsubscribe", "store/open",
           "store/close", "store/list", "features/list", "initialize", "rpc.discover",
           "$/cancelRequest"]
INT64 = (-(1 << 63), (1 << 63) - 1)


class Unknowable(Exception):
    """The oracle cannot say what the server must answer (e.g. nesting Python cannot parse)."""


def _has_problem_strings(value):
    """Whether a parsed value holds what jansson refuses but Python accepts: lone surrogates
    (from \\uD800 escapes) anywhere."""
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return any(_has_problem_strings(v) for v in value)
    if isinstance(value, dict):
        return any(_has_problem_strings(k) or _has_problem_strings(v) for k, v in value.items())
    return False


class Refused:
    """Stands where the server refuses a member of well-formed JSON: a repeated key's value, an
    integer outside Int64, a number beyond a double. The rest of the message stays readable."""

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"Refused({self.kind})"


def refusals(value, path=()):
    """The paths (tuples of keys and indices) of every Refused member in a parsed value."""
    if isinstance(value, Refused):
        return [path]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in refusals(v, path + (i,))]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in refusals(v, path + (k,))]
    return []


def strict_parse(data):
    """Parses one line's bytes as the server must. Returns ("ok", value) (refused members as
    Refused), ("none", None) for a blank line, or ("error", codes) with the codes the single
    id-null reply may carry."""
    if data.endswith(b"\r"):
        data = data[:-1]
    if all(b in b" \t\r" for b in data):
        return "none", None
    if b"\x00" in data:
        return "error", {-32700}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "error", {-32700}

    def pairs(items):
        result = {}
        for key, value in items:
            result[key] = Refused("duplicate") if key in result else value
        return result

    def parse_int(s):
        return int(s) if INT64[0] <= int(s) <= INT64[1] else Refused("number")

    def parse_float(s):
        return Refused("number") if math.isinf(float(s)) else float(s)

    def constant(s):
        raise ValueError(f"{s} is not JSON")

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_int=parse_int,
                           parse_float=parse_float, parse_constant=constant)
    except RecursionError as error:
        raise Unknowable("nested too deep for Python") from error
    except ValueError:
        return "error", {-32700}
    if _has_problem_strings(value):
        return "error", {-32700}
    return "ok", value


def _is_id(value):
    return value is None or (isinstance(value, (str, int, float)) and not isinstance(value, bool))


def expected_reply(message):
    """The reply one element requires: None for a notification, else a dict
    {id, codes (None: any result or error), deferrable}.

    A refused member (Refused) in the envelope makes the request invalid (-32600) but its id is
    still echoed, unless the id itself is the refused member; one inside params is refused like
    an invalid param (-32600 for a repeated key, -32602 for a number), and not answered in a
    notification."""
    if not isinstance(message, dict):
        return {"id": None, "codes": {-32600}, "deferrable": False}
    if "id" in message and not _is_id(message["id"]):
        return {"id": None, "codes": {-32600}, "deferrable": False}
    rid = message.get("id")
    invalid = {"id": rid, "codes": {-32600}, "deferrable": False}
    refused = refusals(message)
    if any(len(path) < 2 or path[0] != "params" for path in refused):
        return invalid
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("jsonrpc"), str):
        return invalid
    if not isinstance(message.get("method"), str):
        return invalid
    if "params" in message and not isinstance(message["params"], (dict, list)):
        return invalid
    if "id" not in message:
        return None
    if refused:
        return {"id": rid, "codes": {-32600, -32602}, "deferrable": False}
    method, params = message["method"], message.get("params")
    codes = None
    if method not in METHODS and method != "shutdown":
        codes = {-32601}  # whatever the params (NOTES.md 18:58, fixed)
    deferrable = (method == "dispatch" and isinstance(params, dict)
                  and params.get("wait") == "settled")
    return {"id": rid, "codes": codes, "deferrable": deferrable}


def expected_line(value):
    """The reply line a parsed line requires: None, or {"kind": "object"|"array", "replies":
    [...], "deferrable"}."""
    if isinstance(value, list):
        if not value:
            return {"kind": "object", "replies": [{"id": None, "codes": {-32600}}],
                    "deferrable": False}
        replies = [r for r in map(expected_reply, value) if r is not None]
        if not replies:
            return None
        return {"kind": "array", "replies": replies,
                "deferrable": any(r["deferrable"] for r in replies)}
    reply = expected_reply(value)
    if reply is None:
        return None
    return {"kind": "object", "replies": [reply], "deferrable": reply["deferrable"]}


def expectation_for_bytes(data):
    """The reply line a raw line requires (see expected_line)."""
    status, value = strict_parse(data)
    if status == "none":
        return None
    if status == "error":
        return {"kind": "object", "replies": [{"id": None, "codes": value}], "deferrable": False}
    return expected_line(value)


def mentions_method(value, names):
    """Whether a parsed line calls one of `names` (as a message or inside a batch)."""
    elements = value if isinstance(value, list) else [value]
    return any(isinstance(e, dict) and isinstance(e.get("method"), str) and e["method"] in names
               for e in elements)


def id_key(value):
    """An id as a comparable key that tells 1 from 1.0 and "1" (ids must be echoed exactly)."""
    return (type(value).__name__, json.dumps(value))


def signature(line):
    """What identifies a reply line: its kind and the ids it carries, in order."""
    if isinstance(line, list):
        return ("array", tuple(id_key(r.get("id")) if isinstance(r, dict) else None
                               for r in line))
    return ("object", (id_key(line.get("id")),))


def expected_signature(expectation):
    ids = tuple(id_key(r["id"]) for r in expectation["replies"])
    return (expectation["kind"], ids)


def check_reply(reply, expected, context):
    """One response object against its expectation: JSON-RPC shape, id, code."""
    assert isinstance(reply, dict), f"{context}: a reply that is not an object: {reply!r}"
    assert reply.get("jsonrpc") == "2.0", f"{context}: {reply!r}"
    assert id_key(reply.get("id")) == id_key(expected["id"]), (
        f"{context}: id {reply.get('id')!r} instead of {expected['id']!r}")
    assert ("result" in reply) != ("error" in reply), f"{context}: {reply!r}"
    if "error" in reply:
        error = reply["error"]
        assert isinstance(error.get("code"), int) and error["code"] in KNOWN_CODES, (
            f"{context}: {reply!r}")
        assert error["code"] != -32603, f"{context}: an internal error: {reply!r}"
        assert isinstance(error.get("message"), str) and error["message"], f"{context}: {reply!r}"
        if error["code"] == -32602:
            data = error.get("data") or {}
            assert isinstance(data.get("pointer"), str) and data.get("reason"), (
                f"{context}: -32602 without data.pointer/reason: {reply!r}")
        if expected["codes"] is not None:
            assert error["code"] in expected["codes"], (
                f"{context}: code {error['code']} not in {expected['codes']}: {reply!r}")
    else:
        assert expected["codes"] is None, (
            f"{context}: a result where {expected['codes']} was required: {reply!r}")


def check_line(line, expectation, context):
    if expectation["kind"] == "array":
        assert isinstance(line, list), f"{context}: expected a batch reply, got {line!r}"
        assert len(line) == len(expectation["replies"]), (
            f"{context}: {len(line)} replies for {len(expectation['replies'])} requests")
        for reply, expected in zip(line, expectation["replies"]):
            check_reply(reply, expected, context)
    else:
        check_reply(line, expectation["replies"][0], context)


def _satisfies(line, expectation):
    try:
        check_line(line, expectation, "")
    except AssertionError:
        return False
    return True


class Ledger:
    """Accounts for every reply line of a session where each sent line is followed by a probe.

    `expect(text, expectation)` before sending a line; `segment(lines)` with the reply lines
    (responses only, probe excluded) that arrived between that line's probe and the previous
    one; `finish(lines)` with the reply lines written after the last probe.
    """

    def __init__(self):
        self.current = None
        self.deferred = []  # (signature, expectation, context)

    def expect(self, context, expectation):
        self.current = (context, expectation)

    def segment(self, lines):
        context, expectation = self.current
        lines = list(lines)
        if expectation is not None:
            wanted = expected_signature(expectation)
            # Two replies may carry the same ids (a deferred `id: null` result next to a parse
            # error's `id: null`): take the first one that satisfies the expectation.
            candidates = [i for i, line in enumerate(lines) if signature(line) == wanted]
            match = next((i for i in candidates if _satisfies(lines[i], expectation)),
                         candidates[0] if candidates else None)
            if match is None:
                assert expectation["deferrable"], (
                    f"{context}: no reply with ids {wanted} before the next request's answer; "
                    f"got {lines!r}")
                self.deferred.append((wanted, expectation, context))
            else:
                check_line(lines.pop(match), expectation, context)
        self._settle(lines, context)

    def _settle(self, lines, context):
        for line in lines:
            candidates = [i for i, (sig, _, _) in enumerate(self.deferred)
                          if sig == signature(line)]
            found = next((i for i in candidates if _satisfies(line, self.deferred[i][1])),
                         candidates[0] if candidates else None)
            assert found is not None, f"after {context}: an unexpected reply {line!r}"
            _, expectation, origin = self.deferred.pop(found)
            check_line(line, expectation, origin)

    def finish(self, lines):
        self._settle(lines, "the end of input")
        assert not self.deferred, f"never answered: {[c for _, _, c in self.deferred]}"
