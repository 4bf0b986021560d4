"""Issue 12: more than one client on one running core (`--listen`, `stateserver attach`), and
only its owner's.

Every attached client's lines are validated against the protocol schema like the stdio
client's. Waits are bounded by 30 s as failure bounds only; nothing sleeps and hopes.
"""
import array
import fcntl
import json
import os
import pathlib
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import termios
import time

import pytest

from conftest import SchemaCheck, line_validator
from stateserver import Client, Mirror

BOUND = 30
F_GETPIPE_SZ = 1032  # Linux; Python's fcntl names it from 3.10 on, not everywhere


def until(predicate, what, timeout=BOUND):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


@pytest.fixture
def sock_dir(tmp_path):
    directory = tmp_path / "run"
    directory.mkdir(mode=0o700)
    return directory


@pytest.fixture
def attach(stateserver_bin, protocol_schema):
    """Attaches a `Client` through `stateserver attach PATH`; lines are schema-checked."""
    validator = line_validator(protocol_schema)
    started = []

    def start(path):
        check = SchemaCheck(validator)
        client = Client.attach(path, command=stateserver_bin, on_line=check, record=100_000)
        client.schema_check = check
        started.append(client)
        return client

    yield start
    failures = []
    for client in started:
        if client.process.poll() is None:
            client.process.kill()
        client.process.wait(timeout=BOUND)
        failures += client.schema_check.failures
    assert not failures, "attached lines that do not match the schema:\n" + "\n".join(failures[:20])


def listening(spawn, path, *args):
    """A core serving stdio and `path`; returns once the socket accepts."""
    server = spawn("--listen", str(path), *args)
    server.request("store/list")  # the socket is bound before any input is read
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    return server


def raw_connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(BOUND)
    s.connect(str(path))
    return s


def request_line(id, method, params=None):
    message = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def read_response(s, id):
    """Reads lines from a raw socket until the response to `id`; returns it."""
    buffer = b""
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") == id and "method" not in message:
                return message
        chunk = s.recv(1 << 16)
        assert chunk, f"the core closed the connection before answering {id}"
        buffer += chunk


def attached_count(server):
    return server.request("store/list")["attachedClients"]


