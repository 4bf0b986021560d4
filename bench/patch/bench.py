"""JSON Patch benchmark: diff and apply on two 100,000-element keyed arrays that differ in one
element, Swift (`json-tool bench-patch`) against Python's `jsonpatch`, on the same pair, in one
run. Called by run.sh with the json-tool binary path.

Env: PATCH_BENCH_ELEMENTS (default 100000), PATCH_BENCH_ROUNDS (Python rounds, default 5;
Swift runs 50), PATCH_BENCH_TARGET (minimum ratio, default 100).

The target applies to the case the design is for: a store's new state shares every untouched
buffer with the old one, so Swift decides 99,999 elements by comparing their bits, which is
bound by memory bandwidth (about as fast as one memcmp over both arrays). The case where both
documents were parsed apart is shown for information: there both sides must compare every
element by value, and Python does that in C.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import jsonpatch


def best(rounds, body):
    fastest = float("inf")
    result = None
    for _ in range(rounds):
        start = time.perf_counter()
        result = body()
        fastest = min(fastest, time.perf_counter() - start)
    return fastest, result


def pair(count):
    items = [{"id": i, "name": f"item {i}", "done": False, "price": i * 0.25, "tags": ["a", "b"]}
             for i in range(count)]
    old = {"items": items}
    new = json.loads(json.dumps(old))
    new["items"][count // 2]["done"] = True
    return old, new


def main():
    tool = sys.argv[1]
    count = int(os.environ.get("PATCH_BENCH_ELEMENTS", "100000"))
    rounds = int(os.environ.get("PATCH_BENCH_ROUNDS", "5"))
    target = float(os.environ.get("PATCH_BENCH_TARGET", "100"))
    old, new = pair(count)

    with tempfile.NamedTemporaryFile("w", suffix=".ndjson", delete=False) as file:
        file.write(json.dumps(old, separators=(",", ":")) + "\n")
        file.write(json.dumps(new, separators=(",", ":")) + "\n")
        path = file.name
    try:
        swift_run = subprocess.run([tool, "bench-patch", path, "--rounds", "50"],
                                   capture_output=True, check=False)
    finally:
        os.unlink(path)
    if swift_run.returncode != 0:
        sys.exit(f"json-tool bench-patch failed: {swift_run.stderr.decode()}"
                 f"{swift_run.stdout.decode()}")
    swift = json.loads(swift_run.stdout)

    py_diff, patch = best(rounds, lambda: jsonpatch.make_patch(old, new))
    document = json.loads(json.dumps(old))
    py_apply, _ = best(rounds, lambda: patch.apply(document, in_place=True))
    py_apply_copy, _ = best(1, lambda: patch.apply(old))
    assert document == new, "Python's patch did not give the new document"

    def ms(seconds):
        return f"{seconds * 1e3:10.3f} ms"

    shared = swift["diff_shared_seconds"]
    parsed = swift["diff_parsed_seconds"]
    apply = swift["apply_seconds"]
    print(f"JSON Patch: {count:,}-element keyed array, one element changed "
          f"(best of {rounds} Python / {swift['rounds']} Swift rounds)")
    print(f"  Swift patch:  {json.dumps(swift['patch'])}")
    print(f"  Python patch: {patch.to_string()}")
    print(f"  {'Python jsonpatch.make_patch':52} {ms(py_diff)}")
    print(f"  {'Swift diff, new state sharing storage (as a store)':52} {ms(shared)}"
          f"   {py_diff / shared:9.0f}x")
    print(f"  {'Swift diff + apply, sharing storage':52} {ms(shared + apply)}"
          f"   {py_diff / (shared + apply):9.0f}x")
    print(f"  {'Swift diff, both parsed apart (no shared storage)':52} {ms(parsed)}"
          f"   {py_diff / parsed:9.1f}x  (information, no target)")
    print(f"  {'Python JsonPatch.apply(in_place=True)':52} {ms(py_apply)}")
    print(f"  {'Python JsonPatch.apply (default: deep copy first)':52} {ms(py_apply_copy)}")
    print(f"  {'Swift apply(to:), in place':52} {ms(apply)}   {py_apply / apply:9.0f}x"
          " (against in_place=True)")
    ratio = py_diff / (shared + apply)
    print(f"  ratio Python make_patch / Swift diff + apply (store case): {ratio:.0f}x"
          f" (target >= {target:.0f}x)")
    if ratio < target:
        print("  BELOW TARGET", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
