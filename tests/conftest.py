"""Shared fixtures for the end-to-end tests (pytest through the built binary).

- `stateserver_bin`: the binary, from `$STATESERVER_BIN`, else `.build/release/stateserver`,
  else `.build/debug/stateserver`. Missing: the test fails when `CI=true`, else it is skipped.
  It overrides the plugin's fixture of the same name, so the plugin's `stateserver` fixture
  starts this checkout's binary too.
- `testdata`: `$STATESERVER_TESTDATA`, else `<repo root>/../shared/testdata` (same rule).
- `spawn(*args, check_schema=True)`: starts a server (`--ephemeral` unless `--state-dir` is
  given) as a `stateserver.Client`; every line it writes is validated against
  `schema/protocol.schema.json` (`#/$defs/serverLine`), and the test fails at teardown if
  any line did not validate. `server` is one such client with no extra arguments.
"""
import json
import os
import pathlib
import sys

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

REPO = pathlib.Path(__file__).resolve().parent.parent
# The client works installed (`pip install -e clients/python`) or straight from the tree.
sys.path.insert(0, str(REPO / "clients" / "python"))

from stateserver import Client  # noqa: E402

# The package's pytest plugin (the `stateserver` fixture). Installed, pytest has loaded it by its
# entry point already; from the tree (PYTHONPATH, as `make py-test` runs) it is listed here.
# Listing it both ways would register one module twice, which pytest refuses.
pytest_plugins = ["pytester"]
if "stateserver.pytest_plugin" not in sys.modules:
    pytest_plugins.append("stateserver.pytest_plugin")

SCHEMA_PATH = REPO / "schema" / "protocol.schema.json"
RECORDED_MESSAGES = 1_000_000


def _missing(message):
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def stateserver_bin():
    explicit = os.environ.get("STATESERVER_BIN")
    if explicit:
        if not os.path.isfile(explicit):
            _missing(f"STATESERVER_BIN={explicit} does not exist")
        return explicit
    for candidate in (REPO / ".build/release/stateserver", REPO / ".build/debug/stateserver"):
        if candidate.is_file():
            return str(candidate)
    _missing("no stateserver binary: set STATESERVER_BIN or run swift build")


@pytest.fixture(scope="session")
def testdata():
    path = pathlib.Path(os.environ.get("STATESERVER_TESTDATA", REPO.parent / "shared" / "testdata"))
    if not path.is_dir():
        _missing(f"test data folder {path} is missing (set STATESERVER_TESTDATA)")
    return path


@pytest.fixture(scope="session")
def protocol_schema():
    return json.loads(SCHEMA_PATH.read_text())


def line_validator(schema, definition="serverLine"):
    """A validator of one direction's lines against the protocol schema."""
    resource = Resource.from_contents(schema)
    registry = Registry().with_resource(schema["$id"], resource)
    return Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/{definition}"}, registry=registry)


def _shape(value):
    """The value with every number the schema cannot tell apart replaced by one stand-in.

    protocol.schema.json constrains numbers only by type (integer or not), sign, `minimum` 0
    or 1, `const` 1 and the error-code enum (-32800..-32000). Integers from -16 to 16 and in
    the error-code band are kept; others become +-17 (same sign, same side of every bound);
    fractions become +-0.5 or 0.0. Strings and keys are kept. So a line validates exactly when
    its shape does, and a flood of lines that differ only in ids and versions is validated once.
    """
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if -16 <= value <= 16 or -32800 <= value <= -32000:
            return value
        return 17 if value > 0 else -17
    if isinstance(value, float):
        return 0.5 if value > 0 else (-0.5 if value < 0 else 0.0)
    if isinstance(value, list):
        return [_shape(item) for item in value]
    return {key: _shape(item) for key, item in value.items()}


class SchemaCheck:
    """Validates every raw line a server writes; failures are kept for the teardown."""

    def __init__(self, validator):
        self.validator = validator
        self.failures = []
        self.lines = 0
        self.valid_shapes = set()

    def __call__(self, raw):
        self.lines += 1
        try:
            message = json.loads(raw)
        except ValueError as error:
            self.failures.append(f"not JSON ({error}): {raw[:200]!r}")
            return
        shape = json.dumps(_shape(message))
        if shape in self.valid_shapes:
            return
        errors = sorted(self.validator.iter_errors(message), key=lambda e: e.path)
        if errors:
            best = errors[0]
            self.failures.append(f"{best.message} at {list(best.absolute_path)}: {raw[:300]!r}")
        else:
            self.valid_shapes.add(shape)


@pytest.fixture
def spawn(stateserver_bin, protocol_schema):
    validator = line_validator(protocol_schema)
    started = []

    def start(*args, check_schema=True, env=None):
        args = list(args)
        if "--state-dir" not in args and "--ephemeral" not in args:
            args.append("--ephemeral")
        check = SchemaCheck(validator) if check_schema else None
        # The end-to-end tests read whole conversations back (`messages[start:]`), so they
        # record far more than a long-lived client should; a cap still bounds a runaway test.
        client = Client.spawn([stateserver_bin, *args], env=env, on_line=check,
                              record=RECORDED_MESSAGES)
        client.schema_check = check
        started.append(client)
        return client

    yield start
    failures = []
    for client in started:
        if client.process.poll() is None:
            client.process.kill()
        client.process.wait(timeout=30)
        client.wait_closed(timeout=30)
        if client.schema_check is not None:
            failures += client.schema_check.failures
    assert not failures, "lines that do not match schema/protocol.schema.json:\n" + "\n".join(
        failures[:20])


@pytest.fixture
def server(spawn):
    return spawn()


@pytest.fixture(autouse=True)
def _check_every_line_of_features_support(request, monkeypatch):
    """The reference-app tests (tests/features_support.py) spawn servers through their own
    small client; their output lines are checked against the schema too, so every line any
    test's server writes is validated. Their `lines` queue is swapped for one that validates
    what the reader thread puts in it."""
    support = sys.modules.get("features_support")
    if support is None:
        yield
        return
    import queue as queue_module
    import types

    check = SchemaCheck(line_validator(request.getfixturevalue("protocol_schema")))

    class CheckedQueue(queue_module.Queue):
        def put(self, item, *args, **kwargs):
            if isinstance(item, bytes):
                check(item.rstrip(b"\r\n"))
            super().put(item, *args, **kwargs)

    monkeypatch.setattr(support, "queue", types.SimpleNamespace(
        Queue=CheckedQueue, Empty=queue_module.Empty))
    yield
    assert not check.failures, "lines that do not match schema/protocol.schema.json:\n" + "\n".join(
        check.failures[:20])
