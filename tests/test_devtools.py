"""Issue 13: the devtools page in a real browser (headless Chromium through selenium), attached
to a core started with `--listen` and `--record`. Every wait is explicit and bounded by
`BOUND`, never a sleep."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from devtools_support import BOUND, REPO, chromium, start_devtools, stop_devtools

if not (shutil.which("chromium") and shutil.which("chromedriver")):
    if os.environ.get("CI") == "true":
        raise RuntimeError("chromium and chromium-driver are missing: run scripts/setup.sh")
    pytest.skip("chromium and chromium-driver are missing (scripts/setup.sh installs them)",
                allow_module_level=True)

from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402
from stateserver import Client  # noqa: E402


@pytest.fixture
def core(spawn, tmp_path):
    """The owner's client of a core serving `--listen`, recording to a file."""
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    sock, recording = directory / "core.sock", tmp_path / "session.ndjson"
    owner = spawn("--listen", str(sock), "--record", str(recording))
    owner.request("store/list")  # the socket is bound before any input is read
    owner.sock, owner.recording = sock, recording
    return owner


@pytest.fixture
def devtools(core, stateserver_bin):
    process, url = start_devtools(core.sock, core.recording, stateserver_bin)
    yield url
    stop_devtools(process)


@pytest.fixture
def attach_client(stateserver_bin):
    started = []

    def start(path):
        client = Client.attach(path, command=stateserver_bin)
        started.append(client)
        return client

    yield start
    for client in started:
        client.close()


@pytest.fixture
def browser():
    driver = chromium()
    yield driver
    driver.quit()


def wait(driver, condition, what):
    # The page re-renders its rows as entries arrive: an element read mid-render goes stale.
    return WebDriverWait(driver, BOUND, poll_frequency=0.05,
                         ignored_exceptions=[StaleElementReferenceException]).until(
                             condition, message=what)


def text_of(driver, selector):
    return driver.find_element(By.CSS_SELECTOR, selector).text


def rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")


def row_where(driver, type_name, version=None):
    for row in rows(driver):
        cells = row.find_elements(By.TAG_NAME, "td")
        if cells[4].text == type_name and (version is None or cells[3].text == str(version)):
            return row
    return False


