"""Helpers of the devtools tests and of `make screenshots`: a core with `--listen` and
`--record`, the devtools server attached to it, and headless Chromium."""
import os
import subprocess
import sys
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOUND = 60  # generous: the suite runs while the machine is loaded


def start_devtools(sock, recording, stateserver_bin, *extra):
    """Starts `python -m stateserver.devtools --attach sock`; returns (process, url)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "clients" / "python"))
    process = subprocess.Popen(
        [sys.executable, "-m", "stateserver.devtools", "--attach", str(sock), "--recording",
         str(recording), "--stateserver", stateserver_bin, *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    lines = []
    reader = threading.Thread(target=lambda: lines.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(BOUND)
    if not lines or not lines[0].startswith("http://127.0.0.1:"):
        process.kill()
        raise AssertionError(f"devtools printed no URL: {lines!r} {process.stderr.read()[-2000:]}")
    return process, lines[0].strip()


def stop_devtools(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=BOUND)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=BOUND)


def chromium(width=1500, height=900):
    """Headless Chromium through Debian's chromedriver."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", f"--window-size={width},{height}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(BOUND)
    driver.set_script_timeout(BOUND)
    return driver
