"""Our diffs, applied by another implementation: Python's `jsonpatch`.

Thousands of seeded document pairs are generated here, diffed by `json-tool diff` (the Swift
`JSONPatch.diff`), and every patch must turn the old document into the new one when applied
with `jsonpatch.apply_patch`, compared strictly (an integer is not a float, `true` is not 1),
and must not be larger than replacing the whole document.

Binary: `$JSON_TOOL_BIN`, else `.build/release/json-tool` or `.build/debug/json-tool`, else
built with `swift build`. Under `CI=true` a missing binary fails the test instead of skipping.
"""

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import jsonpatch
import pytest

REPO = Path(__file__).resolve().parent.parent
PAIRS = 3000
SEED = 20261129

KEYS = ["a", "b", "id", "name", "a/b", "~", "~1", "/", "", " ", "ä", "日本", "é/~0", "1", "-",
        "0", "emoji 🎉", 'x"y', "back\\slash", "tab\there"]


def json_tool() -> str:
    explicit = os.environ.get("JSON_TOOL_BIN")
    if explicit and Path(explicit).is_file():
        return explicit
    if explicit and os.environ.get("CI") == "true":
        pytest.fail(f"JSON_TOOL_BIN={explicit!r} is not a file")
    for candidate in (REPO / ".build/release/json-tool", REPO / ".build/debug/json-tool"):
        if candidate.is_file():
            return str(candidate)
    if shutil.which("swift"):
        subprocess.run(["swift", "build", "--disable-index-store", "--product", "json-tool"],
                       cwd=REPO, check=True, stdout=subprocess.DEVNULL)
        built = REPO / ".build/debug/json-tool"
        if built.is_file():
            return str(built)
    message = f"json-tool not found (JSON_TOOL_BIN={explicit!r}) and could not be built"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


class Generator:
    """Random documents and edits of them, in the spirit of the Swift property test."""

    def __init__(self, seed: int):
        self.random = random.Random(seed)
        self.next_id = 1000

    def chance(self, percent: int) -> bool:
        return self.random.randrange(100) < percent

    def key(self) -> str:
        return self.random.choice(KEYS)

    def scalar(self):
        kind = self.random.randrange(7)
        if kind == 0:
            return None
        if kind == 1:
            return self.chance(50)
        if kind == 2:
            return self.random.randint(-5, 5)
        if kind == 3:
            return self.random.randint(-10**12, 10**12)
        if kind == 4:
            return self.random.choice([0.5, -2.25, 1.0, 1e-07, 3.14159])
        if kind == 5:
            return self.key()
        return f"text {self.random.randrange(20)}"

    def document(self, depth: int):
        if depth >= 4 or (depth > 0 and self.chance(35)):
            return self.scalar()
        kind = self.random.randrange(3)
        if kind == 0:
            return {self.key(): self.document(depth + 1) for _ in range(self.random.randrange(6))}
        if kind == 1:
            count = self.random.randrange(300 if self.chance(10) else 12)
            return [self.keyed_element(depth) for _ in range(count)]
        return [self.document(depth + 1) for _ in range(self.random.randrange(8))]

    def keyed_element(self, depth: int):
        self.next_id += 1
        element = {"id": self.next_id if self.chance(80) else f"id-{self.next_id}",
                   "name": f"n{self.random.randrange(5)}"}
        if self.chance(50):
            element["value"] = self.document(depth + 2)
        return element

    def edit(self, value, depth: int):
        """Returns `value` with one random change (containers are changed in place)."""
        if isinstance(value, dict):
            action = self.random.randrange(10)
            if not value or action < 2:
                value[self.key()] = self.document(depth + 1)
            elif action < 4:
                del value[self.random.choice(list(value))]
            else:
                key = self.random.choice(list(value))
                value[key] = self.edit(value[key], depth + 1)
            return value
        if isinstance(value, list):
            keyed = all(isinstance(e, dict) and "id" in e for e in value)
            action = self.random.randrange(10)
            if not value or action < 2:
                element = self.keyed_element(depth) if keyed else self.document(depth + 1)
                value.insert(self.random.randint(0, len(value)), element)
            elif action < 4:
                del value[self.random.randrange(len(value))]
            elif action < 6:
                moved = value.pop(self.random.randrange(len(value)))
                value.insert(self.random.randint(0, len(value)), moved)
            elif action < 7:
                self.random.shuffle(value)
            else:
                index = self.random.randrange(len(value))
                if keyed:
                    value[index]["name"] = f"renamed {self.random.randrange(5)}"
                    if self.chance(30):
                        value[index]["value"] = self.document(depth + 2)
                else:
                    value[index] = self.edit(value[index], depth + 1)
            return value
        return self.scalar() if self.chance(70) else self.document(depth + 1)

    def pair(self):
        old = self.document(0)
        new = json.loads(json.dumps(old))
        for _ in range(self.random.randrange(5)):
            new = self.edit(new, 0)
        return old, new


