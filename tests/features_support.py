"""A small protocol client for the reference-app tests: spawns `stateserver`, sends
JSON-RPC requests, and keeps the notifications (patches, events) that arrive meanwhile.

Only the protocol (docs/reference/protocol.md) is spoken here; nothing reaches into the server.
Waiting is done with `wait: "settled"` on dispatch, never with sleeps.
"""
import json
import os
import queue
import subprocess
import threading

import pytest

# Generous: a settled dispatch may include a real 300 ms debounce and a few backoff waits.
REPLY_TIMEOUT = 30


def binary():
    path = os.environ.get("STATESERVER_BIN")
    if not path or not os.path.exists(path):
        message = f"STATESERVER_BIN is not set to a built stateserver (got {path!r})"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


class RPCError(Exception):
    def __init__(self, error):
        super().__init__(json.dumps(error))
        self.code = error.get("code")
        self.data = error.get("data") or {}
        self.error = error


class Server:
    """One running stateserver. `state_dir=None` runs it `--ephemeral`."""

    def __init__(self, *args, state_dir=None):
        command = [binary(), *args]
        command += ["--state-dir", str(state_dir)] if state_dir else ["--ephemeral"]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines = queue.Queue()
        self.stderr_chunks = []
        self.notifications = []
        self.next_id = 1
        threading.Thread(target=self._read_stdout, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()

    def _read_stdout(self):
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self):
        for chunk in self.process.stderr:
            self.stderr_chunks.append(chunk.decode(errors="replace"))

    @property
    def stderr(self):
        return "".join(self.stderr_chunks)

    def send(self, message):
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def call(self, method, params=None):
        """Sends a request and returns its whole reply (result or error)."""
        request_id = self.next_id
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            line = self.lines.get(timeout=REPLY_TIMEOUT)
            if line is None:
                raise AssertionError(f"stateserver exited before answering {method}: {self.stderr}")
            reply = json.loads(line)
            if reply.get("id") == request_id:
                return reply
            if "method" in reply:
                self.notifications.append(reply)

    def request(self, method, params=None):
        reply = self.call(method, params)
        if "error" in reply:
            raise RPCError(reply["error"])
        return reply["result"]

    def dispatch(self, store, action, wait="settled"):
        return self.request("dispatch", {"store": store, "action": action, "wait": wait})

    def dispatch_at_once(self, store, actions, wait="settled"):
        """Dispatches `actions` in one write, all but the last as notifications, and returns
        the last one's result: the server reads them together, so no pause of this process
        (a busy machine) falls between them, as a real-time debounce would notice."""
        *first, last = actions
        lines = [json.dumps({"jsonrpc": "2.0", "method": "dispatch",
                             "params": {"store": store, "action": action}}) + "\n"
                 for action in first]
        self.process.stdin.write("".join(lines).encode())
        return self.dispatch(store, last, wait=wait)

    def notify(self, store, action):
        """A fire-and-forget dispatch (no id, no reply)."""
        self.send({"jsonrpc": "2.0", "method": "dispatch",
                   "params": {"store": store, "action": action}})

    def state(self, store, path=None):
        params = {"store": store}
        if path is not None:
            params["path"] = path
        return self.request("state/get", params)["state"]

    def version(self, store):
        return self.request("state/get", {"store": store})["version"]

    def events(self, store):
        """Events received so far for `store`, oldest first; they are consumed."""
        found = [n["params"]["event"] for n in self.notifications
                 if n["method"] == "store/event" and n["params"]["store"] == store]
        self.notifications = [n for n in self.notifications
                              if not (n["method"] == "store/event" and n["params"]["store"] == store)]
        return found

    def close(self):
        """Ends stdin (a clean shutdown) and returns the exit status."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        status = self.process.wait(timeout=REPLY_TIMEOUT)
        # The process has exited, but its last stderr bytes may still be on their way to
        # `stderr`: wait for the reader to see the end of the pipe.
        self._stderr_reader.join(timeout=REPLY_TIMEOUT)
        return status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            try:
                self.close()
            except subprocess.TimeoutExpired:
                self.process.kill()
        return False


def expect_refused(server, store, action, code, pointer=None):
    """Dispatches `action` and checks that it is refused with `code` (and `pointer`)."""
    with pytest.raises(RPCError) as refused:
        server.dispatch(store, action)
    assert refused.value.code == code, refused.value.error
    if pointer is not None:
        assert refused.value.data.get("pointer") == pointer, refused.value.error
    return refused.value
