"""The Neovim plugin (clients/neovim), driven headless by clients/neovim/test/notes_test.lua:
line framing from partial chunks, JSON Patch, and the notes buffer against the real core (add,
edit, sync, a conflict resolved from the buffer, delete, the statusline, :checkhealth)."""
import json
import os
import shutil
import subprocess

import pytest

from conftest import REPO

PLUGIN = REPO / "clients" / "neovim"
TIMEOUT = 300  # a failure bound only: the session takes about a second


@pytest.fixture(scope="module")
def session(stateserver_bin, tmp_path_factory):
    nvim = shutil.which("nvim")
    if nvim is None:
        pytest.fail("nvim is not installed: scripts/setup.sh installs Debian's neovim")
    out = tmp_path_factory.mktemp("nvim") / "results.json"
    env = dict(os.environ, STATESERVER_BIN=stateserver_bin, STATESERVER_NVIM_OUT=str(out),
               STATESERVER_TESTDATA=os.environ.get("STATESERVER_TESTDATA",
                                                   str(REPO.parent / "shared" / "testdata")))
    result = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={PLUGIN}",
         "-c", f"luafile {PLUGIN / 'test' / 'notes_test.lua'}"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT,
        stdin=subprocess.DEVNULL)
    assert out.exists(), f"nvim wrote no results (status {result.returncode}): {result.stderr}"
    report = json.loads(out.read_text())
    assert report["ok"], report.get("error")
    assert result.returncode == 0, result.stderr
    return {entry["name"]: entry["value"] for entry in report["results"]}


def test_lines_are_framed_from_partial_chunks(session):
    assert session["framer"] == ['{"a":1}', '{"b":2}', '{"c":3}', "tail"]


def test_patches_apply_and_empty_objects_stay_objects(session):
    assert json.loads(session["patch"]) == {"a": [9, 3], "c": [2, 3], "m": "v", "o": {}, "e": {}}
    assert session["patch_error"] == (
        "patch operation 0 (remove /a/5): index 5 is past the end of an array of 0")


def test_patches_pass_the_json_patch_conformance_suite(session, testdata):
    assert "conformance" in session, f"the Lua test found no suite under {testdata}"
    assert session["conformance"]["ran"] >= 100
    assert session["conformance"]["failures"] == []


def test_a_mirror_applies_patches_in_order_and_resyncs_on_a_gap_or_a_misfit(session):
    # version and n after a patch and an old one; no request pending; the gap's request; the
    # misfit's request; then version, n and resyncs after both answers.
    assert session["mirror"] == [4, 4, 0, "state/get", "state/get", 8, 8, 2]


def test_the_notes_buffer_lists_the_store_live(session):
    assert session["commands"] is True
    assert session["empty"] == ["# notes: synced"]
    assert session["added"] == [
        "# notes: 2 pending",
        "note-1  [pending]  Heron at the pier",
        "note-2  [pending]  Egret on the mudflat"]
    assert session["synced"] == [
        "# notes: synced",
        "note-1  [synced]  Grey heron at the pier",
        "note-2  [synced]  Egret on the mudflat"]


def test_a_conflict_shows_both_texts_and_is_resolved_from_the_buffer(session):
    assert session["conflict"] == [
        "# notes: 1 conflict",
        "note-1  [conflict]  Grey heron, mine  (server: Egret)",
        "note-2  [synced]  Egret on the mudflat"]
    assert session["resolved"] == [
        "# notes: synced",
        "note-1  [synced]  Grey heron, mine",
        "note-2  [synced]  Egret on the mudflat"]


def test_delete_and_add_from_the_buffers_keys(session):
    assert session["deleted"] == ["# notes: synced", "note-1  [synced]  Grey heron, mine"]
    assert session["prompted"] == [
        "# notes: 1 pending", "note-1  [synced]  Grey heron, mine", "note-3  [pending]  Cormorant"]


def test_refusals_are_reported_to_the_user(session):
    assert session["notices"] == [
        "prompt: New note: ",
        "stateserver: no note on this line",
        "stateserver: notes add refused: Invalid params: expected a non-blank text"]
    assert session["resyncs"] == 0  # every patch fitted the mirror


def test_the_statusline_shows_how_the_sync_stands(session):
    assert [session[f"statusline_{when}"] for when in (
        "before", "pending", "synced", "conflict", "after")] == [
        "", "notes: 2 pending", "notes: synced", "notes: 1 conflict", ""]


def test_checkhealth_runs_a_session_with_the_binary(session):
    report = "\n".join(session["health"])
    assert "ERROR" not in report, report
    for line in ("OK: Neovim 0.7 or newer", "OK: binary: ", "OK: initialize answered: stateserver",
                 "OK: the notes feature is served", "INFO: running: "):
        assert line in report, report


def test_the_server_exits_cleanly_when_the_plugin_stops_it(session):
    assert session["exit"] == 0
