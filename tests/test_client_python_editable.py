"""Issue 30: `pip install -e clients/python` then `mypy --strict` of a user's file that imports
the generated bindings. setuptools' editable install can use an import hook, which a running
interpreter sees and mypy does not; this test makes the install a user makes, in a fresh venv."""
import os
import subprocess
import venv
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "clients" / "python"

USER_FILE = '''\
from typing import List, Optional

from stateserver import AsyncClient, Client
from stateserver.features import NotesState
from stateserver.typed import TypedStore
from stateserver import features


def pending(client: Client) -> int:
    notes = features.store(client, "notes")
    notes.dispatch({"type": "add", "text": "Heron"})
    mirrored: Optional[NotesState] = notes.mirror().sync()
    return mirrored["sync"]["pending"] if mirrored else 0


def untyped(store: TypedStore[object, object, object]) -> object:
    return store.state()


async def sync_steps(client: AsyncClient) -> List[str]:
    steps: List[str] = []
    async with client.progress("notes", {"type": "sync"}) as sync:
        async for update in sync:
            steps.append(f"{update['kind']} {update['done']}")
    return steps if not sync.cancelled and not client.progress_tokens else []
'''


def make_venv(path: Path) -> Path:
    """A venv with pip at `path`; skips (never under CI=true) when this Python cannot make one
    (Debian's python3 without python3-venv has no ensurepip)."""
    try:
        venv.EnvBuilder(with_pip=True).create(path)
    except (OSError, subprocess.CalledProcessError) as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"cannot create a venv with pip here ({error}); install python3-venv")
    return path / "bin" / "python"


def test_mypy_strict_sees_the_bindings_of_an_editable_install(tmp_path):
    python = make_venv(tmp_path / "venv")
    # pip's own cache (not disabled here) makes the second run download nothing.
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-e", str(PACKAGE), "mypy"], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stdout + install.stderr
    (tmp_path / "user.py").write_text(USER_FILE)
    # Run from tmp_path, away from the source tree, so only the install can provide the package.
    done = subprocess.run(
        [str(python), "-m", "mypy", "--strict", "--no-incremental", "user.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
    # And the interpreter imports the source tree itself, as an editable install should.
    where = subprocess.run(
        [str(python), "-c", "import stateserver.typed, stateserver; print(stateserver.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).resolve().parent == (PACKAGE / "stateserver").resolve()