def until(predicate, what):
    deadline = time.monotonic() + BOUND
    while not (value := predicate()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
    return value


def status(url):
    try:
        with urllib.request.urlopen(url, timeout=BOUND) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_request_without_the_token_is_refused(devtools):
    origin = devtools.split("/", 3)
    base = f"{origin[0]}//{origin[2]}"
    token = origin[3].strip("/")
    assert status(devtools)[0] == 200
    assert status(devtools + "static/app.js")[0] == 200
    for path in ("/", "/static/app.js", "/api/export", "/ws", f"/{token[:-1]}/",
                 f"/{token}x/api/export", "/x" + token + "/"):
        code, body = status(base + path)
        assert (code, body) == (403, b""), path
    assert devtools.startswith("http://127.0.0.1:") and len(token) >= 32


def test_the_page_shows_stores_dispatches_from_its_form_and_rewinds(core, devtools, browser):
    browser.get(devtools)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#stores tr[data-store="counter"]'),
         "the counter store listed")
    assert "counter" in text_of(browser, '#stores tr[data-store="counter"]')

    # A client's dispatch reaches the timeline.
    core.dispatch("counter", {"type": "set", "value": 5})
    set_version = core.request("state/get", {"store": "counter"})["version"]
    wait(browser, lambda d: row_where(d, "set", set_version), "the set action in the timeline")
    wait(browser, lambda d: text_of(d, '#stores tr[data-store="counter"] .version')
         == str(set_version), "the counter's version, live")

    # The form checks its input against the schema before sending.
    Select(browser.find_element(By.ID, "dispatch-store")).select_by_value("counter")
    Select(browser.find_element(By.ID, "dispatch-type")).select_by_value("set")
    browser.find_element(By.CSS_SELECTOR, "#dispatch button[type=submit]").click()
    wait(browser, lambda d: "/action/value" in text_of(d, "#dispatch-result"), "the form's check")
    assert "not sent" in text_of(browser, "#dispatch-result")
    assert core.request("state/get", {"store": "counter"})["state"] == {"count": 5}

    # Unchecked, a wrong value reaches the server, whose error shows with its pointer.
    browser.find_element(By.ID, "dispatch-check").click()
    browser.find_element(By.CSS_SELECTOR, '#dispatch-fields [name="value"]').send_keys("seven")
    browser.find_element(By.CSS_SELECTOR, "#dispatch button[type=submit]").click()
    wait(browser, lambda d: text_of(d, "#dispatch-result").startswith("server:"),
         "the server's error")
    assert "/action/value" in text_of(browser, "#dispatch-result")

    # A valid dispatch from the form changes the core's state; the timeline grows.
    before = len(rows(browser))
    browser.find_element(By.ID, "dispatch-check").click()
    field = browser.find_element(By.CSS_SELECTOR, '#dispatch-fields [name="value"]')
    field.clear()
    field.send_keys("7")
    browser.find_element(By.CSS_SELECTOR, "#dispatch button[type=submit]").click()
    wait(browser, lambda d: "is at version" in text_of(d, "#dispatch-result"), "the dispatch")
    assert core.request("state/get", {"store": "counter"})["state"] == {"count": 7}
    wait(browser, lambda d: len(rows(d)) > before, "the timeline growing")

    # An effect: its internal action and its span.
    core.dispatch("counter", {"type": "incrementLater", "afterMs": 10}, wait="settled")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline .span.finished"),
         "the effect's span, finished")
    Select(browser.find_element(By.ID, "filter-kind")).select_by_value("internal")
    wait(browser, lambda d: rows(d) and all(r.get_attribute("data-kind") == "internal"
                                            for r in rows(d)), "only internal actions")
    Select(browser.find_element(By.ID, "filter-kind")).select_by_value("public")
    wait(browser, lambda d: rows(d) and all(r.get_attribute("data-kind") == "public"
                                            for r in rows(d)), "only public actions")
    browser.find_element(By.ID, "filter-type").send_keys("set")
    wait(browser, lambda d: rows(d) and all(r.find_elements(By.TAG_NAME, "td")[4].text == "set"
                                            for r in rows(d)), "only set actions")

    # Select the first set: its diff and its state; rewind to it.
    def click(d):
        row = row_where(d, "set", set_version)
        if row:
            row.click()
        return bool(row)
    wait(browser, click, "the set action selected")
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#patch .op-replace"), "the diff")
    assert text_of(browser, "#patch") == "~ replace /count = 5"
    wait(browser, lambda d: "count: 5" in text_of(d, "#state"), "the state at that version")
    browser.find_element(By.ID, "rewind").click()
    wait(browser, lambda d: "is now at version" in text_of(d, "#rewind-result"), "the rewind")
    state = core.request("state/get", {"store": "counter"})
    assert state["state"] == {"count": 5} and state["version"] > set_version


def test_an_imported_recording_with_a_changed_patch_reports_its_divergence(
        core, devtools, browser, tmp_path):
    for value in (3, 4):
        core.dispatch("counter", {"type": "set", "value": value})
    core.dispatch("counter", {"type": "incrementLater", "afterMs": 10}, wait="settled")
    browser.get(devtools)
    wait(browser, lambda d: row_where(d, "incrementLater"), "the session in the timeline")

    # The export is the core's recording; `stateserver replay` accepts it.
    code, exported = status(devtools + "api/export")
    assert code == 200
    lines = [json.loads(line) for line in exported.decode().splitlines()]
    assert lines[0]["type"] == "header"
    sets = [line for line in lines if line.get("type") == "entry"
            and (line.get("action") or {}).get("type") == "set"]
    assert [line["patch"][0]["value"] for line in sets] == [3, 4]

    def import_file(lines, name):
        path = tmp_path / name
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        browser.find_element(By.ID, "import").send_keys(str(path))

    import_file(lines, "as-recorded.ndjson")
    wait(browser, lambda d: d.find_element(By.ID, "replay").get_attribute("data-outcome")
         in ("match", "diverged", "refused"), "the replay check")
    assert "replay matches" in text_of(browser, "#replay")

    sets[1]["patch"][0]["value"] = 40
    import_file(lines, "changed.ndjson")
    wait(browser, lambda d: d.find_element(By.ID, "replay").get_attribute("data-outcome")
         == "diverged", "the divergence")
    summary = text_of(browser, "#replay .summary")
    assert f"store counter, version {sets[1]['version']}" in summary
    assert "= 40" in text_of(browser, "#replay")  # the recorded (changed) patch
    assert "= 4" in text_of(browser, "#replay")  # the one replay made


