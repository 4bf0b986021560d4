"""Must NOT type-check (tests/test_bindings.py expects mypy to name the wrong field): an
action of the notes feature with a misspelt field."""
from stateserver import Client, features
from stateserver.features import NotesAddAction


def wrong(client: Client) -> None:
    features.store(client, "notes").dispatch({"type": "add", "txt": "Heron"})
    action: NotesAddAction = {"type": "add", "txt": "Heron"}
    features.store(client, "notes").dispatch(action)
