#!/usr/bin/env python3
"""`make screenshots`: docs/devtools.png, the devtools page after a short session of the
reference app, with one action selected. Usage: screenshots.py STATESERVER_BIN."""
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "clients" / "python"))
sys.path.insert(0, str(REPO / "tests"))

from devtools_support import BOUND, chromium, start_devtools, stop_devtools  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402
from stateserver import Client  # noqa: E402


def main() -> None:
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o700)
        sock, recording = Path(directory) / "core.sock", Path(directory) / "session.ndjson"
        with Client.spawn([binary, "--ephemeral", "--listen", str(sock), "--record",
                           str(recording)]) as core:
            core.request("store/list")
            process, url = start_devtools(sock, recording, binary)
            browser = chromium(1500, 860)
            try:
                session(core)
                browser.get(url)
                wait = WebDriverWait(browser, BOUND, ignored_exceptions=[
                    StaleElementReferenceException])
                wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")) >= 12)
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline .span.finished"))

                def select_add(d):
                    for row in d.find_elements(By.CSS_SELECTOR, "#timeline tbody tr"):
                        if "add" in row.text and "cart" in row.text:
                            row.click()
                            return True
                    return False
                wait.until(select_add)
                wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#state details"))
                Select(browser.find_element(By.ID, "dispatch-store")).select_by_value("notes")
                Select(browser.find_element(By.ID, "dispatch-type")).select_by_value("edit")
                target = REPO / "docs" / "devtools.png"
                target.parent.mkdir(exist_ok=True)
                browser.save_screenshot(str(target))
                print(f"wrote {target.relative_to(REPO)}")
            finally:
                browser.quit()
                stop_devtools(process)


def session(core: Client) -> None:
    core.dispatch("counter", {"type": "set", "value": 41})
    core.dispatch("counter", {"type": "increment"})
    core.dispatch("counter", {"type": "incrementLater", "afterMs": 20}, wait="settled")
    core.dispatch("cart", {"type": "add", "id": "sku-7", "name": "Mug", "price": 1250})
    core.dispatch("cart", {"type": "add", "id": "sku-9", "name": "Teapot", "price": 3400})
    core.dispatch("notes", {"type": "add", "text": "Heron at the pier"})
    core.dispatch("notes", {"type": "add", "text": "Kingfisher by the weir"})
    core.dispatch("notes", {"type": "sync"}, wait="settled")
    core.dispatch("navigation", {"type": "openURL", "url": "app://users/42"}, wait="settled")
    core.dispatch("navigation", {"type": "openURL", "url": "app://nowhere"}, wait="settled")
    core.dispatch("counter", {"type": "decrement"})


if __name__ == "__main__":
    main()
