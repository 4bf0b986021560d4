"""The fuzz generator: random, mutated and hostile JSON-RPC lines, each with the replies the
oracle (test_robustness_oracle.py) says JSON-RPC requires.

Shared by the pytest fuzz (test_robustness_fuzz.py) and the long run (scripts/fuzz.py, `make
fuzz`). It imports nothing but the standard library and the oracle (no pytest), so the long
run needs no test framework.
"""
import json

from test_robustness_oracle import (Unknowable, expectation_for_bytes, expected_line,
                                    mentions_method, strict_parse)


STORES = ["counter", "users", "cart", "backend", "notes", "profile", "navigation",
          "fz-1", "fz-2", "fz-3", "", "nope", "a\u0000b", "ünï ✓", "counter-1"]
FEATURES = ["counter", "users", "cart", "backend", "notes", "profile", "navigation", "nope", ""]
POINTERS = ["", "/", "/count", "/items", "/items/0", "/items/-", "/a~2", "~", "no-slash",
            "/a~0b~1c", "/~01", "/load/status", "/users/0/name", "/0", "//", "/items/00",
            "/items/-1", "/\u0000", "/ünï", "/" + "x" * 300]
STRINGS = ["", " ", "x", "SAVE10", "save10 ", "\u0000", "a\u0000b", "é", "e\u0301",
           "\u202e\u2066rtl", "\u2028\u2029", "😀", "\U0010ffff", "\ufeff", "\\", "\"",
           "line\nbreak", "tab\tcontrol\u0001", "x" * 2000, "app://users/42", "app://users/",
           "app://users/99999999999999999999", "app://settings", "::", "null"]
HUGE = [0, -1, 1, 2**31, -(2**31) - 1, 2**53 + 1, 2**63 - 1, -(2**63), 1e300, -1e300, 5e-324,
        0.5, -0.0, 1.0, 123456789.25]
ACTIONS = {
    "counter": [("increment", {}), ("decrement", {}), ("set", {"value": "int"}), ("reset", {}),
                ("incrementLater", {"afterMs": "delay"})],
    "users": [("load", {}), ("refresh", {}), ("retry", {}), ("search", {"query": "str"}),
              ("select", {"id": "int"}), ("deselect", {}), ("delete", {"id": "int"})],
    "cart": [("add", {"id": "str", "name": "str", "price": "money"}),
             ("setQuantity", {"id": "str", "quantity": "count"}), ("remove", {"id": "str"}),
             ("applyCoupon", {"code": "str"}), ("clearCoupon", {})],
    "backend": [("setOnline", {"online": "bool"}), ("setLatency", {"ms": "latency"}),
                ("setFailRate", {"rate": "rate"}), ("remoteEdit", {"noteId": "str", "text": "str"})],
    "notes": [("add", {"text": "str"}), ("edit", {"id": "str", "text": "str"}),
              ("delete", {"id": "str"}), ("sync", {}),
              ("resolveConflict", {"id": "str", "keep": "keep"})],
    "profile": [("edit", {"name": "str"}), ("save", {}), ("cancelSave", {}),
                ("dismissError", {})],
    "navigation": [("push", {"destination": "destination"}), ("pop", {}), ("popToRoot", {}),
                   ("openURL", {"url": "str"})],
}
INTERNAL = ["usersLoaded", "loaded", "loadFailed", "couponApplied", "searchAnswered", "saved",
            "tick", "__proto__", "constructor", "Increment", "increment ", ""]


