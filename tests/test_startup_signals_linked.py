"""CStartupSignals blocks SIGTERM, SIGINT and SIGHUP from an executable's first instruction
through an ELF `.preinit_array` entry. The reference executable links it, and so does an
application's own executable through the `CStartupSignals` product (Examples/Timers); a test
runner must not (it would no longer stop on Ctrl-C). Checked in the built binaries: the
section, and the handler it points to, by its symbol."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMERS = ROOT / "Examples" / "Timers" / ".build" / "debug" / "timers"
HANDLER = "block_shutdown_signals"


def tools():
    if not (shutil.which("readelf") and shutil.which("nm")):
        pytest.skip("readelf and nm (binutils) are needed")


def sections(binary):
    out = subprocess.run(["readelf", "-SW", str(binary)], capture_output=True, text=True,
                         check=True).stdout
    return {word for line in out.splitlines() for word in line.split() if word.startswith(".")}


def symbols(binary):
    out = subprocess.run(["nm", str(binary)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split()}


def assert_blocks_signals_at_start(binary):
    assert ".preinit_array" in sections(binary), f"{binary} has no .preinit_array"
    assert HANDLER in symbols(binary), f"{binary} does not link {HANDLER}"


def test_the_reference_executable_blocks_signals_from_its_first_instruction(stateserver_bin):
    tools()
    assert_blocks_signals_at_start(stateserver_bin)


def test_an_application_executable_gets_it_from_the_product():
    tools()
    if not TIMERS.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{TIMERS} is not built (make example-test builds it)")
        pytest.skip(f"{TIMERS} is not built (make example-test builds it)")
    assert_blocks_signals_at_start(TIMERS)


def test_the_test_runner_does_not_link_it():
    tools()
    runner = ROOT / ".build" / "debug" / "stateserverPackageTests.xctest"
    if not runner.is_file():
        pytest.skip(f"{runner} is not built (swift build --build-tests)")
    assert HANDLER not in symbols(runner)