def test_the_page_keeps_the_last_n_entries_and_says_how_many_it_dropped(
        core, stateserver_bin, browser):
    process, url = start_devtools(core.sock, core.recording, stateserver_bin, "--keep", "20")
    try:
        browser.get(url)
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#stores tr[data-store="counter"]'),
             "the stores")
        for _ in range(60):
            core.dispatch("counter", {"type": "increment"})
        wait(browser, lambda d: row_where(d, "increment", 60), "the last increment")
        notice = browser.find_element(By.ID, "notice")
        wait(browser, lambda d: notice.is_displayed(), "the notice")
        dropped = int(re.search(r"keeping the last 20 entries: (\d+) older not kept",
                                notice.text).group(1))
        assert dropped >= 40
        assert len(rows(browser)) == 20
    finally:
        stop_devtools(process)


def test_devtools_can_start_the_core_itself(stateserver_bin, tmp_path):
    # `-- stateserver ARGS...`: devtools owns the core (over stdio), which it starts with
    # --listen and --record of its own; export serves that recording and replay accepts it.
    env = dict(os.environ, PYTHONPATH=str(REPO / "clients" / "python"))
    process = subprocess.Popen(
        [sys.executable, "-m", "stateserver.devtools", "--", stateserver_bin, "--ephemeral"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read()
        dispatch = urllib.request.Request(
            url + "api/dispatch", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"store": "counter", "action": {"type": "set", "value": 3}}).encode())
        with urllib.request.urlopen(dispatch, timeout=BOUND) as response:
            assert json.load(response)["result"]["version"] == 1
        code, body = status(url + "api/state?store=counter&version=1")
        assert (code, json.loads(body)["result"]["state"]) == (200, {"count": 3})

        def recorded():
            code, exported = status(url + "api/export")
            lines = [json.loads(line) for line in exported.splitlines()]
            return exported if any(line.get("type") == "entry" for line in lines) else None
        exported = until(recorded, "the dispatch in the recording")
        assert json.loads(exported.splitlines()[0])["type"] == "header"
        path = tmp_path / "exported.ndjson"
        path.write_bytes(exported)
        replay = subprocess.run([stateserver_bin, "replay", str(path)], capture_output=True,
                                text=True, timeout=BOUND)
        assert replay.returncode == 0, replay.stderr
    finally:
        process.terminate()
        assert process.wait(timeout=BOUND) == 0


def test_history_and_recording_cover_stores_of_a_core_that_listens(core, attach_client):
    # Merging history with attach once skipped every store's history when --listen was given.
    other = attach_client(core.sock)
    other.dispatch("counter", {"type": "set", "value": 9})
    core.dispatch("counter", {"type": "increment"})
    entries = core.request("history/get", {"store": "counter"})["entries"]
    assert [entry["action"]["type"] for entry in entries] == ["set", "increment"]
    other.request("store/open", {"feature": "counter", "store": "second"})
    other.dispatch("second", {"type": "set", "value": 2})
    assert [e["action"]["type"] for e in core.request(
        "history/get", {"store": "second"})["entries"]] == ["set"]

    def recorded():
        lines = [json.loads(line) for line in core.recording.read_text().splitlines()]
        return {(line["type"], line["store"]) for line in lines if line["type"] != "header"}
    until(lambda: {("open", "second"), ("entry", "second"), ("entry", "counter")} <= recorded(),
          "the attached client's store and dispatches in the recording")


def test_an_effect_cancelled_by_a_rewind_ends_its_span_as_cancelled(core, devtools, browser):
    core.dispatch("counter", {"type": "set", "value": 1})
    core.dispatch("counter", {"type": "incrementLater", "afterMs": 600_000})  # still running
    browser.get(devtools)
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline .span.running"),
         "the running effect's span")
    core.request("store/rewind", {"store": "counter", "version": 1})
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline .span.cancelled"),
         "the span ended as cancelled")
    wait(browser, lambda d: row_where(d, "rewind to 1"), "the rewind in the timeline")
    assert not browser.find_elements(By.CSS_SELECTOR, "#timeline .span.running")


# Issue 29: time travel that branches, from the page

def click_row(driver, type_name, version):
    row = row_where(driver, type_name, version)
    if row:
        row.click()
    return bool(row)


