"""The resident server's channel as the in-agent plugins use it (OpenCode, Kilo, Cline): a call
framed by the header's `length` instead of a half-close, because Bun cannot half-close a socket
and still read the answer. A header that never ends, a `length` far larger than what comes (a
huge payload), one that is no number, and a peer that stops sending cost the server bounded
memory and time, and it goes on answering. (Another user cannot reach the socket: it is 0600 in
a 0700 `run/`, as for every client, `test_adv_two_users.py`; the plugin checks both as the hook
client does before it sends anything, `tests/test_hook_opencode.py`.) Real processes."""

import contextlib
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisor import __version__
from tests.conftest import cli_env
from tests.hook_helpers import events
from tests.hookd_helpers import stop_servers

pytestmark = pytest.mark.slow

HUGE = 40 * 1024 * 1024
BOUND_KB = 120 * 1024


def _payload(call: str, command: str = "ls") -> bytes:
    return json.dumps({"session_id": "relay-1", "hook_event_name": "PreToolUse",
                       "cwd": "/nonexistent", "tool_name": "Bash", "tool_use_id": call,
                       "tool_input": {"command": command}}).encode()


def _header(root: Path, **extra: object) -> bytes:
    return json.dumps({"target": "claude-code", "cwd": "/", "version": __version__,
                       "root": str(root), "timeout": 60, "reply": "raw", **extra}).encode()


def _ask(path: Path, data: bytes, timeout: float = 60) -> bytes:
    """Send `data` without half-closing; what the server answers before it closes."""
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(path))
        conn.sendall(data)
        conn.settimeout(timeout)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
        return reply


@pytest.fixture
def served(tmp_path: Path):
    root = tmp_path / "store"
    path = root / "run" / "hook-relay.sock"
    path.parent.mkdir(mode=0o700, parents=True)
    with (root / "run" / "hookd.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor.hooks.server", "--root", str(root), "--socket",
             str(path)], env=cli_env(SUPERVISOR_HOME=str(root)), stdout=log, stderr=log)
    try:
        end = time.monotonic() + 30
        while not path.exists():
            assert time.monotonic() < end and proc.poll() is None
            time.sleep(0.05)
        yield root, path, proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        stop_servers(root)


def _answers(root: Path, path: Path, call: str) -> None:
    """A well-framed plugin call is answered (allowed: status 0, nothing to say)."""
    body = _payload(call)
    assert _ask(path, _header(root, length=len(body)) + b"\n" + body) == b"0\n"


def test_a_length_framed_call_is_answered_without_a_half_close(served) -> None:
    root, path, _ = served
    _answers(root, path, "toolu_1")
    assert [e["call_id"] for e in events(root, "relay-1") if e["type"] == "tool_call"] == [
        "toolu_1"]


def test_a_header_that_never_ends_is_dropped(served) -> None:
    root, path, proc = served
    # no newline in 1 MiB: no header, the server hangs up (before all of it is sent)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        assert _ask(path, b"{" + b"x" * (1024 * 1024)) == b""
    _answers(root, path, "toolu_2")
    assert proc.poll() is None


def test_a_length_larger_than_what_comes_costs_bounded_memory(served) -> None:
    root, path, proc = served
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(path))
        head = b'{"session_id": "relay-1", "hook_event_name": "PreToolUse", "tool_name": "Bash",'
        conn.sendall(_header(root, length=1 << 40) + b"\n" + head + b' "x": "')
        block = b"x" * (1024 * 1024)
        for _ in range(HUGE // len(block)):
            conn.sendall(block)
        conn.shutdown(socket.SHUT_WR)  # it ends before its length: the call is what came
        conn.settimeout(60)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    assert reply.startswith(b"0\n")
    status = Path(f"/proc/{proc.pid}/status").read_text()
    peak_kb = int(next(line.split()[1] for line in status.splitlines()
                       if line.startswith("VmHWM:")))
    assert peak_kb < BOUND_KB, f"server peaked at {peak_kb // 1024} MB"
    _answers(root, path, "toolu_3")


@pytest.mark.parametrize("length", ["12", -5, 1.5, None])
def test_a_length_that_is_no_byte_count_waits_for_the_end(served, length) -> None:
    root, path, _ = served
    body = _payload("toolu_4")
    with socket.socket(socket.AF_UNIX) as conn:
        conn.connect(str(path))
        conn.sendall(_header(root, length=length) + b"\n" + body)
        conn.shutdown(socket.SHUT_WR)
        conn.settimeout(60)
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    assert reply == b"0\n"


def test_a_peer_that_stops_sending_does_not_stop_the_others(served) -> None:
    root, path, proc = served
    stalled = socket.socket(socket.AF_UNIX)
    try:
        stalled.connect(str(path))
        stalled.sendall(_header(root, length=10_000) + b"\n" + b'{"session_id": ')
        for i in range(3):  # served meanwhile, each in its own thread
            _answers(root, path, f"toolu_s{i}")
    finally:
        stalled.close()
    assert proc.poll() is None
