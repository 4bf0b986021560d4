"""The Python package's pytest plugin (`stateserver.pytest_plugin`): the `stateserver` fixture
used here directly, and inner pytest runs (pytester, in a subprocess) that show what a user
sees: the fixture by entry point as after `pip install`, stderr shown on a failure, an unclean
exit failing the test."""
import os
import sys
import textwrap
import tomllib
from pathlib import Path

from stateserver.pytest_plugin import STATE_DIR_NAME

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "clients" / "python"
TIMEOUT = 30


def test_the_fixture_starts_a_core_with_its_state_in_the_temporary_directory(stateserver,
                                                                             tmp_path):
    command = stateserver.process.args
    assert command[command.index("--state-dir") + 1] == str(tmp_path / STATE_DIR_NAME)
    stateserver.dispatch("notes", {"type": "add", "text": "Heron"})
    state = stateserver.wait_until("notes", lambda state: len(state["notes"]) == 1,
                                   timeout=TIMEOUT)
    assert state["notes"][0]["text"] == "Heron"
    assert (tmp_path / STATE_DIR_NAME).is_dir()


def test_stateserver_spawn_passes_arguments(stateserver_spawn):
    client = stateserver_spawn("--latency", "0")
    assert "--latency" in client.process.args
    assert client.request("state/get", {"store": "backend"})["state"]["latencyMs"] == 0


INNER_TESTS = '''
    def test_passes(stateserver):
        stateserver.dispatch("counter", {"type": "increment"})
        assert stateserver.wait_until("counter", lambda s: s["count"] == 1) == {"count": 1}

    def test_fails_and_shows_stderr(stateserver):
        stateserver.notify("dispatch", {"store": "no-such-store", "action": {"type": "x"}})
        assert stateserver.wait_stderr("no-such-store")
        assert stateserver.wait_until("counter", lambda s: s["count"] == 1, timeout=0.2)

    def test_a_killed_server_is_an_unclean_exit(stateserver):
        stateserver.process.kill()
        stateserver.process.wait()
'''


def entry_point_install(tmp_path):
    """A directory that makes the package look installed: a dist-info whose pytest11 entry
    point is the one pyproject.toml declares (the package itself stays on PYTHONPATH)."""
    project = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]
    entry_points = project["entry-points"]["pytest11"]
    site = tmp_path / "site"
    info = site / f"stateserver-{project['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: stateserver\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text(
        "[pytest11]\n" + "".join(f"{name} = {value}\n" for name, value in entry_points.items()))
    return site


def run_inner(pytester, monkeypatch, stateserver_bin, pythonpath, conftest=None):
    pytester.makepyfile(test_inner=textwrap.dedent(INNER_TESTS))
    if conftest is not None:
        pytester.makeconftest(conftest)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(map(str, pythonpath)))
    monkeypatch.setenv("STATESERVER_BIN", stateserver_bin)
    monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=TIMEOUT * 4)


def check_inner_outcome(result):
    result.assert_outcomes(passed=2, failed=1, errors=1)
    output = result.stdout.str()
    # The failing test shows the server's stderr, with the warning it logged.
    assert "stateserver stderr (pid" in output and "no-such-store" in output
    # The killed server fails its test at teardown, naming the status.
    assert "exited with status -9, expected 0" in output


def test_installed_the_entry_point_registers_the_fixture(pytester, monkeypatch, stateserver_bin, tmp_path):
    result = run_inner(pytester, monkeypatch, stateserver_bin, [entry_point_install(tmp_path), PACKAGE])
    check_inner_outcome(result)


def test_from_the_tree_a_conftest_lists_it_and_installed_it_is_not_registered_twice(
        pytester, monkeypatch, stateserver_bin, tmp_path):
    # The rule of the project's own tests/conftest.py: with the entry point present as well,
    # listing the plugin unconditionally would make pytest refuse to start.
    conftest = textwrap.dedent('''
        import sys
        pytest_plugins = [] if "stateserver.pytest_plugin" in sys.modules else [
            "stateserver.pytest_plugin"]
    ''')
    from_tree = run_inner(pytester, monkeypatch, stateserver_bin, [PACKAGE], conftest)
    check_inner_outcome(from_tree)
    both = run_inner(pytester, monkeypatch, stateserver_bin, [entry_point_install(tmp_path), PACKAGE], conftest)
    check_inner_outcome(both)
