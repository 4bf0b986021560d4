"""pytest plugin: fixtures that give each test its own stateserver.

Registered by entry point (`pytest11`) when the package is installed; a project that uses the
package from its tree lists it in a conftest instead (`pytest_plugins`, see the README).

- `stateserver`: a `Client` of a fresh core whose persistent stores live in the test's
  temporary directory. When the test fails, the server's stderr is shown with the failure; at
  teardown the server's stdin is closed and it must exit 0 (drained, flushed) within 30 s.
  `stateserver.wait_until("notes", lambda state: ...)` waits for a published state.
- `stateserver_spawn(*args, record=False, expected_status=0)`: starts more servers
  (extra command-line arguments), checked the same way; `expected_status=None` accepts any.
- `stateserver_command`: the command line (binary, `--state-dir` in the temporary directory)
  for your own `Client.spawn` or `await AsyncClient.spawn(...)`.
- `stateserver_bin`: the binary, from `--stateserver-bin`, `$STATESERVER_BIN`, or PATH.
- `virtual_clock`: a `VirtualClock` whose `.client` is a server started with `--clock
  virtual`; `virtual_clock.advance(ms)` moves its time and returns once every effect due by
  then has run and its patches were read, so a debounce or a timeout is tested without a sleep.
"""
import os
import shutil
import subprocess
from typing import Any, Callable, Generator, List, Optional, Tuple

import pytest

from .client import Client

STATE_DIR_NAME = "stateserver-state"
EXIT_TIMEOUT = 30  # a failure bound only: a drained server exits in milliseconds

_CLIENTS = pytest.StashKey[List[Tuple[Client, Optional[int]]]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("stateserver").addoption(
        "--stateserver-bin", default=None, metavar="PATH",
        help="the stateserver binary the fixtures start (default: $STATESERVER_BIN, else PATH)")


@pytest.fixture
def stateserver_bin(request: pytest.FixtureRequest) -> str:
    binary = (request.config.getoption("stateserver_bin") or os.environ.get("STATESERVER_BIN")
              or shutil.which("stateserver"))
    if not binary:
        pytest.fail("no stateserver binary: pass --stateserver-bin, set STATESERVER_BIN, or put "
                    "stateserver on PATH (`make install`)")
    return str(binary)


@pytest.fixture
def stateserver_command(stateserver_bin: str, tmp_path: Any) -> List[str]:
    return [stateserver_bin, "--state-dir", str(tmp_path / STATE_DIR_NAME)]


@pytest.fixture
def stateserver_spawn(request: pytest.FixtureRequest,
                      stateserver_command: List[str]) -> Generator[Callable[..., Client], None, None]:
    started = request.node.stash.setdefault(_CLIENTS, [])

    def spawn(*args: str, record: Any = False, expected_status: Optional[int] = 0,
              **options: Any) -> Client:
        client = Client.spawn([*stateserver_command, *args], record=record, **options)
        started.append((client, expected_status))
        return client

    yield spawn
    problems = []
    for client, expected in started:
        try:
            status = client.close(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            client.process.kill()
            client.process.wait()
            problems.append(f"stateserver (pid {client.process.pid}) did not exit within "
                            f"{EXIT_TIMEOUT}s of the end of its input; killed")
            continue
        if expected is not None and status != expected:
            problems.append(f"stateserver (pid {client.process.pid}) exited with status "
                            f"{status}, expected {expected}; its stderr ends with:\n"
                            f"{client.stderr_text()[-4000:]}")
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def stateserver(stateserver_spawn: Callable[..., Client]) -> Client:
    return stateserver_spawn()


class VirtualClock:
    """The clock of a server started with `--clock virtual`: time moves only with `advance`."""

    def __init__(self, client: Client) -> None:
        self.client = client

    def advance(self, ms: int, timeout: float = 30) -> int:
        """Moves time by `ms`; returns the new time in ms once every effect due by then ran."""
        return self.client.advance(ms, timeout=timeout)

    def now(self) -> int:
        """The virtual time in ms since the server started."""
        return self.client.now()


@pytest.fixture
def virtual_clock(stateserver_spawn: Callable[..., Client]) -> VirtualClock:
    return VirtualClock(stateserver_spawn("--clock", "virtual", record=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Generator[None, Any, None]:
    """A failed test shows what each of its servers wrote on stderr."""
    outcome = yield
    report = outcome.get_result()
    if not report.failed:
        return
    for client, _ in item.stash.get(_CLIENTS, []):
        text = client.stderr_text()
        if text:
            report.sections.append((f"stateserver stderr (pid {client.process.pid})", text))

