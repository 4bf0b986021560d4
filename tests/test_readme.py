"""The README's and the guides' sessions, run as a newcomer would paste them.

What each fenced block of README.md and docs/guide/*.md is, by its language:
- `console`: each `$ ` command runs with `stateserver` and `stateserver-msg` on PATH (as after
  `make install`) and must print exactly the lines shown (JSON compared as JSON). Console
  sessions in docs/reference/ run too.
- `sh`: a one-liner that runs; every reply it prints must be a success.
- `python`: the blocks of one file are one program, run in order in one process, except a
  block opening with `# test_NAME.py: run with pytest`, which pytest runs with the plugin. A
  comment on a `print(...)` line is what it prints (a Python literal, else the exact text)
  unless it holds `...`, and each program keeps at least one such promise; a program may end
  on an `RPCError` only where a comment shows it.
- `js`: run with node against clients/typescript.
- `swift`: the feature of docs/guide/writing-a-feature.md is compiled and tested in
  Tests/StateKitTests/ReadmeTodosTests.swift, and must be the same code as there; its test's
  lines are, in order, lines of that file's test of the same name; its `main.swift` makes the
  call Examples/Timers compiles (`make example-test`); its dependent package's manifest is
  resolved by tests/test_getting_started.py; its shared-state example (the block with
  `Shared<`) is the marked part of Tests/StateKitTests/SharedStateTests.swift. No other Swift
  block may appear there.
- `jsonrpc`: a conversation, `> ` a request and `< ` a message the server sends (a `< ` line
  that is not JSON, such as `< ... version 2`, stands for one or more messages; indented lines
  continue the line above); a request shown with no `< ` line is answered, its messages not
  shown. Every such block of one file is one conversation with one
  `stateserver --ephemeral --history 100`, in order: each request's messages up to its
  response must be the ones shown (JSON compared as JSON).
- `bash`, `lua`, `json`, `ts` are shown, not run here: commands that install, build or serve
  until stopped, a Neovim set-up, a history entry (the protocol's schema tests describe it);
  the `ts` and the bindings' `python` in docs/reference/bindings.md are checked by
  tests/test_bindings.py.
A block of any other language fails `test_every_block_is_of_a_kind_this_file_checks`.

Every relative link in README.md, bench/README.md and docs/**/*.md must lead to a file of this
repository (and to a heading, for a `#fragment` into Markdown)."""
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
GUIDES = sorted((ROOT / "docs" / "guide").glob("*.md"))
# Where sessions are run: the README and every guide (docs/reference for console sessions).
RUN = [ROOT / "README.md", *GUIDES]
CONSOLE = [*RUN, *sorted((ROOT / "docs" / "reference").glob("*.md"))]
LINKED = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
KINDS = {"console", "sh", "python", "js", "swift", "bash", "lua", "json", "ts", "jsonrpc"}
PYTEST_BLOCK = re.compile(r"# (test_\w+\.py): run with pytest\n")


def name(path):
    return str(path.relative_to(ROOT))


def blocks(path, language=None):
    """The fenced blocks of `path` (of `language`, or all), in order: (heading, language, body,
    line) with the heading each one sits under."""
    text = path.read_text()
    found = []
    heading = None
    for match in re.finditer(r"^(#+ [^\n]*)$|^```(\w*)\n(.*?)^```$", text, re.M | re.S):
        if match.group(1):
            heading = match.group(1).lstrip("# ").strip()
        elif language is None or match.group(2) == language:
            line = text.count("\n", 0, match.start()) + 1
            found.append((heading, match.group(2), match.group(3), line))
    return found


@pytest.fixture(scope="session")
def path_env(stateserver_bin, tmp_path_factory):
    """An environment whose PATH finds `stateserver` and `stateserver-msg` by those names, as
    after `make install` (the binary under test may be called otherwise)."""
    bin_dir = tmp_path_factory.mktemp("installed-bin")
    (bin_dir / "stateserver").symlink_to(Path(stateserver_bin).resolve())
    (bin_dir / "stateserver-msg").symlink_to(ROOT / "clients" / "shell" / "stateserver-msg")
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    return env


