"""Peers that connect to the resident hook server and then stall (half a header, or nothing)
cannot keep an agent's calls waiting (issue 40: the fast path's "slow peer").

The server's threads each wait in `accept` and serve what they take (`server._worker`); a thread
that takes a stalling peer is stuck with it until `READ_TIMEOUT_S`, so the server must always
keep another one accepting. Real processes: a server started as the hook client starts it,
stalled connections from here, and calls through the native client, timed from outside."""

import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from supervisor.hooks import server
from tests.conftest import cli_env
from tests.hook_helpers import events, native_command, payload
from tests.hookd_helpers import server_pids, stop_servers

pytestmark = pytest.mark.slow

STALLED = 12


def _call(root: Path, ws: Path, i: int) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    body = payload("PreToolUse", "slow-1", cwd=ws, tool_name="Read",
                   tool_input={"file_path": f"/w/f{i}.py"}, tool_use_id=f"toolu_{i}")
    started = time.monotonic()
    done = subprocess.run(native_command("--timeout", "60"), input=json.dumps(body).encode(),
                          capture_output=True, timeout=60, env=cli_env(SUPERVISOR_HOME=str(root)))
    return time.monotonic() - started, done


def test_stalled_peers_keep_no_call_waiting(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    _took, first = _call(root, ws, 0)  # no server yet: the Python client starts one
    assert first.returncode == 0, first.stderr
    end = time.monotonic() + 30
    while not (server_pids(root) and list((root / "run").glob("hook-*.sock"))):
        assert time.monotonic() < end, "no server"
        time.sleep(0.05)
    path = next((root / "run").glob("hook-*.sock"))
    stalled = []
    try:
        for n in range(STALLED):  # half a header, or nothing at all, and then silence
            peer = socket.socket(socket.AF_UNIX)
            peer.connect(str(path))
            if n % 2:
                peer.sendall(b'{"target": "claude-code", "cwd": ')
            stalled.append(peer)
        for i in range(1, 4):
            took, done = _call(root, ws, i)
            assert done.returncode == 0 and done.stdout == b"", done.stderr
            assert took < server.READ_TIMEOUT_S / 3, f"call {i} waited {took:.1f} s"
        calls = [e["call_id"] for e in events(root, "slow-1") if e["type"] == "tool_call"]
        assert calls == [f"toolu_{i}" for i in range(4)]
    finally:
        for peer in stalled:
            peer.close()
        stop_servers(root)
