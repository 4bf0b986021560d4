#!/usr/bin/env python3
"""Writes N typical JSON-RPC lines (the protocol's requests, responses and notifications) to
stdout, deterministically (seeded), for bench/json/run.sh."""
import json
import random
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
rng = random.Random(2026)
names = ["Zoë Adams", "Ana", "Jürgen Groß", "李雷", "Sam \"the\" Man", "Ola\tNordmann"]
skus = [f"sku-{i}" for i in range(40)]


def line(i):
    kind = i % 8
    if kind == 0:
        return {"jsonrpc": "2.0", "id": i, "method": "dispatch",
                "params": {"store": "counter", "action": {"type": "increment"}}}
    if kind == 1:
        return {"jsonrpc": "2.0", "id": i, "method": "dispatch",
                "params": {"store": "cart", "action": {"type": "setQuantity",
                           "id": rng.choice(skus), "quantity": rng.randint(0, 9)}}}
    if kind == 2:
        return {"jsonrpc": "2.0", "id": i, "result": {"store": "cart", "version": rng.randint(0, 10**6)}}
    if kind == 3:
        v = rng.randint(0, 10**6)
        return {"jsonrpc": "2.0", "method": "state/patch",
                "params": {"store": "counter", "from": v, "to": v + 1,
                           "patch": [{"op": "replace", "path": "/count", "value": v + 1}], "cause": i}}
    if kind == 4:
        return {"jsonrpc": "2.0", "id": i, "method": "state/get",
                "params": {"store": "users", "path": f"/items/{rng.randint(0, 99)}"}}
    if kind == 5:
        return {"jsonrpc": "2.0", "id": i, "result": {"store": "users", "version": rng.randint(0, 999),
                "state": {"query": "ca", "selected": None,
                          "items": [{"id": f"u{rng.randint(0, 999)}", "name": rng.choice(names),
                                     "email": "user@example.com", "active": rng.random() < 0.5,
                                     "score": round(rng.uniform(0, 100), 2)}],
                          "loadState": {"type": "loaded"}}}}
    if kind == 6:
        return {"jsonrpc": "2.0", "method": "state/patch",
                "params": {"store": "cart", "from": i, "to": i + 1, "patch": [
                    {"op": "replace", "path": f"/items/{rng.randint(0, 9)}/quantity", "value": rng.randint(1, 9)},
                    {"op": "replace", "path": "/total", "value": round(rng.uniform(1, 500), 2)},
                    {"op": "replace", "path": "/badgeCount", "value": rng.randint(1, 30)}], "cause": i}}
    return {"jsonrpc": "2.0", "id": i, "method": "dispatch",
            "params": {"store": "notes", "action": {"type": "edit", "id": f"n{rng.randint(0, 99)}",
                       "text": "Field note: “café” at 7°C\nline two\\ok"}}}


out = sys.stdout
for i in range(count):
    out.write(json.dumps(line(i), ensure_ascii=False, separators=(",", ":")))
    out.write("\n")
