"""README.md's sessions, run as a newcomer would paste them: the console sessions must print
exactly what the README shows, the Python snippets must run and print what their comments
promise, and the Node snippet must run. (The Swift feature is compiled and tested verbatim in
Tests/StateKitTests/ReadmeTodosTests.swift.)"""
import ast
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stateserver import RPCError

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def blocks(language):
    """The fenced blocks of `language`, in order, with the heading each one sits under."""
    found = []
    heading = None
    for match in re.finditer(r"^(#+ [^\n]*)$|^```(\w+)\n(.*?)^```$", README, re.M | re.S):
        if match.group(1):
            heading = match.group(1).lstrip("# ").strip()
        elif match.group(2) == language:
            found.append((heading, match.group(3)))
    return found


@pytest.fixture
def path_env(stateserver_bin):
    """An environment whose PATH finds `stateserver`, as after installing it."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(stateserver_bin).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def console_sessions():
    """(command, expected output lines) for every `$` command of the console blocks."""
    sessions = []
    for _, body in blocks("console"):
        command, expected = None, None
        for line in body.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    sessions.append((command, expected))
                command, expected = line[2:], []
            elif command is not None and (command.endswith("\\") or line[:1].isspace()) \
                    and not expected:
                command += "\n" + line
            elif line.strip() and command is not None:
                expected.append(line)
        if command is not None:
            sessions.append((command, expected))
    return sessions


# Python blocks that are whole programs of their own, run by their own tests below; every
# other block after "A Python session" belongs to the feature walkthrough.
OWN_PROGRAMS = ("A Python session", "Python with asyncio", "Testing with pytest")


def test_the_readme_has_the_sessions_this_file_runs():
    assert len(console_sessions()) >= 3
    assert [heading for heading, _ in blocks("python")][:4] == [
        *OWN_PROGRAMS, "The reference app, feature by feature"]
    assert len(blocks("sh")) >= 7 and len(blocks("js")) == 1


@pytest.mark.parametrize("command,expected", console_sessions(), ids=lambda value: (
    value.splitlines()[0][:60] if isinstance(value, str) else None))
def test_console_sessions_print_what_the_readme_shows(command, expected, stateserver_bin):
    command = command.replace(".build/release/stateserver", stateserver_bin)
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == \
        [json.loads(line) for line in expected]


@pytest.mark.parametrize("heading,body", blocks("sh")[1:], ids=lambda value: (
    value if isinstance(value, str) and "\n" not in value else None))
def test_feature_one_liners_run_and_every_reply_succeeds(heading, body, path_env):
    result = subprocess.run(["bash", "-c", body], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, env=path_env)
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    replies = [m for m in messages if "id" in m]
    assert replies and all("result" in reply for reply in replies), messages


def literal_comment(line):
    """What a `print(...)  # comment` line promises: a Python literal, a plain word or number
    printed as is, or None for prose (and for no comment)."""
    if "#" not in line:
        return None
    comment = line.split("#", 1)[1].strip()
    if "..." in comment:
        return None
    try:
        return ("literal", ast.literal_eval(comment))
    except (ValueError, SyntaxError):
        return ("text", comment) if re.fullmatch(r"[\w .-]+", comment) else None


def run_python(code, path_env, monkeypatch):
    """Runs `code` with `stateserver` on PATH; returns its stdout and what it raised."""
    monkeypatch.setenv("PATH", path_env["PATH"])
    output = io.StringIO()
    raised = None
    with contextlib.redirect_stdout(output):
        try:
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
        except RPCError as error:
            raised = error
    return output.getvalue(), raised


def top_level_prints(code):
    """Line numbers of the print calls outside function bodies, in order."""
    lines = []

    def visit(node, in_function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            in_function = True
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "print" and not in_function):
            lines.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, in_function)

    visit(ast.parse(code), False)
    return sorted(lines)


def check_prints(code, printed):
    """Each print with a literal comment printed that literal (notifications are indented)."""
    source = code.splitlines()
    expectations = [literal_comment(source[line - 1]) for line in top_level_prints(code)]
    lines = [line for line in printed.splitlines() if not line.startswith(" ")]
    assert len(lines) == len(expectations), printed
    checked = 0
    for line, expectation in zip(lines, expectations):
        if expectation is None:
            continue
        kind, value = expectation
        if kind == "literal":
            assert ast.literal_eval(line) == value, line
        else:
            assert line == value, line
        checked += 1
    return checked


def test_the_python_session_prints_what_its_comments_say(path_env, monkeypatch):
    (_, code), = [block for block in blocks("python") if block[0] == "A Python session"]
    printed, raised = run_python(code, path_env, monkeypatch)
    assert check_prints(code, printed) == 2
    # The session ends on a refused action; its comment shows the error's data.
    assert isinstance(raised, RPCError) and raised.code == -32602
    shown = re.search(r"#\s+(\{'pointer'.*\})", code)
    assert shown and raised.data == ast.literal_eval(shown.group(1))


def test_the_feature_walkthrough_runs_in_one_python_process(path_env, monkeypatch):
    walkthrough = [body for heading, body in blocks("python")
                   if heading not in OWN_PROGRAMS]
    code = "\n".join(walkthrough) + "\nserver.stdin.close()\nserver.wait(timeout=30)\n"
    printed, raised = run_python(code, path_env, monkeypatch)
    assert raised is None
    assert check_prints(code, printed) >= 3
    # Prose comments are promises too: the events they mention were printed.
    assert "store/event" in printed and '"dismiss"' in printed and '"toast"' in printed


def test_the_asyncio_program_prints_what_its_comments_say(path_env, monkeypatch):
    (_, code), = [block for block in blocks("python") if block[0] == "Python with asyncio"]
    printed, raised = run_python(code, path_env, monkeypatch)
    assert raised is None
    # Its prints sit inside `main()`, so each one's comment is matched by source order.
    promised = [line.split("#", 1)[1].strip() for line in code.splitlines()
                if line.lstrip().startswith("print(") and "#" in line]
    assert promised and printed.splitlines() == promised


def test_the_pytest_example_passes_with_the_plugin(stateserver_bin, tmp_path):
    (_, code), = [block for block in blocks("python") if block[0] == "Testing with pytest"]
    (tmp_path / "test_notes.py").write_text(code)
    # The plugin from this tree, named once (no entry point may load it a second time).
    env = dict(os.environ, STATESERVER_BIN=stateserver_bin, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=str(ROOT / "clients" / "python"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "stateserver.pytest_plugin",
                             "-p", "no:cacheprovider", "test_notes.py"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_session_runs(stateserver_bin, tmp_path):
    (_, code), = blocks("js")
    index = (ROOT / "clients/typescript/src/index.js").as_uri()
    script = "const render = () => {};\n" + code.replace(
        "'./clients/typescript/src/index.js'", f"'{index}'")
    # The comment's promise, checked where it is made.
    script = script.replace("await cart.sync(version);",
                            "await cart.sync(version); if (cart.state.total !== 1250) "
                            "throw new Error(`total ${cart.state.total}`);")
    assert "cart.state.total !== 1250" in script
    path = tmp_path / "session.mjs"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, STATESERVER_BIN=stateserver_bin)
    result = subprocess.run(["node", str(path)], capture_output=True, text=True, timeout=60,
                            env=env)
    assert result.returncode == 0, result.stderr