def test_the_page_skips_and_unskips_forks_and_blames(core, devtools, browser):
    core.dispatch("counter", {"type": "increment"})
    middle = core.dispatch("counter", {"type": "set", "value": 10})["version"]
    core.dispatch("counter", {"type": "increment"})
    browser.get(devtools)
    wait(browser, lambda d: click_row(d, "set", middle), "the set action selected")

    # Skip it: the core recomputes without it; the row is struck through.
    wait(browser, lambda d: d.find_elements(By.ID, "skip"), "the skip button")
    browser.find_element(By.ID, "skip").click()
    wait(browser, lambda d: "recomputed without" in text_of(d, "#branch-result"), "the skip")
    assert core.request("state/get", {"store": "counter"})["state"] == {"count": 2}
    wait(browser, lambda d: (row_where(d, "set", middle) or None)
         and row_where(d, "set", middle).get_attribute("data-skipped") == "yes",
         "the row marked skipped")
    entries = core.history("counter")["entries"]
    assert [e.get("skipped") for e in entries if e["kind"] == "action"][-3:] == [
        False, True, False]
    skipped_seq = next(e["seq"] for e in entries if e.get("skipped"))
    wait(browser, lambda d: row_where(d, f"skip #{skipped_seq}"), "the skip's own row")

    # Unskip from the same panel: the state is back.
    assert text_of(browser, "#skip") == "Unskip this action"
    browser.find_element(By.ID, "skip").click()
    wait(browser, lambda d: "recomputed with " in text_of(d, "#branch-result"), "the unskip")
    assert core.request("state/get", {"store": "counter"})["state"] == {"count": 11}

    # Fork at the set's version, under a name.
    browser.find_element(By.ID, "fork-as").send_keys("sandbox")
    browser.find_element(By.ID, "fork").click()
    wait(browser, lambda d: "forked sandbox" in text_of(d, "#branch-result"), "the fork")
    assert core.request("state/get", {"store": "sandbox"}) == {
        "store": "sandbox", "version": middle, "state": {"count": 10}}
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#stores tr[data-store="sandbox"]'),
         "the fork listed")

    # Blame from a value of the state tree: the skip entries rewrote /count last.
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#state [data-pointer="/count"]'),
         "the state tree")
    browser.find_element(By.CSS_SELECTOR, '#state [data-pointer="/count"]').click()
    wait(browser, lambda d: "last changed by" in text_of(d, "#blame"), "the blame")
    blame = core.request("state/blame", {"store": "counter", "path": "/count"})
    assert f"#{blame['last']['seq']} " in text_of(browser, "#blame .summary")
    listed = browser.find_elements(By.CSS_SELECTOR, "#blame li")
    assert len(listed) == 1 + len(blame["before"])


def test_an_imported_recording_steps_through_its_timeline(core, devtools, browser, tmp_path):
    core.dispatch("counter", {"type": "increment"})
    core.dispatch("counter", {"type": "set", "value": 10})
    core.dispatch("counter", {"type": "increment"})
    browser.get(devtools)
    wait(browser, lambda d: row_where(d, "set"), "the session in the timeline")
    code, exported = status(devtools + "api/export")
    assert code == 200
    lines = [json.loads(line) for line in exported.decode().splitlines()]
    counter = [line for line in lines
               if line.get("type") == "entry" and line["store"] == "counter"]
    path = tmp_path / "steps.ndjson"
    # Only the counter's lines: its three entries are then the whole timeline.
    path.write_text("".join(json.dumps(line) + "\n" for line in lines
                            if line.get("store") in (None, "counter")))
    browser.find_element(By.ID, "import").send_keys(str(path))
    wait(browser, lambda d: d.find_elements(By.ID, "step-label"), "the recording's timeline")
    assert text_of(browser, "#step-label").startswith(f"step 1 of {len(counter)}")
    assert "count: 1" in text_of(browser, "#step-state")
    assert "increment" in text_of(browser, "#step-action")
    browser.find_element(By.ID, "step-next").click()
    wait(browser, lambda d: "count: 10" in text_of(d, "#step-state"), "step 2's state")
    assert text_of(browser, "#step-patch") == "~ replace /count = 10"
    assert '"set"' in text_of(browser, "#step-action")
    browser.find_element(By.ID, "step-next").click()
    wait(browser, lambda d: "count: 11" in text_of(d, "#step-state"), "step 3's state")
    assert browser.find_element(By.ID, "step-next").get_attribute("disabled") is not None
    browser.find_element(By.ID, "step-prev").click()
    wait(browser, lambda d: "count: 10" in text_of(d, "#step-state"), "back to step 2")
