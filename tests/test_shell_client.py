"""clients/shell/stateserver-msg: the lines it writes, and a pipe into the real server."""
import json
import pathlib
import subprocess

import pytest

from conftest import line_validator

TOOL = pathlib.Path(__file__).resolve().parent.parent / "clients" / "shell" / "stateserver-msg"


def msg(*args):
    done = subprocess.run([str(TOOL), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1
    return json.loads(done.stdout)


def test_dispatch_builds_the_action_from_string_and_json_fields():
    assert msg("dispatch", "cart", "add", "id=sku-7", "name=Mug", "price:=1250", "--id", "2") == {
        "jsonrpc": "2.0", "id": 2, "method": "dispatch",
        "params": {"store": "cart",
                   "action": {"type": "add", "id": "sku-7", "name": "Mug", "price": 1250}}}


def test_wait_and_string_ids():
    line = msg("dispatch", "counter", "increment", "--wait", "settled", "--id", "job-1")
    assert line["id"] == "job-1"
    assert line["params"]["wait"] == "settled"


def test_strings_are_escaped_so_any_text_survives():
    text = 'quote " backslash \\ tab \t newline \n bell \x07 unicode é ☃ key=value :=x'
    assert msg("dispatch", "notes", "add", f"text={text}")["params"]["action"]["text"] == text


def test_request_and_notification_params():
    assert msg("request", "state/get", "store=cart", "path=/items", "--id", "9") == {
        "jsonrpc": "2.0", "id": 9, "method": "state/get",
        "params": {"store": "cart", "path": "/items"}}
    note = msg("notify", "$/cancelRequest", "id:=3")
    assert note == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}}


@pytest.mark.parametrize("args", [[], ["bogus"], ["dispatch", "counter"],
                                  ["dispatch", "counter", "set", "value"],
                                  ["request", "m", "=x"]])
def test_bad_usage_exits_2_with_a_message_and_prints_no_line(args):
    done = subprocess.run([str(TOOL), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip()


def test_a_pipe_of_its_lines_drives_the_server(stateserver_bin, protocol_schema):
    script = (f"{{ {TOOL} dispatch counter set value:=41 --id 1; "
              f"{TOOL} dispatch counter increment --id 2; "
              f"{TOOL} request state/get store=counter --id 3; }} "
              f"| {stateserver_bin} --ephemeral")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    validator = line_validator(protocol_schema)
    for line in lines:
        validator.validate(line)
    replies = {line["id"]: line for line in lines if "id" in line}
    assert replies[2]["result"] == {"store": "counter", "version": 2}
    assert replies[3]["result"]["state"] == {"count": 42}