def console_sessions():
    """(where, command, expected output lines) for every `$` command of the console blocks."""
    sessions = []
    for path in CONSOLE:
        for _, _, body, first_line in blocks(path, "console"):
            command, expected, where = None, None, None
            for offset, line in enumerate(body.splitlines()):
                if line.startswith("$ "):
                    if command is not None:
                        sessions.append((where, command, expected))
                    command, expected = line[2:], []
                    where = f"{name(path)}:{first_line + 1 + offset}"
                elif command is not None and (command.endswith("\\") or line[:1].isspace()) \
                        and not expected:
                    command += "\n" + line
                elif line.strip() and command is not None:
                    expected.append(line)
            if command is not None:
                sessions.append((where, command, expected))
    return sessions


def parsed(line):
    """A line of output as compared: its JSON value, or the text when it is not JSON."""
    try:
        return json.loads(line)
    except ValueError:
        return line


def test_the_docs_have_the_sessions_this_file_runs():
    readme = ROOT / "README.md"
    assert len([s for s in console_sessions() if s[0].startswith("README.md")]) >= 3
    assert [heading for heading, *_ in blocks(readme, "python")] == ["A Python session"]
    assert {path.name for path in GUIDES} >= {
        "writing-a-feature.md", "clients.md", "testing.md", "history-and-replay.md",
        "devtools.md", "attach.md", "reference-app.md"}
    assert len(blocks(ROOT / "docs/guide/reference-app.md", "sh")) >= 7
    assert len(blocks(ROOT / "docs/guide/clients.md", "js")) == 1


@pytest.mark.parametrize("path", RUN, ids=name)
def test_every_block_is_of_a_kind_this_file_checks(path):
    unknown = [(line, language) for _, language, _, line in blocks(path)
               if language not in KINDS]
    assert not unknown, f"{name(path)}: blocks this test does not know how to check: {unknown}"


@pytest.mark.parametrize("where,command,expected", console_sessions(), ids=lambda value: (
    value if isinstance(value, str) and re.fullmatch(r"[\w/.-]+:\d+", value) else None))
def test_console_sessions_print_what_the_docs_show(where, command, expected, path_env):
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL, env=path_env)
    assert result.returncode == 0, result.stderr
    assert [parsed(line) for line in result.stdout.splitlines()] == \
        [parsed(line) for line in expected], where


def sh_blocks():
    return [(f"{name(path)}:{line}", body) for path in RUN
            for _, _, body, line in blocks(path, "sh")]


@pytest.mark.parametrize("where,body", sh_blocks(), ids=lambda value: (
    value if isinstance(value, str) and "\n" not in value else None))
def test_shell_one_liners_run_and_every_reply_succeeds(where, body, path_env):
    result = subprocess.run(["bash", "-c", body], cwd=ROOT, capture_output=True, text=True,
                            timeout=60, env=path_env)
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    replies = [m for m in messages if "id" in m]
    assert replies and all("result" in reply for reply in replies), messages


def print_comment(line):
    """What a `print(...)  # comment` line promises: ("literal", value), ("text", text), or None
    for no comment or one that elides (`...`)."""
    if "#" not in line:
        return None
    comment = line.split("#", 1)[1].strip()
    if "..." in comment:
        return None
    try:
        return ("literal", ast.literal_eval(comment))
    except (ValueError, SyntaxError):
        return ("text", comment)


def promised_prints(code):
    """The print calls of `code` in source order, each with what its comment promises; a print
    whose first argument is blank-led text is a log of notifications and is left out (its
    lines are indented)."""
    calls = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "print":
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str) \
                    and first.value[:1].isspace():
                continue
            calls.append(node.lineno)
    source = code.splitlines()
    return [print_comment(source[line - 1]) for line in sorted(calls)]