def test_two_clients_interleaved_mirrors_exact_after_every_step(spawn, attach, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    guest = attach(path)
    assert guest.request("initialize", {"client": {"name": "guest"}})["attachedClients"] == 1
    assert attached_count(owner) == 1
    mirrors = [Mirror(client, store) for client in (owner, guest) for store in ("counter", "notes")]
    actions = [
        ("counter", {"type": "increment"}), ("notes", {"type": "add", "text": "a"}),
        ("counter", {"type": "set", "value": 40}), ("counter", {"type": "decrement"}),
        ("notes", {"type": "add", "text": "b"}), ("counter", {"type": "reset"}),
    ]
    for step in range(60):
        client = owner if step % 3 else guest  # interleaved, unevenly
        store, action = actions[step % len(actions)]
        client.dispatch(store, action)
        for mirror in mirrors:
            truth = mirror.client.request("state/get", {"store": mirror.store})
            assert mirror.sync(truth["version"]) == truth["state"], (step, mirror.store)
    # The truth is the same for both clients: one core, one set of stores.
    for store in ("counter", "notes"):
        assert owner.request("state/get", {"store": store}) == guest.request(
            "state/get", {"store": store})
    # A patch's cause is the id of the client's own request, never another client's.
    guest_ids = {json.dumps(m["id"]) for m in guest.messages if "id" in m and "method" not in m}
    for message in guest.notifications:
        if message["method"] == "state/patch" and "cause" in message["params"]:
            assert json.dumps(message["params"]["cause"]) in guest_ids
    assert guest.close() == 0
    until(lambda: attached_count(owner) == 0, "the guest to be gone")
    assert owner.close() == 0


def test_store_opened_and_closed_by_one_client_reaches_the_other(spawn, attach, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    guest = attach(path)
    guest.request("store/list")
    owner.request("store/open", {"feature": "counter", "store": "shared"})
    guest.dispatch("shared", {"type": "increment"})
    until(lambda: any(m["method"] == "state/patch" and m["params"]["store"] == "shared"
                      for m in list(owner.notifications)), "the owner to see the guest's patch")
    guest.request("store/close", {"store": "shared"})
    owner.wait_for(lambda m: m.get("method") == "store/closed"
                   and m["params"] == {"store": "shared", "reason": "closed"})
    assert guest.close() == 0
    assert owner.close() == 0


def test_attached_shutdown_or_end_of_input_ends_only_that_connection(spawn, attach, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    guest = attach(path)
    # A settled wait in flight when the guest ends is answered before its connection closes.
    guest.send({"jsonrpc": "2.0", "id": "slow", "method": "dispatch", "params": {
        "store": "counter", "action": {"type": "incrementLater", "afterMs": 200},
        "wait": "settled"}})
    assert guest.request("shutdown") == {}
    assert guest.process.wait(timeout=BOUND) == 0
    guest.wait_closed()
    assert guest.response("slow")["result"]["store"] == "counter"
    # The core goes on serving the owner and new clients.
    assert owner.dispatch("counter", {"type": "increment"})["version"] >= 2
    other = attach(path)
    assert other.request("store/list")["attachedClients"] >= 1
    assert other.close() == 0
    until(lambda: attached_count(owner) == 0, "every guest to be gone")
    assert owner.close() == 0


def test_owner_end_closes_every_attached_client_and_removes_the_socket(spawn, attach, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    guest = attach(path)
    guest.request("state/subscribe", {"store": "notes", "path": "/notes"})
    assert owner.close() == 0
    guest.wait_closed()
    closed = {m["params"]["store"]: m["params"]["reason"]
              for m in guest.notifications if m["method"] == "store/closed"}
    assert closed["notes"] == "shutdown" and closed["counter"] == "shutdown"
    assert guest.process.wait(timeout=BOUND) == 0
    assert not path.exists()


def test_signal_drains_then_closes_attached_and_removes_the_socket(spawn, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    s = raw_connect(path)
    s.sendall(request_line(1, "store/list"))
    assert read_response(s, 1)["result"]["attachedClients"] == 1
    owner.process.send_signal(signal.SIGTERM)
    assert owner.process.wait(timeout=BOUND) == 0
    rest = b""
    while chunk := s.recv(1 << 16):
        rest += chunk
    assert b'"reason":"shutdown"' in rest
    assert not path.exists()


def test_a_stalled_attached_client_never_stops_the_owner(spawn, sock_dir):
    """A client that reads nothing: the owner's flood is answered in full, and the core ends
    without waiting on it for more than the drain timeout."""
    path = sock_dir / "core.sock"
    owner = listening(spawn, path, "--drain-timeout", "0.2")
    stalled = raw_connect(path)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.sendall(request_line(1, "initialize", {}))
    until(lambda: attached_count(owner) == 1, "the stalled client to be attached")
    total = 20000
    lines = b"".join(
        request_line(i, "dispatch", {"store": "counter", "action": {"type": "increment"}})
        for i in range(1, total + 1))
    owner.send_bytes(lines)
    assert owner.response(total, timeout=BOUND)["result"]["version"] == total
    assert owner.request("state/get", {"store": "counter"})["state"]["count"] == total
    assert owner.close() == 0
    stalled.close()
    assert not path.exists()


def test_an_owner_that_stops_reading_never_stops_the_core(stateserver_bin, sock_dir):
    """The stdio client stops reading while its answers are about 3,000 bytes each: that many
    answers fill a pipe's page-sized slots (sixteen) at under three quarters of its bytes, so
    the unread count cannot tell whether the next answer fits. The core must go on serving an
    attached client (its main thread never waits on the pipe), and once the owner reads again
    every answer arrives, in order."""
    path = sock_dir / "core.sock"
    server = subprocess.Popen([stateserver_bin, "--ephemeral", "--listen", str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    try:
        out = server.stdout.fileno()

        def unread():
            count = array.array("i", [0])
            fcntl.ioctl(out, termios.FIONREAD, count)
            return count[0]

        def send(line):
            server.stdin.write(line)
            server.stdin.flush()

        page = os.sysconf("SC_PAGE_SIZE")
        slots = fcntl.fcntl(out, F_GETPIPE_SZ) // page
        notes = [{"id": f"n{i}", "text": "x" * (page // 5), "createdAt": "2026-01-01T00:00:00Z",
                  "updatedAt": "2026-01-01T00:00:00Z", "syncStatus": "synchronized"}
                 for i in range(3)]
        send(request_line(0, "store/open", {"feature": "notes", "store": "big",
                                            "state": {"notes": notes}}))
        until(lambda: unread() > 0, "the store/open answer")
        size = unread()
        # Between half a page and a page: no two answers share a slot.
        assert page // 2 < size < page, size
        for id in range(1, slots):
            before = unread()
            send(request_line(id, "state/get", {"store": "big"}))
            until(lambda: unread() > before, f"answer {id} in the pipe")
        assert unread() <= slots * page - page  # bytes to spare, and not one free slot
        send(request_line(slots, "state/get", {"store": "big"}))

        until(lambda: path.exists(), "the socket")
        guest = raw_connect(path)
        guest.sendall(request_line(1, "initialize", {}))
        assert "result" in read_response(guest, 1)
        guest.sendall(request_line(2, "store/list"))
        assert "big" in [store["store"] for store in read_response(guest, 2)["result"]["stores"]]
        guest.close()

        server.stdin.close()
        text = server.stdout.read()
        ids = [json.loads(line)["id"] for line in text.splitlines()]
        assert ids == list(range(0, slots + 1))
        assert server.wait(timeout=BOUND) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=BOUND)


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_thousand_connect_disconnect_cycles_leak_nothing(spawn, stateserver_bin, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path, "--log-level", "error")
    pid = owner.process.pid

    def cycle(n):
        kind = n % 4
        if n % 50 == 0:
            # Killed: a bridge process dies mid-request.
            bridge = subprocess.Popen([stateserver_bin, "attach", str(path)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            bridge.stdin.write(request_line(1, "dispatch", {
                "store": "counter", "action": {"type": "incrementLater", "afterMs": 5},
                "wait": "settled"}))
            bridge.stdin.flush()
            bridge.kill()
            bridge.wait(timeout=BOUND)
            bridge.stdin.close()
            bridge.stdout.close()
            return
        s = raw_connect(path)
        if kind == 1:
            s.sendall(request_line(n, "store/list"))
            read_response(s, n)
        elif kind == 2:
            # Mid-request: gone before the settled answer.
            s.sendall(request_line(n, "dispatch", {
                "store": "counter", "action": {"type": "incrementLater", "afterMs": 5},
                "wait": "settled"}))
        elif kind == 3:
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"state/get","params":{"sto')  # cut
        s.close()

    def settle():
        until(lambda: attached_count(owner) == 0, "every attached connection to end")
        return fd_count(pid), rss_kib(pid)

    for n in range(1, 101):  # warm-up: allocator pools, thread stacks
        cycle(n)
    fds_before, rss_before = settle()
    for n in range(101, 1001):
        cycle(n)
    fds_after, rss_after = settle()
    assert fds_after <= fds_before, (fds_before, fds_after)
    # 900 connections each hold a reader, a writer, queues and buffers (64 KiB of read buffer
    # alone): a leak of one connection each would grow the core by tens of MiB.
    assert rss_after - rss_before < 8 * 1024, (rss_before, rss_after)
    assert owner.dispatch("counter", {"type": "increment"})["store"] == "counter"
    s = raw_connect(path)
    s.sendall(request_line(7, "store/list"))
    assert read_response(s, 7)["result"]["attachedClients"] == 1
    s.close()
    assert owner.close() == 0


NOBODY_CLIENT = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
try:
    s.connect(sys.argv[1])
except OSError as error:
    print("connect-failed", error.errno)
    sys.exit(0)
data = b""
try:
    s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"store/list"}\\n')
    while chunk := s.recv(65536):
        data += chunk
except OSError:
    pass
print("received", len(data))
"""


def as_nobody(path):
    tool = shutil.which("setpriv")
    if os.geteuid() != 0 or tool is None:
        pytest.skip("needs root and setpriv to run a client as another user")
    result = subprocess.run(
        [tool, "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-c",
         NOBODY_CLIENT, str(path)], capture_output=True, text=True, timeout=BOUND)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.fixture
def reachable_dir():
    """A directory whose parents another user can traverse (pytest's tmp_path is 0700)."""
    top = pathlib.Path(tempfile.mkdtemp(prefix="stateserver-attach-"))
    top.chmod(0o711)
    yield top
    shutil.rmtree(top, ignore_errors=True)


def test_a_client_of_another_user_is_refused(spawn, reachable_dir):
    directory = reachable_dir / "run"
    directory.mkdir(mode=0o700)
    path = directory / "core.sock"
    owner = listening(spawn, path, "--log-level", "info")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    # The files alone keep nobody out: the directory cannot even be entered.
    assert as_nobody(path) == ["connect-failed", "13"]  # EACCES
    # With the files opened up, the core's own check still refuses and logs it.
    directory.chmod(0o711)
    path.chmod(0o666)
    assert as_nobody(path) == ["received", "0"]
    until(lambda: "refused a client of another user" in owner.stderr_text(), "the log line")
    assert attached_count(owner) == 0
    assert owner.close() == 0


def run_core(stateserver_bin, *args, env=None, input=b""):
    return subprocess.run([stateserver_bin, "--ephemeral", *args], input=input,
                          capture_output=True, timeout=BOUND, env=env)


def test_a_directory_others_can_write_is_refused_at_start(stateserver_bin, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    result = run_core(stateserver_bin, "--listen", str(shared / "core.sock"))
    assert result.returncode == 2
    assert b"writable by group or others" in result.stderr
    assert result.stdout == b""
    assert not (shared / "core.sock").exists()


def test_default_path_is_private_and_gone_after_exit(stateserver_bin, tmp_path):
    runtime = tmp_path / "xdg"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    core = subprocess.Popen([stateserver_bin, "--ephemeral", "--listen"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    path = runtime / "stateserver" / f"{core.pid}.sock"
    until(path.exists, "the default socket")
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    core.stdin.close()
    assert core.wait(timeout=BOUND) == 0
    core.stdout.close()
    assert not path.exists()
    # Without XDG_RUNTIME_DIR: a 0700 directory named for the uid in the temporary directory.
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env["TMPDIR"] = str(tmp_path)
    core = subprocess.Popen([stateserver_bin, "--ephemeral", "--listen"], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    path = tmp_path / f"stateserver-{os.getuid()}" / f"{core.pid}.sock"
    until(path.exists, "the default socket under TMPDIR")
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    core.stdin.close()
    assert core.wait(timeout=BOUND) == 0
    core.stdout.close()
    assert not path.exists()


def test_a_dead_socket_is_replaced_and_a_live_one_is_not(spawn, stateserver_bin, sock_dir):
    path = sock_dir / "core.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # the file stays; nothing answers on it
    owner = listening(spawn, path)
    second = run_core(stateserver_bin, "--listen", str(path))
    assert second.returncode == 2
    assert b"another server is answering" in second.stderr
    assert path.exists()  # the refused core left the live socket alone
    assert owner.close() == 0
    assert not path.exists()


def test_a_rewind_is_caused_by_its_own_client_only(spawn, attach, sock_dir):
    """A rewind's patch carries the rewinding client's own request id, as a dispatch's does;
    the other client, whose ids are its own, sees no cause (the owner once saw the guest's id
    as if it were its own request)."""
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    guest = attach(path)
    guest.request("dispatch", {"store": "counter", "action": {"type": "set", "value": 3}}, id=7)
    rewound = guest.request("store/rewind", {"store": "counter", "version": 0}, id=8)["version"]
    owner.request("state/get", {"store": "counter"})  # a barrier: the patch came before it

    def patch_to(client, version):
        patches = [m["params"] for m in client.notifications
                   if m["method"] == "state/patch" and m["params"]["store"] == "counter"
                   and m["params"]["to"] == version]
        assert len(patches) == 1, patches
        return patches[0]

    assert patch_to(guest, rewound).get("cause") == 8
    assert "cause" not in patch_to(owner, rewound)
    # History names the request by its own id and the client that sent it (schema-checked).
    entries = guest.request("history/get", {"store": "counter"})["entries"]
    assert [(e["kind"], e["origin"]) for e in entries[-2:]] == [
        ("action", {"request": 7, "client": 1}), ("rewind", {"request": 8, "client": 1})]
    assert guest.close() == 0
    assert owner.close() == 0


def test_attach_from_a_shell_pipe(spawn, stateserver_bin, sock_dir):
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    owner.dispatch("counter", {"type": "set", "value": 5})
    one_liner = (
        """printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"state/get","params":{"store":"counter"}}' """
        f"| {stateserver_bin} attach {path}")
    result = subprocess.run(["sh", "-c", one_liner], capture_output=True, timeout=BOUND)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["result"]["state"]["count"] == 5
    missing = subprocess.run([stateserver_bin, "attach", str(sock_dir / "none.sock")],
                             capture_output=True, timeout=BOUND)
    assert missing.returncode == 1 and b"cannot connect" in missing.stderr
    usage = subprocess.run([stateserver_bin, "attach"], capture_output=True, timeout=BOUND)
    assert usage.returncode == 2 and b"usage: stateserver attach PATH" in usage.stderr
    assert owner.close() == 0


def test_help_lists_listen_and_attach(stateserver_bin):
    text = subprocess.run([stateserver_bin, "--help"], capture_output=True, text=True,
                          timeout=BOUND).stdout
    assert "--listen [PATH]" in text and "stateserver attach PATH" in text


def test_an_attached_client_that_never_reads_events_is_cut_off(spawn, sock_dir):
    """Events never merge: a client that reads nothing while events pile up is closed once its
    queue passes the bound, and the owner is served throughout."""
    path = sock_dir / "core.sock"
    owner = listening(spawn, path, "--drain-timeout", "0.2", "--log-level", "warning")
    stalled = raw_connect(path)
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stalled.sendall(request_line(1, "initialize", {}))
    until(lambda: attached_count(owner) == 1, "the stalled client to be attached")
    total = 12000  # each an event (a toast); the bound is 4096 queued messages
    owner.send_bytes(b"".join(
        request_line(i, "dispatch", {"store": "navigation", "action": {
            "type": "push", "destination": {"screen": "userDetail", "userId": 999999}}})
        for i in range(1, total + 1)))
    assert "result" in owner.response(total, timeout=BOUND)
    until(lambda: attached_count(owner) == 0, "the stalled client to be closed")
    assert "an attached client stopped reading; closing it" in owner.stderr_text()
    stalled.close()
    assert owner.close() == 0


def test_an_attached_client_that_falls_behind_gets_coalesced_patches_that_apply(
        spawn, attach, sock_dir):
    """The guest stops reading while the owner floods both stores; once it reads again its
    mirrors, built from its own coalesced patches, equal `state/get`, in fewer lines."""
    path = sock_dir / "core.sock"
    owner = listening(spawn, path)
    guest = attach(path)
    mirrors = [Mirror(guest, "counter"), Mirror(guest, "notes", "/notes")]
    guest.pause()
    total = 20000
    owner.send_bytes(b"".join(
        request_line(i, "dispatch", {"store": "counter", "action": {"type": "increment"}})
        if i % 100 else
        request_line(i, "dispatch", {"store": "notes", "action": {"type": "add", "text": str(i)}})
        for i in range(1, total + 1)))
    assert "result" in owner.response(total, timeout=BOUND)
    guest.resume()
    for mirror in mirrors:
        truth = guest.request("state/get", {"store": mirror.store, "path": mirror.path})
        assert mirror.sync(truth["version"]) == truth["state"]
        assert mirror.resyncs == 0
    counter_patches = [m for m in guest.notifications
                       if m["method"] == "state/patch" and m["params"]["store"] == "counter"]
    assert len(counter_patches) < total - total // 100  # some were merged
    assert guest.close() == 0
    assert owner.close() == 0