def strictly_equal(a, b) -> bool:
    """`==` without Python's 1 == 1.0 == True: types must match too."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b))
    return a == b


def compact(value) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def diff_all(pairs):
    lines = "".join(json.dumps([old, new], ensure_ascii=False) + "\n" for old, new in pairs)
    result = subprocess.run([json_tool(), "diff"], input=lines.encode(), capture_output=True,
                            check=False, timeout=300)
    assert result.returncode == 0, result.stderr.decode()
    output = result.stdout.decode().splitlines()
    assert len(output) == len(pairs)
    return output


def test_every_generated_patch_applies_with_python_jsonpatch():
    generator = Generator(SEED)
    pairs = [generator.pair() for _ in range(PAIRS)]
    failures = []
    non_empty = 0
    for index, ((old, new), line) in enumerate(zip(pairs, diff_all(pairs))):
        patch = json.loads(line)
        non_empty += bool(patch)
        whole = compact([{"op": "replace", "path": "", "value": new}])
        if len(line.encode()) > len(whole):
            failures.append(f"pair {index}: patch of {len(line.encode())} bytes > {len(whole)}")
        try:
            result = jsonpatch.apply_patch(old, patch)
        except jsonpatch.JsonPatchException as error:  # includes JsonPointerException's kin
            failures.append(f"pair {index}: jsonpatch refused {line}: {error}")
            continue
        except Exception as error:  # noqa: BLE001 - any failure of the peer is a finding
            failures.append(f"pair {index}: jsonpatch failed on {line}: {error!r}")
            continue
        if not strictly_equal(result, new):
            failures.append(f"pair {index}: {compact(old)} + {line} gave {compact(result)}")
    assert not failures, f"{len(failures)} of {PAIRS} failed; first: " + "\n".join(failures[:5])
    assert non_empty > PAIRS // 2, "the generator should mostly produce changes"


def test_keyed_array_changes_stay_small_for_python_too():
    """The issue's minimality cases, as a Python client receives them."""
    items = [{"id": i, "name": f"item {i}", "done": False} for i in range(10_000)]
    changed = json.loads(json.dumps(items))
    changed[5000]["done"] = True
    inserted = [{"id": -1, "name": "new", "done": False}] + items
    removed = items[:300] + items[301:]
    pairs = [({"items": items}, {"items": changed}), ({"items": items}, {"items": inserted}),
             ({"items": items}, {"items": removed})]
    patches = [json.loads(line) for line in diff_all(pairs)]
    assert patches == [
        [{"op": "replace", "path": "/items/5000/done", "value": True}],
        [{"op": "add", "path": "/items/0", "value": {"id": -1, "name": "new", "done": False}}],
        [{"op": "remove", "path": "/items/300"}],
    ]
    for (old, new), patch in zip(pairs, patches):
        assert strictly_equal(jsonpatch.apply_patch(old, patch), new)
