#!/usr/bin/env python3
"""Writes schema/features/<feature>.schema.json from a running stateserver's `features/list`.

The Swift types are the source of truth; these files let a frontend in any language read the
schemas without starting the server. tests/test_feature_schemas.py fails when they drift.

  scripts/export-schemas.py [BINARY]      (default .build/release/stateserver)
"""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "schema" / "features"


def features(binary):
    request = {"jsonrpc": "2.0", "id": 1, "method": "features/list"}
    done = subprocess.run([str(binary), "--ephemeral"], input=json.dumps(request) + "\n",
                          capture_output=True, text=True, timeout=60, check=True)
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("id") == 1:
            return message["result"]["features"]
    raise SystemExit("no answer to features/list")


def document(feature):
    """One JSON Schema (2020-12) per feature: the view as `state`, and each action and event."""
    name = feature["name"]
    schema = feature["schema"]
    defs = {"state": schema["state"]}
    for action, body in schema["actions"].items():
        defs[f"action.{action}"] = body
    for event, body in schema["events"].items():
        defs[f"event.{event}"] = body
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://stateserver.invalid/schema/features/{name}.schema.json",
        "title": f"{name}: the published state (the document itself), actions and events",
        "x-persistent": feature["persistent"],
        "x-actions": feature["actions"],
        "x-events": feature["events"],
        "$defs": defs,
        "$ref": "#/$defs/state",
    }


def render(feature):
    return json.dumps(document(feature), indent=2, ensure_ascii=False) + "\n"


def main():
    binary = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / ".build/release/stateserver")
    OUT.mkdir(parents=True, exist_ok=True)
    listed = features(binary)
    for feature in listed:
        (OUT / f"{feature['name']}.schema.json").write_text(render(feature))
    stale = {p.name for p in OUT.glob("*.schema.json")} - {f"{f['name']}.schema.json" for f in listed}
    for name in sorted(stale):
        (OUT / name).unlink()
    print(f"wrote {len(listed)} feature schemas to {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
