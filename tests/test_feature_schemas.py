"""The features' JSON Schemas: valid schemas, true of what the server really publishes, sends
and accepts, and exported to schema/features/ without drift (`make schemas` rewrites them)."""
import importlib.util
import json
import pathlib

from jsonschema import Draft202012Validator

REPO = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("export_schemas", REPO / "scripts/export-schemas.py")
export = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(export)

# Actions a client sends, per store, in order: docs/guide/reference-app.md's walkthrough, with every
# optional field set at least once somewhere.
SCENARIO = [
    ("counter", {"type": "increment"}),
    ("counter", {"type": "set", "value": 41}),
    ("counter", {"type": "incrementLater", "afterMs": 1}),
    ("backend", {"type": "setLatency", "ms": 5}),
    ("users", {"type": "load"}),
    ("users", {"type": "search", "query": "carla"}),
    ("users", {"type": "select", "id": 3}),
    ("backend", {"type": "setOnline", "online": False}),
    ("users", {"type": "rename", "id": 3, "name": "Carla C"}),
    ("backend", {"type": "remoteUserEdit", "id": 3, "name": "Carla R"}),
    ("backend", {"type": "setOnline", "online": True}),
    ("users", {"type": "resolveConflict", "id": 3, "keep": "local"}),
    ("backend", {"type": "setFallbackOnline", "online": True}),
    ("backend", {"type": "setFallbackFailRate", "rate": 0}),
    ("cart", {"type": "add", "id": "tea", "name": "Tea", "price": 450}),
    ("cart", {"type": "setQuantity", "id": "tea", "quantity": 2}),
    ("cart", {"type": "applyCoupon", "code": "NOPE"}),
    ("cart", {"type": "applyCoupon", "code": "SAVE10"}),
    ("profile", {"type": "edit", "name": "Ada"}),
    ("profile", {"type": "save"}),
    ("notes", {"type": "add", "text": "Heron"}),
    ("notes", {"type": "sync"}),
    ("backend", {"type": "remoteEdit", "noteId": "note-1", "text": "Egret"}),
    ("notes", {"type": "edit", "id": "note-1", "text": "Grey heron"}),
    ("notes", {"type": "sync"}),
    ("navigation", {"type": "openURL", "url": "app://users/42"}),
    ("navigation", {"type": "openURL", "url": "nonsense"}),
    ("navigation", {"type": "push", "destination": {"screen": "settings"}}),
]


def listed(client):
    return {f["name"]: f for f in client.request("features/list")["features"]}


def test_every_schema_is_a_valid_2020_12_schema(spawn):
    features = listed(spawn())
    assert {"counter", "users", "cart", "profile", "notes", "navigation", "backend"} <= set(features)
    for name, feature in features.items():
        schema = feature["schema"]
        Draft202012Validator.check_schema(schema["state"])
        assert set(schema["actions"]) == set(feature["actions"]), name
        assert set(schema["events"]) == set(feature["events"]), name
        for body in [*schema["actions"].values(), *schema["events"].values()]:
            Draft202012Validator.check_schema(body)


def test_published_states_events_and_sent_actions_match_the_schemas(spawn):
    client = spawn()
    features = listed(client)
    checked = 0
    for store, action in SCENARIO:
        schema = features[store]["schema"]
        Draft202012Validator(schema["actions"][action["type"]]).validate(action)
        client.dispatch(store, action, wait="settled")
    for name, feature in features.items():
        state = client.request("state/get", {"store": name})["state"]
        errors = list(Draft202012Validator(feature["schema"]["state"]).iter_errors(state))
        assert not errors, f"{name}: {errors[0].message} at {list(errors[0].absolute_path)}"
        checked += 1
    events = [m["params"] for m in client.notifications if m.get("method") == "store/event"]
    assert {e["event"]["type"] for e in events} >= {"toast", "dismiss"}
    for event in events:
        body = features[event["store"]]["schema"]["events"][event["event"]["type"]]
        Draft202012Validator(body).validate(event["event"])
    assert checked == len(features)


def test_the_exported_schema_files_match_the_server(stateserver_bin):
    features = export.features(stateserver_bin)
    folder = REPO / "schema" / "features"
    on_disk = {p.name for p in folder.glob("*.schema.json")}
    assert on_disk == {f"{f['name']}.schema.json" for f in features}, "run `make schemas`"
    for feature in features:
        written = (folder / f"{feature['name']}.schema.json").read_text()
        assert written == export.render(feature), f"{feature['name']} drifted: run `make schemas`"
        json.loads(written)


def _empty_schemas(schema, pointer, found):
    """Pointers of `{}` (anything) in `schema`, through every keyword that holds schemas."""
    if not isinstance(schema, dict):
        return
    if schema == {}:
        found.append(pointer)
    for key, value in schema.items():
        if key in ("properties", "$defs"):
            for name, member in value.items():
                _empty_schemas(member, f"{pointer}/{key}/{name}", found)
        elif key in ("items", "additionalProperties"):
            _empty_schemas(value, f"{pointer}/{key}", found)
        elif key in ("anyOf", "oneOf", "allOf"):
            for index, branch in enumerate(value):
                _empty_schemas(branch, f"{pointer}/{key}/{index}", found)


def test_every_exported_schema_is_complete():
    """Issue 14: no `{}` left, no object whose members are unknown, every enum value listed,
    every action and event naming all its fields."""
    files = sorted((REPO / "schema" / "features").glob("*.schema.json"))
    assert len(files) >= 7
    for path in files:
        document = json.loads(path.read_text())
        found = []
        _empty_schemas(document, "", found)
        assert not found, f"{path.name}: schemas that accept anything at {found}"
        text = json.dumps(document)
        assert '{"type": "object"}' not in text, f"{path.name}: an object of unknown members"
        for name, body in document["$defs"].items():
            if name.startswith(("action.", "event.")):
                assert body.get("additionalProperties") is False, f"{path.name}: {name}"


def test_the_walk_finds_what_is_missing():
    """The walk above can fail: it finds `{}` wherever a schema may hold one."""
    found = []
    _empty_schemas({"type": "object", "properties": {"a": {"anyOf": [{}, {"type": "null"}]},
                                                     "b": {"type": "array", "items": {}}}},
                   "", found)
    assert found == ["/properties/a/anyOf/0", "/properties/b/items"]


def test_server_written_optionals_are_present_and_nullable(spawn):
    """The state says what the server sends: an optional's key is always there, maybe null."""
    client = spawn()
    notes = listed(client)["notes"]["schema"]["state"]
    note = notes["properties"]["notes"]["items"]
    assert "serverText" in note["required"]
    assert note["properties"]["serverText"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert note["properties"]["syncStatus"] == {
        "enum": ["pendingUpload", "synchronized", "failed", "conflict"]}
