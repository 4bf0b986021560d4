#!/usr/bin/env python3
"""Is the page usable under a flood? Headless Chromium shows the devtools page of a core taking
10,000 increments/s for 5 s; every 0.2 s the driver asks the page a question (a script round
trip, which waits for the page's main thread) and the times are printed. Not a unit test: run
it by hand (`PYTHONPATH=clients/python python3 bench/devtools/page.py .build/release/stateserver`)."""
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(REPO / "tests"))

from devtools_support import chromium, start_devtools, stop_devtools  # noqa: E402

RATE, SECONDS = 10_000, 5


def line(i):
    return (b'{"jsonrpc":"2.0","id":%d,"method":"dispatch","params":{"store":"counter",'
            b'"action":{"type":"increment"}}}\n' % i)


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as directory:
        os.chmod(directory, 0o700)
        sock = os.path.join(directory, "core.sock")
        core = subprocess.Popen([binary, "--ephemeral", "--listen", sock], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        core.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"store/list"}\n')
        core.stdin.flush()
        while not os.path.exists(sock):
            time.sleep(0.01)
        process, url = start_devtools(sock, os.path.join(directory, "none"), binary)
        browser = chromium()
        try:
            browser.get(url)
            total = RATE * SECONDS

            def drive():
                start, sent = time.monotonic(), 0
                while sent < total:
                    due = min(total, int((time.monotonic() - start) * RATE) + 100)
                    core.stdin.write(b"".join(line(i) for i in range(sent + 1, due + 1)))
                    core.stdin.flush()
                    sent = due
                    time.sleep(0.01)

            driver = threading.Thread(target=drive)
            driver.start()
            times = []
            while driver.is_alive():
                start = time.monotonic()
                browser.execute_script("return document.querySelectorAll('#timeline tr').length")
                times.append(time.monotonic() - start)
                time.sleep(0.2)
            print(f"{RATE:,} actions/s for {SECONDS} s: page script round trip median "
                  f"{statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
                  f"({len(times)} asked)")
            print(browser.find_element("id", "notice").text)
        finally:
            browser.quit()
            stop_devtools(process)
            core.stdin.close()
            core.wait(timeout=60)


if __name__ == "__main__":
    main()
