"""Typed bindings (issue 14): `stateserver codegen` writes them from the features' schemas, the
committed copies in the clients have not drifted, and tsc and mypy accept the typed usage and
refuse a program with a wrong field in an action."""
import json
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
TS = REPO / "clients" / "typescript"
PY = REPO / "clients" / "python"
COMMITTED = {
    "typescript": TS / "src" / "features.d.ts",
    "python": PY / "stateserver" / "features.py",
}


def tool(name):
    """A checker setup.sh installs: required in CI, skipped elsewhere when missing."""
    import os
    found = shutil.which(name)
    if found is None:
        message = f"{name} is not installed: run scripts/setup.sh"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("lang", ["typescript", "python"])
def test_the_committed_bindings_match_codegen(stateserver_bin, tmp_path, lang):
    done = run([str(stateserver_bin), "codegen", "--lang", lang, "--out", str(tmp_path)], REPO)
    assert done.returncode == 0, done.stderr
    written = (tmp_path / COMMITTED[lang].name).read_text()
    assert written == COMMITTED[lang].read_text(), (
        f"{COMMITTED[lang].relative_to(REPO)} drifted: run `make bindings`")


def test_codegen_names_every_feature_and_keeps_optional_apart_from_null(stateserver_bin, tmp_path):
    run([str(stateserver_bin), "codegen", "--lang", "typescript", "--out", str(tmp_path)], REPO)
    text = (tmp_path / "features.d.ts").read_text()
    for name in ["Backend", "Counter", "Users", "Cart", "Profile", "Notes", "Navigation"]:
        assert f"export type {name}State = " in text
        assert f"export type {name}Action = " in text
    # The server writes a missing value as null: present, nullable, never optional.
    assert "serverText: string | null;" in text
    assert "serverText?" not in text
    assert '"local" | "server"' in text


def test_help_names_codegen(stateserver_bin):
    assert "stateserver codegen --lang" in run([str(stateserver_bin), "--help"], REPO).stdout


def test_codegen_refuses_usage_errors(stateserver_bin, tmp_path):
    bad_lang = run([str(stateserver_bin), "codegen", "--lang", "cobol", "--out", str(tmp_path)], REPO)
    assert bad_lang.returncode == 2 and "--lang" in bad_lang.stderr
    no_out = run([str(stateserver_bin), "codegen", "--lang", "python"], REPO)
    assert no_out.returncode == 2 and "--out" in no_out.stderr
    assert bad_lang.stdout == no_out.stdout == ""


def test_tsc_accepts_the_typed_usage_and_every_expected_refusal():
    done = run([tool("tsc"), "-p", "test-types/tsconfig.json"], TS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_tsc_refuses_a_wrong_field_in_an_action():
    done = run([tool("tsc"), "-p", "test-types/tsconfig.must-fail.json"], TS)
    assert done.returncode != 0
    assert "must-fail.ts(7," in done.stdout, done.stdout
    assert "'txt' does not exist in type 'NotesAddAction'" in done.stdout, done.stdout


def test_tsc_checks_the_javascript_and_its_exports_against_the_declarations():
    """checkJs over src/*.js (their JSDoc names index.d.ts's types), and every exported value
    assignable to what index.d.ts declares for it (test-types/exports-match.ts)."""
    done = run([tool("tsc"), "-p", "test-types/tsconfig.js.json"], TS)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_declarations_export_what_the_javascript_exports():
    """index.d.ts declares exactly the values index.js exports (types aside)."""
    script = "import('./src/index.js').then(m => console.log(Object.keys(m).sort().join(' ')))"
    done = run([tool("node"), "-e", script], TS)
    assert done.returncode == 0, done.stderr
    exported = set(done.stdout.split())
    import re
    declared = set(re.findall(r"^export (?:declare )?(?:class|function|const) (\w+)",
                              (TS / "src" / "index.d.ts").read_text(), re.M))
    assert exported and declared == exported


def mypy(*files):
    return run([tool("mypy"), "--strict", "--follow-imports=silent", "--no-incremental", *files], PY)


def test_mypy_accepts_the_bindings_and_the_typed_usage():
    done = mypy("stateserver/features.py", "stateserver/typed.py", "tests-types/typed_usage.py")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_refuses_a_wrong_field_in_an_action():
    done = mypy("tests-types/must_fail.py")
    assert done.returncode != 0
    assert 'must_fail.py:8: error: Argument 1 to "dispatch"' in done.stdout, done.stdout
    assert 'Extra key "txt" for TypedDict "NotesAddAction"' in done.stdout, done.stdout


def test_the_typed_store_talks_to_a_real_server(spawn):
    from stateserver import features
    client = spawn()
    notes = features.store(client, "notes")
    notes.dispatch({"type": "add", "text": "Heron"}, wait="settled")
    state = notes.state()
    assert [note["text"] for note in state["notes"]] == ["Heron"]
    assert state["notes"][0]["serverText"] is None and "serverText" in state["notes"][0]
    mirror = notes.mirror()
    result = notes.dispatch({"type": "edit", "id": state["notes"][0]["id"], "text": "Egret"})
    assert result is not None
    synced = mirror.sync(result["version"])
    assert synced is not None and [note["text"] for note in synced["notes"]] == ["Egret"]


def reference_block(language):
    """The one `language` block of docs/reference/bindings.md."""
    import re
    text = (REPO / "docs" / "reference" / "bindings.md").read_text()
    blocks = re.findall(rf"^```{language}\n(.*?)^```$", text, re.M | re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_bindings_reference_typescript_snippet_type_checks(tmp_path):
    code = reference_block("ts").replace("./clients/typescript/src/", str(TS / "src") + "/")
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "snippet.ts").write_text(code + "\nexport {};\n")
    shutil.copy(TS / "test-types" / "node-shim.d.ts", tmp_path / "node-shim.d.ts")
    config = json.loads((TS / "test-types" / "tsconfig.json").read_text())
    config["files"] = ["node-shim.d.ts", "snippet.ts"]
    (tmp_path / "tsconfig.json").write_text(json.dumps(config))
    done = run([tool("tsc"), "-p", "tsconfig.json"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # The commented-out line is the refusal the reference promises.
    wrong = code.replace("// await client.dispatch", "await client.dispatch")
    (tmp_path / "snippet.ts").write_text(wrong + "\nexport {};\n")
    done = run([tool("tsc"), "-p", "tsconfig.json"], tmp_path)
    assert "'txt' does not exist in type 'NotesAddAction'" in done.stdout, done.stdout


def test_the_bindings_reference_python_snippet_type_checks_and_prints_what_it_says(stateserver_bin, tmp_path):
    import contextlib
    import io
    code = reference_block("python")
    (tmp_path / "snippet.py").write_text(code)
    # The sync client's own methods carry no annotations yet: calling them is allowed here.
    done = run([tool("mypy"), "--strict", "--allow-untyped-calls", "--follow-imports=silent",
                "--no-incremental", str(tmp_path / "snippet.py")], PY)
    assert done.returncode == 0, done.stdout + done.stderr
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code.replace('"stateserver"', repr(str(stateserver_bin))), "bindings.md",
                     "exec"), {"__name__": "readme"})
    assert printed.getvalue() == "Heron None\n"