class Fuzzer:
    def __init__(self, rng):
        self.rng = rng
        self.count = 0

    def choice(self, items):
        return self.rng.choice(items)

    def fresh_id(self):
        """A unique, valid id of a random type (all echoed exactly)."""
        self.count += 1
        n = self.count
        return self.choice([
            n, -n, 10**12 + n, n + 0.5, float(n) + 0.0, f"s{n}", f"ünï-{n}-😀", f"nul\u0000{n}",
            f"{n}", f"\\\"{n}\"", f"{n}" + " " * 3, 2**62 + n, -(2**62) - n, n * 1e-7])

    def odd_value(self, depth=0):
        """Any JSON value, biased to the awkward ones."""
        roll = self.rng.random()
        if roll < 0.2:
            return self.choice(HUGE)
        if roll < 0.4:
            return self.choice(STRINGS)
        if roll < 0.5:
            return self.choice([None, True, False])
        if roll < 0.6 or depth > 3:
            return self.choice([[], {}, [1], {"a": 1}, [[[]]], {"": {}}])
        if roll < 0.8:
            return [self.odd_value(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {self.choice(STRINGS[:12] + ["type", "store", "id"]): self.odd_value(depth + 1)
                for _ in range(self.rng.randint(0, 3))}

    def field_value(self, kind):
        """A value of the right type for an action field (usually), sometimes an odd one."""
        if self.rng.random() < 0.15:
            return self.odd_value()
        r = self.rng
        return {
            "int": lambda: r.choice([0, 1, 7, 42, -3, 10**9, 2**63 - 1, -(2**63)]),
            "delay": lambda: r.choice([0, 1, 5, 20, -1, 86_400_001]),
            "money": lambda: r.choice([0, 1, 999, 2500, -1]),
            "count": lambda: r.choice([0, 1, 2, 5, -1]),
            "latency": lambda: r.choice([0, 1, 10, -5, 60_001]),
            "rate": lambda: r.choice([0, 0.0, 0.25, 1, 1.5, -0.1]),
            "bool": lambda: r.choice([True, False]),
            "str": lambda: r.choice(STRINGS + ["a", "b", "n1", "1"]),
            "keep": lambda: r.choice(["local", "server", "both"]),
            "destination": lambda: r.choice([{"screen": "settings"},
                                             {"screen": "userDetail", "userId": 3},
                                             {"screen": "nowhere"}, {}]),
        }[kind]()

    def action(self):
        feature = self.choice(list(ACTIONS))
        if self.rng.random() < 0.08:
            return {"type": self.choice(INTERNAL)}
        name, fields = self.choice(ACTIONS[feature])
        action = {"type": name}
        for field, kind in fields.items():
            if self.rng.random() < 0.9:
                action[field] = self.field_value(kind)
        if self.rng.random() < 0.05:
            action[self.choice(["extra", "type2", ""])] = self.odd_value()
        if self.rng.random() < 0.03:
            return self.odd_value()
        return action

    def params(self, method):
        r = self.rng
        if method == "dispatch":
            params = {"store": self.choice(STORES), "action": self.action()}
            if r.random() < 0.3:
                params["wait"] = self.choice(["reduced", "settled", "Settled", "", None, 1])
        elif method in ("state/get", "state/subscribe", "state/unsubscribe"):
            params = {"store": self.choice(STORES)}
            if r.random() < 0.7:
                params["path"] = self.choice(POINTERS)
        elif method == "store/open":
            params = {"feature": self.choice(FEATURES)}
            if r.random() < 0.7:
                params["store"] = self.choice(STORES)
            if r.random() < 0.4:
                params["state"] = self.choice([
                    {}, {"count": 5}, {"count": None}, {"count": "x"}, {"count": 1.5},
                    {"items": []}, {"items": [{"id": "a", "name": "A", "price": 1, "quantity": 1}]},
                    {"items": [{"id": "a"}, {"id": "a"}]}, {"notes": []}, {"draft": "x"},
                    {"unknown": {"deep": [1, 2]}}, None, [], "x"])
            if r.random() < 0.2:
                params["persist"] = self.choice([False, "yes", 1, None])
        elif method == "store/close":
            params = {"store": self.choice(STORES)}
        elif method == "initialize":
            params = {"protocolVersion": self.choice([1, 2, "1", None]),
                      "client": self.choice([{"name": "fuzz", "version": "1"}, "fuzz", None, 1]),
                      "subscribe": self.choice(["all", "all", "none", "some", 1])}
        elif method == "$/cancelRequest":
            params = {"id": self.choice([1, "s1", None, {"a": 1}, [1], 2**63 - 1, 0.5])}
        else:
            params = {}
        # One field replaced by a value of another type, or removed, or params itself odd.
        roll = r.random()
        if roll < 0.25 and params:
            params[self.choice(list(params))] = self.odd_value()
        elif roll < 0.3 and params:
            del params[self.choice(list(params))]
        elif roll < 0.35:
            return self.choice([[], [1, 2], {"store": "counter", "extra": 1}])
        return params

    def message(self):
        r = self.rng
        method = self.choice(
            ["dispatch"] * 6 + ["state/get", "state/subscribe", "state/unsubscribe"] * 2
            + ["store/open", "store/open", "store/close", "store/list", "features/list",
               "initialize", "rpc.discover", "$/cancelRequest", "nosuch", "Dispatch",
               "dispatch ", "", "rpc.", "state/patch", "store/closed"])
        message = {"jsonrpc": "2.0", "method": method}
        if r.random() < 0.9:
            message["params"] = self.params(method)
        roll = r.random()
        if roll < 0.7:
            message["id"] = self.fresh_id()
        elif roll < 0.75:
            message["id"] = None
        elif roll < 0.82:
            message["id"] = self.choice([True, False, [1], {"id": 1}, [], {}])
        # else: a notification
        roll = r.random()
        if roll < 0.04:
            message["jsonrpc"] = self.choice(["1.0", 2.0, "2", None, "2.0 "])
        elif roll < 0.06:
            del message["jsonrpc"]
        elif roll < 0.08:
            message["method"] = self.choice([1, None, ["dispatch"], {"name": "dispatch"}])
        elif roll < 0.1:
            message["params"] = self.choice([1, "x", True, None])
        return message

    def batch(self):
        r = self.rng
        elements = [self.message() for _ in range(r.randint(1, 6))]
        for _ in range(r.randint(0, 2)):
            elements.insert(r.randint(0, len(elements)),
                            self.choice([1, "x", None, [], [self.message()], {}, True]))
        return elements

    def mutate(self, data):
        r = self.rng
        data = bytearray(data)
        for _ in range(r.randint(1, 3)):
            roll = r.random()
            at = r.randint(0, max(0, len(data) - 1))
            if roll < 0.35 and data:
                del data[at:]  # truncated
            elif roll < 0.6 and data:
                data[at] = r.choice(b'{}[]",:0123456789-+.eE\\ tfn\x00\r\x7f\xc3\xff')
            elif roll < 0.8:
                data[at:at] = bytes([r.choice(b'{}[]",:019e\\u\x00\xe2\x80\xa8')])
            elif data:
                del data[at]
        return bytes(data)

    def raw_bytes(self):
        r = self.rng
        alphabet = b'{}[]",:0123456789-.eE truefalsnul\\/\t\r\x00\x01\x7f\x80\xbf\xc0\xe2\xed\xf0\xff'
        return bytes(r.choice(alphabet) for _ in range(r.randint(0, 40)))

    def hostile(self):
        """Lines whose expected reply the test knows by construction: (bytes, expectation)."""
        r = self.rng
        kind = r.randint(0, 5)
        rid = self.fresh_id()
        if kind == 0:
            # Deep nesting inside params: within JSON.maximumDepth (2048) it is an ordinary
            # -32602; far beyond, the line is a parse error.
            depth = r.choice([50, 500, 1900, 2200, 5000, 100_000])
            inner = "[" * depth + "]" * depth
            line = ('{"jsonrpc":"2.0","id":%s,"method":"state/get","params":{"store":"counter",'
                    '"path":%s}}' % (json.dumps(rid), inner))
            if depth <= 1900:
                expectation = {"kind": "object", "deferrable": False,
                               "replies": [{"id": rid, "codes": {-32602}}]}
            else:
                expectation = {"kind": "object", "deferrable": False,
                               "replies": [{"id": None, "codes": {-32700}}]}
            return line.encode(), expectation
        if kind == 1:
            # Huge and overflowing numbers in params.
            number = r.choice(["1e400", "-1e400", "99999999999999999999", "-9223372036854775809",
                               "1" * 400, "1e-400", "9223372036854775807", "-0", "1E+2"])
            line = ('{"jsonrpc":"2.0","id":%s,"method":"state/get","params":{"store":"counter",'
                    '"path":%s}}' % (json.dumps(rid), number))
            return line.encode(), expectation_for_bytes(line.encode())
        if kind == 2:
            # A long string (well under the 16 MiB limit) as a store id.
            text = "x" * r.choice([10_000, 200_000])
            line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "state/get",
                               "params": {"store": text}})
            return line.encode(), {"kind": "object", "deferrable": False,
                                   "replies": [{"id": rid, "codes": {-32001}}]}
        if kind == 3:
            # Escapes: lone surrogates are not JSON text jansson accepts; pairs are.
            escape = r.choice(["\\ud800", "\\udc00x", "\\ud83d\\ude00", "\\u0000", "\\uFFFF",
                               "\\ud800\\u0041", "\\u00e9"])
            line = ('{"jsonrpc":"2.0","id":%s,"method":"state/get","params":{"store":"%s"}}'
                    % (json.dumps(rid), escape))
            return line.encode(), expectation_for_bytes(line.encode())
        if kind == 4:
            # Whitespace, CRLF and blank lines.
            line = self.choice([b"", b"   ", b"\t\r", b"\r", b" \r\r"])
            if r.random() < 0.5:
                body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "store/list"}).encode()
                line = b" \t" + body + b" \r"
            return line, expectation_for_bytes(line)
        # A batch of many small requests and notifications.
        elements = []
        for _ in range(r.randint(50, 300)):
            if r.random() < 0.5:
                elements.append({"jsonrpc": "2.0", "method": "store/list"})
            else:
                elements.append({"jsonrpc": "2.0", "id": self.fresh_id(), "method": "store/list"})
        line = json.dumps(elements).encode()
        return line, expected_line(json.loads(line))

    def line(self):
        """One input line and the reply it requires; None when it must not be sent."""
        r = self.rng
        roll = r.random()
        if roll < 0.45:
            value = self.message()
        elif roll < 0.6:
            value = self.batch()
        elif roll < 0.72:
            data = self.raw_bytes()
            return self._checked(data)
        elif roll < 0.9:
            source = self.message() if r.random() < 0.7 else self.batch()
            data = self.mutate(json.dumps(source, ensure_ascii=r.random() < 0.5).encode())
            return self._checked(data)
        else:
            return self.hostile()
        data = json.dumps(value, ensure_ascii=r.random() < 0.5).encode()
        return self._checked(data)

    def _checked(self, data):
        data = data.replace(b"\n", b" ")
        try:
            status, value = strict_parse(data)
        except Unknowable:
            return None
        if status == "ok":
            if mentions_method(value, {"shutdown"}):
                return None
        return data, expectation_for_bytes(data)
