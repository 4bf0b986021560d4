"""What a newcomer does first: `make install` puts `stateserver` on PATH (and the README says so
before it first runs `stateserver` from PATH), and `make run` writes nothing but the server's
own lines to stdout, so it can sit in a pipe."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
# The guide that writes a feature and serves it from a package of one's own.
FEATURE_GUIDE = (ROOT / "docs" / "guide" / "writing-a-feature.md").read_text()
TIMEOUT = 600  # `make` checks the set-up and the build first: slow on a loaded machine
DISPATCH = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "dispatch", "params": {
    "store": "counter", "action": {"type": "increment"}}})


def user_environment(**extra):
    """This environment as a user's shell has it: not inside another make."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    env.update(extra)
    return env


def test_make_run_writes_only_protocol_lines_to_stdout():
    result = subprocess.run(["make", "run", "ARGS=--ephemeral"], cwd=ROOT, input=DISPATCH + "\n",
                            capture_output=True, text=True, timeout=TIMEOUT,
                            env=user_environment())
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines()]  # each one is JSON
    assert [m.get("method", m.get("id")) for m in messages] == ["state/patch", 1], result.stdout
    assert "swift build" in result.stderr  # the build's log is still shown, on stderr


def test_make_install_puts_stateserver_on_path(tmp_path):
    prefix = tmp_path / "prefix"
    result = subprocess.run(["make", "install", f"PREFIX={prefix}"], cwd=ROOT, capture_output=True,
                            text=True, timeout=TIMEOUT, env=user_environment(),
                            stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert "is not on PATH" in result.stderr  # the user is told what to add
    env = user_environment(PATH=f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}")
    session = subprocess.run(
        ["bash", "-c", "stateserver-msg dispatch counter increment --id 1 | stateserver "
         "--ephemeral"], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert session.returncode == 0, session.stderr
    assert json.loads(session.stdout.splitlines()[-1])["result"] == {
        "store": "counter", "version": 1}


def test_make_install_defaults_to_the_users_local_bin():
    plan = subprocess.run(["make", "-n", "install"], cwd=ROOT, capture_output=True, text=True,
                          timeout=TIMEOUT, env=user_environment(HOME="/home/newcomer"),
                          stdin=subprocess.DEVNULL)
    assert plan.returncode == 0, plan.stderr
    assert '"/home/newcomer/.local/bin/stateserver"' in plan.stdout


def test_the_readme_installs_before_it_runs_stateserver_from_path():
    first_use = min(match.start() for match in re.finditer(
        r'\| stateserver |\["stateserver"|^stateserver ', README, re.M))
    install = README.find("make install")
    assert 0 <= install < first_use, "README runs `stateserver` from PATH before `make install`"
    assert "~/.local/bin" in README[:first_use] and "PREFIX" in README[:first_use]


def test_the_feature_guide_says_how_to_depend_on_the_package_by_path():
    assert re.search(r'\.package\(path: "[^"]+"\)', FEATURE_GUIDE)
    assert "directory name" in FEATURE_GUIDE  # SwiftPM names a path dependency after its directory


def swift():
    return shutil.which("swift") or "/opt/swift/usr/bin/swift"


def guide_manifest():
    manifest = re.search(r"```swift\n(// swift-tools-version.*?)```", FEATURE_GUIDE, re.S)
    assert manifest, "docs/guide/writing-a-feature.md has no Package.swift of a dependent package"
    return manifest.group(1)


def dependent_package(tmp_path, clone_name):
    """The feature guide's manifest in an app next to a clone of this package named `clone_name`."""
    (tmp_path / clone_name).symlink_to(ROOT, target_is_directory=True)
    app = tmp_path / "app"
    (app / "Sources" / "todos-app").mkdir(parents=True)
    (app / "Package.swift").write_text(guide_manifest().replace(
        '"../stateserver"', f'"../{clone_name}"'))
    (app / "Sources" / "todos-app" / "main.swift").write_text("import StateServer\n")
    return app


def show_dependencies(app):
    return subprocess.run([swift(), "package", "show-dependencies"], cwd=app,
                          capture_output=True, text=True, timeout=TIMEOUT)


def test_the_guides_manifest_resolves_against_a_clone_named_stateserver(tmp_path):
    result = show_dependencies(dependent_package(tmp_path, "stateserver"))
    assert result.returncode == 0, result.stderr


def test_the_package_name_is_the_clones_directory_name_as_the_guide_says(tmp_path):
    result = show_dependencies(dependent_package(tmp_path, "my-clone"))
    assert result.returncode != 0
    assert "unknown package 'stateserver'" in result.stderr and "'my-clone'" in result.stderr
