"""The HTTP hook transport lets no other local user in and no request past its bounds (issue 24,
items 2, 4 and 10).

- Item 2: `install claude-code --transport http` kept an existing `settings.json`'s mode (often
  0644) while writing the token into it; another user read the token, posted a failed `Edit` of
  the victim's secret file to `127.0.0.1:PORT`, and got its lines back. Now the file is 0600, the
  server refuses a caller of another user (its TCP socket's owner) even with the token, and a
  payload for a session the agent's own command hook did not start.
- Item 4: each refused request logged its raw path: 3,000 made 180 MB of log, escape sequences
  included. Now one sanitised bounded line per 10 s.
- Item 10: a 404/413 left the body unread on a kept-alive connection, and the body ran as a
  second hook call. Now an answer other than 200 closes the connection.

A real resident server, real sockets, a real second user (`nobody`, via `runuser`) when the
test runs as root (CI), else that part is skipped with the reason."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from supervisor.hooks.budget import Budget
from supervisor.hooks.http_transport import TOKEN_HEADER, HttpConfig, load_config
from supervisor.hooks.runtime import run_safely
from tests.conftest import cli_env, run_cli
from tests.hook_helpers import events, payload
from tests.hookd_helpers import stop_servers

pytestmark = pytest.mark.slow

SECRET = "DB_PASSWORD=hunter2-the-victims-own"


def _install(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_cli("install", "claude-code", "--transport", "http", HOME=str(tmp_path / "home"),
                   CLAUDE_CONFIG_DIR="", SUPERVISOR_HOME=str(tmp_path / "store"))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, HttpConfig, Path]]:
    """(root, its HTTP configuration, the victim's work tree with a session started in it)."""
    (tmp_path / "home").mkdir()
    assert _install(tmp_path).returncode == 0
    root = tmp_path / "store"
    socket_path = root / "run" / "hook-adv.sock"
    socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with (root / "run" / "hookd.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor.hooks.server", "--root", str(root), "--socket",
             str(socket_path)], env=cli_env(SUPERVISOR_HOME=str(root)), stdout=log, stderr=log)
    config = load_config(root)
    assert config is not None
    end = time.monotonic() + 30
    while "serving HTTP hooks" not in _log(root):
        assert time.monotonic() < end and proc.poll() is None, _log(root)
        time.sleep(0.05)
    ws = tmp_path / "victim"
    ws.mkdir()
    (ws / "secrets.env").write_text(f"# prod\n{SECRET}\n")
    start = json.dumps(payload("SessionStart", cwd=ws, source="startup")).encode()
    assert run_safely("claude-code", start, root, Budget(60, time.monotonic()), print) == ""
    yield root, config, ws
    proc.terminate()
    proc.wait(timeout=30)
    stop_servers(root)


def _log(root: Path) -> str:
    log = root / "run" / "hookd.log"
    return log.read_text(errors="replace") if log.exists() else ""


def _edit_failure(ws: Path, session: str = "loop-1") -> bytes:
    edit = {"file_path": str(ws / "secrets.env"), "old_string": "DB_PASSWORD=guess",
            "new_string": "x"}
    return json.dumps(payload("PostToolUseFailure", session=session, cwd=ws, tool_name="Edit",
                              tool_input=edit, tool_use_id="toolu_steal",
                              error="String to replace not found in file.")).encode()


def _request(config: HttpConfig, body: bytes, target: str = "claude-code",
             token: str | None = None) -> bytes:
    head = (f"POST /hooks/{target}?timeout=30 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n")
    if token is not None:
        head += f"{TOKEN_HEADER}: {token}\r\n"
    return head.encode() + b"\r\n" + body


def _exchange(config: HttpConfig, raw: bytes, wait: float = 5.0) -> bytes:
    """Send `raw` on one connection; everything the server answers until it closes or is
    quiet for `wait` seconds."""
    with socket.create_connection(("127.0.0.1", config.port), timeout=wait) as conn:
        conn.sendall(raw)
        got = b""
        try:
            while chunk := conn.recv(65536):
                got += chunk
        except TimeoutError:
            pass
    return got


def test_the_settings_file_holding_the_token_is_private(tmp_path: Path) -> None:
    settings = tmp_path / "home" / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "dark"}\n')
    settings.chmod(0o644)  # as editors and dotfile managers leave it
    assert _install(tmp_path).returncode == 0
    assert TOKEN_HEADER in settings.read_text()
    assert settings.stat().st_mode & 0o077 == 0
    for backup in settings.parent.glob("settings.json*"):
        assert backup.stat().st_mode & 0o077 == 0, backup  # a backup may hold a token too