def check_prints(code, printed):
    """Each print printed what its comment promises; returns how many promises were checked."""
    expectations = promised_prints(code)
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


def run_python(code, where, path_env, monkeypatch):
    """Runs `code` with `stateserver` on PATH; returns its stdout and what it raised. A server
    it left running (a `subprocess.Popen`) is sent the end of input and must exit 0."""
    monkeypatch.setenv("PATH", path_env["PATH"])
    output = io.StringIO()
    raised = None
    namespace = {"__name__": "docs"}
    with contextlib.redirect_stdout(output):
        try:
            exec(compile(code, where, "exec"), namespace)
        except RPCError as error:
            raised = error
        for value in list(namespace.values()):
            if isinstance(value, subprocess.Popen):
                value.stdin.close()
                assert value.wait(timeout=30) == 0
    return output.getvalue(), raised


def python_programs():
    """(where, code) of each file's program: its python blocks but the pytest ones, joined."""
    programs = []
    for path in RUN:
        bodies = [body for _, _, body, _ in blocks(path, "python")
                  if not PYTEST_BLOCK.match(body)]
        if bodies:
            programs.append((name(path), "\n".join(bodies)))
    return programs


@pytest.mark.parametrize("where,code", python_programs(), ids=lambda value: (
    value if isinstance(value, str) and value.endswith(".md") else None))
def test_python_programs_print_what_their_comments_say(where, code, path_env, monkeypatch):
    printed, raised = run_python(code, where, path_env, monkeypatch)
    assert check_prints(code, printed) >= 1, printed
    if raised is not None:
        # A program that ends on a refused request shows the error and its data.
        shown = re.search(r"#\s+RPCError (-?\d+) .*\n\s*#\s+(\{'pointer'.*\})", code)
        assert shown, f"{where} raised {raised!r}, which no comment shows"
        assert raised.code == int(shown.group(1))
        assert raised.data == ast.literal_eval(shown.group(2))


def test_the_readme_session_ends_on_the_refusal_it_shows(path_env, monkeypatch):
    (_, code), = [program for program in python_programs() if program[0] == "README.md"]
    printed, raised = run_python(code, "README.md", path_env, monkeypatch)
    assert check_prints(code, printed) == 2
    assert isinstance(raised, RPCError) and raised.code == -32602


def test_the_reference_app_walkthrough_prints_the_events_its_comments_mention(
        path_env, monkeypatch):
    (_, code), = [program for program in python_programs()
                  if program[0] == "docs/guide/reference-app.md"]
    printed, raised = run_python(code, "reference-app.md", path_env, monkeypatch)
    assert raised is None
    assert check_prints(code, printed) >= 8
    assert "store/event" in printed and '"dismiss"' in printed and '"toast"' in printed


def pytest_blocks():
    return [(f"{name(path)}:{line}", body) for path in RUN
            for _, _, body, line in blocks(path, "python") if PYTEST_BLOCK.match(body)]


def test_there_is_a_pytest_example():
    assert pytest_blocks()


@pytest.mark.parametrize("where,code", pytest_blocks(), ids=lambda value: (
    value if isinstance(value, str) and "\n" not in value else None))
def test_pytest_examples_pass_with_the_plugin(where, code, stateserver_bin, tmp_path):
    file_name = PYTEST_BLOCK.match(code).group(1)
    (tmp_path / file_name).write_text(code)
    # The plugin from this tree, named once (no entry point may load it a second time).
    env = dict(os.environ, STATESERVER_BIN=stateserver_bin, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               PYTHONPATH=str(ROOT / "clients" / "python"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "stateserver.pytest_plugin",
                             "-p", "no:cacheprovider", file_name], cwd=tmp_path,
                            capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"\b[1-9]\d* passed", result.stdout), result.stdout


def js_blocks():
    return [(f"{name(path)}:{line}", body) for path in RUN
            for _, _, body, line in blocks(path, "js")]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("where,code", js_blocks(), ids=lambda value: (
    value if isinstance(value, str) and "\n" not in value else None))
