"""The devtools page's schema check (static/schema.js), run by node against the features'
own action schemas: what it refuses before sending, with the pointer the server would use."""
import json
import shutil
import subprocess

import pytest

from devtools_support import REPO

SCHEMA_JS = REPO / "clients" / "python" / "stateserver" / "devtools" / "static" / "schema.js"
FEATURES = REPO / "schema" / "features"


def check(schema, value):
    if shutil.which("node") is None:
        pytest.skip("node is missing")
    program = (f"import {{ validate }} from {json.dumps(SCHEMA_JS.as_uri())};\n"
               f"console.log(JSON.stringify(validate({json.dumps(schema)}, "
               f"{json.dumps(value)}, '/action')));")
    done = subprocess.run(["node", "--input-type=module", "-e", program], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def action_schema(feature, action):
    return json.loads((FEATURES / f"{feature}.schema.json").read_text())["$defs"][f"action.{action}"]


@pytest.mark.parametrize("feature,action", [
    ("counter", {"type": "set", "value": 3}),
    ("notes", {"type": "resolveConflict", "id": "note-1", "keep": "server"}),
    ("cart", {"type": "add", "id": "sku-7", "name": "Mug", "price": 1250}),
])
def test_a_valid_action_passes(feature, action):
    assert check(action_schema(feature, action["type"]), action) == []


@pytest.mark.parametrize("feature,action,problem", [
    ("counter", {"type": "set"}, {"pointer": "/action/value", "reason": "missing"}),
    ("counter", {"type": "set", "value": "7"},
     {"pointer": "/action/value", "reason": "expected integer, found string"}),
    ("counter", {"type": "set", "value": 1.5},
     {"pointer": "/action/value", "reason": "expected integer, found number"}),
    ("counter", {"type": "set", "value": 1, "extra": True},
     {"pointer": "/action/extra", "reason": "not a field of this action"}),
    ("notes", {"type": "resolveConflict", "id": "note-1", "keep": "mine"},
     {"pointer": "/action/keep", "reason": 'expected one of: "local", "server"'}),
])
def test_an_invalid_action_is_refused_at_its_pointer(feature, action, problem):
    assert check(action_schema(feature, action["type"]), action) == [problem]