def test_a_session_the_agent_did_not_start_is_refused(served) -> None:
    root, config, ws = served
    # the right token, but a session this root never saw: nothing recorded, nothing read
    answer = _exchange(config, _request(config, _edit_failure(ws, "forged-1"),
                                        token=config.token))
    assert answer.startswith(b"HTTP/1.1 403") and b"hunter2" not in answer
    assert not (root / "sessions" / "forged-1").exists()
    # the real session from another directory: refused too
    elsewhere = _edit_failure(ws.parent)
    answer = _exchange(config, _request(config, elsewhere, token=config.token))
    assert answer.startswith(b"HTTP/1.1 403")
    # the session's own call is answered (and the file lies in its tree, so it is read)
    answer = _exchange(config, _request(config, _edit_failure(ws), token=config.token), 2)
    assert answer.startswith(b"HTTP/1.1 200")


def test_another_user_with_the_token_is_refused(served) -> None:
    root, config, ws = served
    runuser = shutil.which("runuser")
    if os.geteuid() == 0 and runuser and os.path.exists("/usr/bin/python3"):
        body = _edit_failure(ws).decode()
        code = textwrap.dedent(f"""
            import sys, urllib.request, urllib.error
            req = urllib.request.Request("http://127.0.0.1:{config.port}/hooks/claude-code"
                                         "?timeout=30", data=sys.stdin.buffer.read(),
                                         headers={{"{TOKEN_HEADER}": "{config.token}"}})
            try:
                print(urllib.request.urlopen(req, timeout=30).status)
            except urllib.error.HTTPError as exc:
                print(exc.code, exc.read().decode())
            """)
        done = subprocess.run([runuser, "-u", "nobody", "--", "/usr/bin/python3", "-c", code],
                              input=body.encode(), capture_output=True, timeout=60,
                              env={"PATH": "/usr/bin:/bin", "HOME": "/"})
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(b"403") and b"hunter2" not in done.stdout
        assert not [e for e in events(root, "loop-1") if e.get("call_id") == "toolu_steal"]
        assert "not as this server's user" in _log(root)
    else:
        pytest.skip("needs root and runuser to act as another local user (CI runs as root)")


def test_refused_requests_cost_a_bounded_sanitised_log(served) -> None:
    root, config, _ws = served
    before = len(_log(root).encode())
    path = "/hooks/claude-code?" + "\x1b]0;owned\x07\x1b[2J" + "A" * 50_000
    raw = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").encode()
    for _ in range(300):
        _exchange(config, raw, wait=2)
    grown = _log(root).encode()[before:]
    assert len(grown) < 2_000, len(grown)
    assert b"\x1b" not in grown and b"\x07" not in grown
    assert b"refused an HTTP hook call: without the right token" in grown


@pytest.mark.parametrize("outer", ["nobody", "too-large"])
def test_an_unread_body_never_runs_as_a_second_call(served, outer: str) -> None:
    root, config, ws = served
    inner = _request(config, json.dumps(payload(
        "PreToolUse", cwd=ws, tool_name="Bash", tool_input={"command": "echo smuggled"},
        tool_use_id="toolu_smuggled")).encode(), token=config.token)
    if outer == "nobody":  # a 404: the target does not exist
        raw = _request(config, inner, target="nobody", token=config.token)
    else:  # a 413: the length says more than the limit, the body is the smuggled request
        raw = (b"POST /hooks/claude-code?timeout=30 HTTP/1.1\r\nHost: x\r\n"
               + f"{TOKEN_HEADER}: {config.token}\r\nContent-Length: 99999999999\r\n\r\n".encode()
               + inner)
    answer = _exchange(config, raw, wait=3)
    assert answer.count(b"HTTP/1.1 ") == 1, answer
    time.sleep(0.5)
    assert not [e for e in events(root, "loop-1") if e.get("call_id") == "toolu_smuggled"]


def test_the_server_log_rotates(tmp_path: Path) -> None:
    root = tmp_path / "store"
    run = root / "run"
    run.mkdir(mode=0o700, parents=True)
    log_path = run / "hookd.log"
    log_path.write_bytes(b"old line\n" * 600_000)  # 5.4 MB, past the 4 MiB limit
    log_path.chmod(0o600)  # as the hook client creates it
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor.hooks.server", "--root", str(root), "--socket",
             str(run / "hook-rot.sock")], env=cli_env(SUPERVISOR_HOME=str(root)),
            stdout=log, stderr=log)
    try:
        end = time.monotonic() + 30
        while not (run / "hookd.log.1").exists():
            assert time.monotonic() < end and proc.poll() is None, "never rotated"
            time.sleep(0.05)
        proc.terminate()
        proc.wait(timeout=30)
        assert log_path.stat().st_size < 4096  # the new log goes on where it was
        assert "stopped" in log_path.read_text()
        assert (run / "hookd.log.1").stat().st_mode & 0o077 == 0
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)
        stop_servers(root)
