"""Type-checked by tests/test_bindings.py (`mypy --strict`): what the typed bindings accept,
and, under `type: ignore[code]`, what they must refuse (mypy --strict fails on an unused one)."""
from typing import Optional

from stateserver import Client, features
from stateserver.features import NavigationAction, NotesAddAction, NotesState


def typed(client: Client) -> int:
    notes = features.store(client, "notes")
    notes.dispatch({"type": "add", "text": "Heron"})
    notes.dispatch({"type": "resolveConflict", "id": "note-1", "keep": "server"})
    push: NavigationAction = {"type": "push", "destination": {"screen": "userDetail", "userId": 42}}
    features.store(client, "navigation").dispatch(push)
    features.store(client, "navigation").dispatch({"type": "openURL", "url": "app://users/3"})

    notes.dispatch({"type": "add", "txt": "Heron"})  # type: ignore[arg-type]
    add: NotesAddAction = {"type": "add", "txt": "Heron"}  # type: ignore[typeddict-item, typeddict-unknown-key]
    notes.dispatch({"type": "resolveConflict", "id": "n", "keep": "mine"})  # type: ignore[typeddict-item]
    features.store(client, "counter").dispatch({"type": "strat"})  # type: ignore[misc, arg-type]

    state: NotesState = notes.state()
    # Optional versus null as on the wire: the key is there, the value may be None.
    server_text: Optional[str] = state["notes"][0]["serverText"]
    text: str = state["notes"][0]["serverText"]  # type: ignore[assignment]
    mirrored: Optional[NotesState] = notes.mirror().sync()
    pending = mirrored["sync"]["pending"] if mirrored else 0
    unchecked = notes.mirror().state["sync"]  # type: ignore[index]
    return len(server_text or "") + len(text) + pending + len(add) + len(unchecked)