def test_node_sessions_run(where, code, stateserver_bin, tmp_path):
    index = (ROOT / "clients/typescript/src/index.js").as_uri()
    script = "const render = () => {};\n" + code.replace(
        "'./clients/typescript/src/index.js'", f"'{index}'")
    # The comment's promise, checked where it is made.
    script = script.replace("await cart.sync(version);",
                            "await cart.sync(version); if (cart.state.total !== 1250) "
                            "throw new Error(`total ${cart.state.total}`);")
    path = tmp_path / "session.mjs"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, STATESERVER_BIN=stateserver_bin)
    result = subprocess.run(["node", str(path)], capture_output=True, text=True, timeout=60,
                            env=env)
    assert result.returncode == 0, result.stderr


def swift_code(text):
    """Swift source without comments, blank lines and trailing blanks: what compiles."""
    lines = []
    for line in text.splitlines():
        line = re.sub(r"\s*//.*$", "", line).rstrip()
        if line:
            lines.append(line)
    return lines


def test_the_guides_feature_is_the_one_the_swift_tests_compile():
    guide = ROOT / "docs/guide/writing-a-feature.md"
    feature, = [body for _, _, body, _ in blocks(guide, "swift") if "struct Todos: Feature" in body]
    tested = (ROOT / "Tests/StateKitTests/ReadmeTodosTests.swift").read_text()
    start = tested.index("actor TodoAPI")
    end = tested.index("\n}\n", tested.index("struct Todos: Feature")) + 3
    assert swift_code(feature) == swift_code("import StateKit\n\n" + tested[start:end])


def swift_function_body(lines, name):
    """The lines of the function `name` in swift_code lines, without its signature and brace."""
    start = next(i for i, line in enumerate(lines) if f"func {name}(" in line)
    indent = len(lines[start]) - len(lines[start].lstrip())
    end = next(i for i in range(start + 1, len(lines))
               if lines[i].startswith(" " * indent + "}") and
               len(lines[i]) - len(lines[i].lstrip()) == indent)
    return [line.strip() for line in lines[start + 1:end]]


def guide_swift_blocks():
    guide = ROOT / "docs/guide/writing-a-feature.md"
    return [body for _, _, body, _ in blocks(guide, "swift")]


def test_the_guides_test_is_part_of_the_one_the_swift_tests_run():
    test, = [body for body in guide_swift_blocks()
             if "@Test func" in body and "Shared<" not in body]
    name = re.search(r"@Test func (\w+)\(", test).group(1)
    shown = swift_function_body(swift_code(test), name)
    tested = swift_function_body(
        swift_code((ROOT / "Tests/StateKitTests/ReadmeTodosTests.swift").read_text()), name)
    assert len(shown) >= 8, shown
    position = 0
    for line in shown:
        assert line in tested[position:], \
            f"{line!r} is not in ReadmeTodosTests' {name} (after the lines before it)"
        position = tested.index(line, position) + 1


def test_the_guides_main_makes_the_call_the_example_app_compiles():
    main, = [body for body in guide_swift_blocks() if "Server.main(" in body]
    example = (ROOT / "Examples/Timers/Sources/timers/main.swift").read_text()
    shape = re.compile(r'^Server\.main\(name: "[\w-]+", version: "[\d.]+", '
                       r'features: \[\w+\([^\]]*\)\.descriptor\(\)\]\)$', re.M)
    assert shape.search(main) and shape.search(example)
    assert "import StateServer" in main and "import StateServer" in example


def test_the_guides_shared_state_example_is_the_one_the_swift_tests_compile():
    example, = [body for body in guide_swift_blocks() if "Shared<" in body]
    tested = (ROOT / "Tests/StateKitTests/SharedStateTests.swift").read_text()
    start = tested.index("// guide: begin")
    end = tested.index("// guide: end")
    assert swift_code(example) == swift_code(tested[start:end])


def test_the_guide_has_no_swift_block_left_unchecked():
    kinds = [("struct Todos: Feature" in body) + 2 * ("@Test func" in body) +
             4 * ("Server.main(" in body) + 8 * body.startswith("// swift-tools-version") +
             16 * ("Shared<" in body)
             for body in guide_swift_blocks()]
    assert sorted(kinds) == [1, 2, 4, 8, 16 + 2], kinds
    others = [name(path) for path in RUN if path.name != "writing-a-feature.md"
              and blocks(path, "swift")]
    assert not others, f"Swift blocks nothing compiles: {others}"


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def anchors(path):
    """The fragments GitHub gives the headings of a Markdown file."""
    found = set()
    for heading in re.findall(r"^#+ (.*)$", path.read_text(), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def relative_links():
    links = []
    for path in LINKED:
        text = re.sub(r"^```.*?^```$", "", path.read_text(), flags=re.M | re.S)
        for target in LINK.findall(text):
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):
                links.append((name(path), target))
    return sorted(set(links))


def test_the_docs_have_relative_links():
    assert len(relative_links()) >= 20


@pytest.mark.parametrize("source,target", relative_links())
def test_every_relative_link_leads_to_a_file_of_the_repository(source, target):
    file_part, _, fragment = target.partition("#")
    resolved = ((ROOT / source).parent / file_part).resolve() if file_part else ROOT / source
    assert resolved.is_relative_to(ROOT), f"{source} links outside the repository: {target}"
    assert resolved.exists(), f"{source} links to a missing file: {target}"
    if fragment and resolved.suffix == ".md":
        assert fragment in anchors(resolved), f"{source}: no heading #{fragment} in {file_part}"


@pytest.mark.parametrize("path", LINKED, ids=name)
def test_the_docs_name_no_path_outside_the_repository(path):
    assert "../shared" not in path.read_text() and "/work/" not in path.read_text()


def conversations():
    """(path, [(request line, expected message lines)]) for the files with `jsonrpc` blocks."""
    found = []
    for path in RUN:
        exchanges = []
        for _, _, body, _ in blocks(path, "jsonrpc"):
            lines = []
            for line in body.splitlines():
                if line[:1].isspace() and lines:
                    lines[-1] += line.strip()
                elif line.strip():
                    lines.append(line)
            for line in lines:
                if line.startswith("> "):
                    exchanges.append((line[2:], []))
                else:
                    assert line.startswith("< ") and exchanges, f"{name(path)}: {line!r}"
                    exchanges[-1][1].append(line[2:])
        if exchanges:
            found.append((path, exchanges))
    return found


def matches(received, shown):
    """Whether the messages are the ones shown, a text line standing for one or more."""
    if not shown:
        return not received
    want, rest = shown[0], shown[1:]
    if not isinstance(want, str):
        return bool(received) and received[0] == want and matches(received[1:], rest)
    return any(matches(received[count:], rest) for count in range(1, len(received) + 1))


@pytest.mark.parametrize("path,exchanges", conversations(), ids=lambda value: (
    name(value) if isinstance(value, Path) else None))
def test_jsonrpc_conversations_are_what_the_server_says(path, exchanges, stateserver_bin):
    server = subprocess.Popen([stateserver_bin, "--ephemeral", "--history", "100"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        for request, expected in exchanges:
            request_id = json.loads(request)["id"]
            server.stdin.write(request + "\n")
            server.stdin.flush()
            received = []
            while True:
                line = server.stdout.readline()
                assert line, f"{name(path)}: the server ended before answering {request}"
                received.append(json.loads(line))
                if received[-1].get("id") == request_id and "method" not in received[-1]:
                    break
            if not expected:
                continue
            shown = [parsed(line) for line in expected]
            assert matches(received, shown), (request, received, expected)
    finally:
        server.stdin.close()
        server.wait(timeout=30)
