"""The HTTP hook transport: the installer's entries, and the resident server answering HTTP hook
calls (token checked, same answers and holds as the command transport), in real processes."""

import contextlib
import json
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from supervisor.hooks import client
from supervisor.hooks.budget import Budget
from supervisor.hooks.http_transport import CONFIG_FILE, TOKEN_HEADER, is_our_url, load_config
from supervisor.hooks.runtime import run_safely
from supervisor.operator.send import send_decision
from tests.conftest import cli_env, run_cli
from tests.hook_helpers import events, payload
from tests.hookd_helpers import server_pids, stop_servers

PER_CALL = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch")


def _install(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return run_cli("install", "claude-code", *args, HOME=str(home), CLAUDE_CONFIG_DIR="",
                   SUPERVISOR_HOME=str(tmp_path / "store"))


def _settings(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "home" / ".claude" / "settings.json").read_text())


@pytest.mark.slow
def test_install_http_writes_http_entries_for_the_per_call_events(tmp_path: Path) -> None:
    done = _install(tmp_path, "--transport", "http", "--timeout", "120")
    assert done.returncode == 0, done.stderr
    config = load_config(tmp_path / "store")
    assert config is not None and len(config.token) >= 32
    assert oct((tmp_path / "store" / CONFIG_FILE).stat().st_mode & 0o777) == "0o600"
    hooks = _settings(tmp_path)["hooks"]
    for event, groups in hooks.items():
        [entry] = groups[0]["hooks"]
        if event in PER_CALL:
            assert entry["type"] == "http" and is_our_url(entry["url"], "claude-code")
            assert entry["url"].startswith(f"http://127.0.0.1:{config.port}/hooks/claude-code")
            assert entry["headers"] == {TOKEN_HEADER: config.token}
            held = event in ("PreToolUse", "PostToolBatch")
            assert entry["timeout"] == (120 if held else 60)
            assert entry["url"].endswith(f"?timeout={entry['timeout']}")
        else:  # these start the server when it is down, for the root the HTTP entries reach
            assert entry["type"] == "command"
            seconds = 120 if event == "PreSkillShellCommand" else 60  # may hold too
            assert entry["command"].endswith(
                f"claude-code --timeout {seconds} --root {tmp_path / 'store'}")
    # idempotent: the same port and token, nothing changed
    again = _install(tmp_path, "--transport", "http", "--timeout", "120")
    assert "nothing changed" in again.stdout and load_config(tmp_path / "store") == config


@pytest.mark.slow
def test_switching_transports_and_uninstall_give_the_file_back(tmp_path: Path) -> None:
    path = tmp_path / "home" / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    original = '{"model": "opus",\n "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": ' \
               '[{"type": "command", "command": "~/bin/check"}]}]}}\n'
    path.write_text(original)
    assert _install(tmp_path, "--transport", "http").returncode == 0
    assert _install(tmp_path).returncode == 0  # back to command entries, replaced in place
    hooks = _settings(tmp_path)["hooks"]
    ours = [h for g in hooks["PreToolUse"] for h in g["hooks"] if h["command" if "command" in h
                                                                     else "url"] != "~/bin/check"]
    assert [h["type"] for h in ours] == ["command"] and "url" not in ours[0]
    assert _install(tmp_path, "--transport", "http").returncode == 0
    home = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": ""}
    done = run_cli("uninstall", "claude-code", **home)
    assert done.returncode == 0, done.stderr
    assert path.read_text() == original


@pytest.mark.slow
def test_http_needs_a_target_with_http_hooks_and_a_sane_port(tmp_path: Path) -> None:
    done = _install(tmp_path, "--transport", "http", "--port", "70000")
    assert done.returncode == 2 and "supervisor: error: --port must be" in done.stderr
    dry = _install(tmp_path, "--transport", "http", "--dry-run")
    assert dry.returncode == 0 and "a new secret token" in dry.stdout
    assert not (tmp_path / "store" / CONFIG_FILE).exists()  # a dry run writes nothing


def test_the_client_knows_the_config_file_name() -> None:
    assert client.HTTP_CONFIG == CONFIG_FILE  # the client is stdlib only: no import of it


@pytest.fixture
def served(tmp_path: Path):
    """A root with an HTTP configuration and its resident server running."""
    assert _install(tmp_path, "--transport", "http").returncode == 0
    root = tmp_path / "store"
    socket_path = root / "run" / "hook-test.sock"
    socket_path.parent.mkdir(mode=0o700, parents=True)
    with (root / "run" / "hookd.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor.hooks.server", "--root", str(root), "--socket",
             str(socket_path)], env=cli_env(SUPERVISOR_HOME=str(root)),
            stdout=log, stderr=log)
    config = load_config(root)
    assert config is not None
    end = time.monotonic() + 30
    while "serving HTTP hooks" not in _log(root):
        assert time.monotonic() < end and proc.poll() is None, _log(root)
        time.sleep(0.05)
    yield root, config
    proc.terminate()
    proc.wait(timeout=30)
    stop_servers(root)


@pytest.mark.slow
def test_the_port_answers_once_the_socket_exists(tmp_path: Path) -> None:
    """A client that starts the server waits for its socket, then lets the agent's HTTP hooks
    go (`client._start_server`): by then the port must answer, or the agent's first calls would
    pass unsupervised while the server is still coming up."""
    import socket

    assert _install(tmp_path, "--transport", "http").returncode == 0
    root = tmp_path / "store"
    config = load_config(root)
    assert config is not None
    socket_path = root / "run" / "hook-order.sock"
    socket_path.parent.mkdir(mode=0o700, parents=True)
    with (root / "run" / "hookd.log").open("ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor.hooks.server", "--root", str(root), "--socket",
             str(socket_path)], env=cli_env(SUPERVISOR_HOME=str(root)), stdout=log, stderr=log)
    try:
        end = time.monotonic() + 30
        while not socket_path.exists():
            assert time.monotonic() < end and proc.poll() is None, _log(root)
            time.sleep(0.001)
        with socket.create_connection(("127.0.0.1", config.port), timeout=5):
            pass  # refused (ConnectionRefusedError) when the port came up after the socket
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        stop_servers(root)


def _log(root: Path) -> str:
    log = root / "run" / "hookd.log"
    return log.read_text() if log.exists() else ""


def _post(config, body: dict, token: str | None = None, target: str = "claude-code",
          timeout: int = 60) -> tuple[int, str]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{config.port}/hooks/{target}?timeout={timeout}",
        data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 **({TOKEN_HEADER: token} if token is not None else {})})
    try:
        with urllib.request.urlopen(request, timeout=90) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _start(root: Path, ws: Path) -> None:
    """The session starts as it does for real: SessionStart is a command hook (the HTTP server
    answers only sessions the agent's own command hook started)."""
    data = json.dumps(payload("SessionStart", cwd=ws, source="startup")).encode()
    assert run_safely("claude-code", data, root, Budget(60, time.monotonic()), print) == ""


def _read(ws: Path, i: int) -> dict:
    return payload("PreToolUse", cwd=ws, tool_name="Read", tool_input={"file_path": f"/w/{i}"},
                   tool_use_id=f"toolu_{i}")


@pytest.mark.slow
def test_the_server_answers_http_hooks_only_with_the_token(served, tmp_path: Path) -> None:
    root, config = served
    ws = tmp_path / "ws"
    ws.mkdir()
    _start(root, ws)
    assert _post(config, _read(ws, 0))[0] == 403
    assert _post(config, _read(ws, 0), token="x" * 43)[0] == 403
    assert not [e for e in events(root, "loop-1")
                if e["type"] == "tool_call"]  # nothing refused reached the store
    assert "refused an HTTP hook call: without the right token" in _log(root)
    assert _post(config, _read(ws, 0), token=config.token, target="nobody")[0] == 404
    assert _post(config, _read(ws, 1), token=config.token) == (200, "{}")  # allowed: no answer
    assert [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_call"] == [
        "toolu_1"]
    send_decision(root, "loop-1", "abort", operator="ana")
    status, text = _post(config, _read(ws, 2), token=config.token)
    assert status == 200
    answer = json.loads(text)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert answer["continue"] is False


@pytest.mark.slow
def test_an_http_hook_call_is_held_and_answered_like_a_command_one(
    served, tmp_path: Path
) -> None:
    root, config = served
    ws = tmp_path / "ws"
    ws.mkdir()
    _start(root, ws)
    assert _post(config, _read(ws, 0), token=config.token)[0] == 200
    send_decision(root, "loop-1", "pause", operator="ana")
    import threading

    got: list[tuple[int, str]] = []
    held = threading.Thread(target=lambda: got.append(_post(config, _read(ws, 1),
                                                            token=config.token)))
    held.start()
    end = time.monotonic() + 30
    while not [e for e in events(root, "loop-1") if e["type"] == "escalation"]:
        assert time.monotonic() < end, "no escalation"
        time.sleep(0.05)
    assert held.is_alive()
    done = run_cli("answer", "loop-1", "--guidance", "Read the README first.", "--operator",
                   "ana", SUPERVISOR_HOME=str(root))
    assert done.returncode == 0, done.stderr
    held.join(timeout=30)
    [(status, text)] = got
    reason = json.loads(text)["hookSpecificOutput"]["permissionDecisionReason"]
    assert status == 200 and "Read the README first." in reason


@pytest.mark.slow
def test_an_http_hold_answers_within_the_entry_timeout(served, tmp_path: Path) -> None:
    root, config = served
    ws = tmp_path / "ws"
    ws.mkdir()
    _start(root, ws)
    assert _post(config, _read(ws, 0), token=config.token)[0] == 200
    send_decision(root, "loop-1", "pause", operator="ana")
    started = time.monotonic()
    status, text = _post(config, _read(ws, 1), token=config.token, timeout=13)
    took = time.monotonic() - started
    assert status == 200 and took < 13 - 2
    answer = json.loads(text)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "on hold" in answer[
        "permissionDecisionReason"]
    # an operator's pause has no deadline: it still holds, no fallback applied
    applied = [e for e in events(root, "loop-1") if e["type"] == "decision_applied"]
    assert [e["action"] for e in applied] == ["pause"]


@pytest.mark.slow
def test_a_running_server_answers_http_hooks_installed_after_it_started(tmp_path: Path) -> None:
    """`install --transport http` while the root's server runs (command hooks started it, and
    the command hooks that stay keep it alive): the next command hook finds the port answering
    and the session's HTTP hooks are supervised. The server read the configuration only when it
    started, so every HTTP hook was refused and Claude Code let those calls go unchecked."""
    assert _install(tmp_path).returncode == 0  # the command transport: no HTTP configuration
    root, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    env = cli_env(SUPERVISOR_HOME=str(root), HOME=str(tmp_path / "home"))

    def command_hook(event: str, **fields: object) -> None:
        """A command hook as Claude Code runs it: the client, through the resident server."""
        done = subprocess.run(
            [sys.executable, "-m", "supervisor.hooks.client", "claude-code", "--root",
             str(root)], input=json.dumps(payload(event, cwd=ws, **fields)), env=env,
            capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr

    try:
        command_hook("SessionStart", source="startup")  # no server yet: this starts one
        end = time.monotonic() + 30
        while "serving on" not in _log(root):
            assert time.monotonic() < end, _log(root)
            time.sleep(0.05)
        assert "serving HTTP hooks" not in _log(root)
        assert _install(tmp_path, "--transport", "http").returncode == 0
        config = load_config(root)
        assert config is not None
        command_hook("UserPromptSubmit", prompt="read the files")  # answered by that server
        assert "serving HTTP hooks" in _log(root)
        assert _post(config, _read(ws, 1), token=config.token) == (200, "{}")
        assert [e["call_id"] for e in events(root, "loop-1") if e["type"] == "verdict"] == [
            "toolu_1"]
    finally:
        stop_servers(root)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("strace") is None or not sys.platform.startswith("linux"),
                    reason="reads the server's system calls with strace")
def test_calls_of_agents_without_http_hooks_do_not_look_for_the_configuration(
        tmp_path: Path) -> None:
    """The server's workers `stat` the HTTP configuration before a call only for targets whose
    agent can send HTTP hooks (Claude Code, Qwen Code); a Droid or Codex call, whose sessions
    never need the port, paid that `stat` (about 0.04 ms) on every call. The tidy tick still
    looks (its thread never accepts a call, so it is told apart)."""
    root, ws = tmp_path / "store", tmp_path / "ws"
    ws.mkdir()
    env = cli_env(SUPERVISOR_HOME=str(root))

    def call(target: str, i: int) -> None:
        body = payload("PreToolUse", f"{target}-1", cwd=ws, tool_name="Read",
                       tool_input={"file_path": f"/w/{i}"}, tool_use_id=f"toolu_{i}")
        done = subprocess.run([sys.executable, "-m", "supervisor.hooks.client", target],
                              input=json.dumps(body), env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr

    try:
        call("droid", 0)  # no server yet: this starts one
        end = time.monotonic() + 30
        while not server_pids(root):
            assert time.monotonic() < end, _log(root)
            time.sleep(0.05)
        pid = server_pids(root)[0]
        trace = tmp_path / "trace"
        tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=%file,%network",
                                   "-o", str(trace), "-p", str(pid)], stderr=subprocess.PIPE)
        try:
            time.sleep(1)  # (attached to every thread)
            looked: dict[str, set[str]] = {}
            for target, i in (("droid", 1), ("codex", 2), ("droid", 3), ("claude-code", 4)):
                mark = trace.read_text() if trace.exists() else ""
                call(target, i)
                time.sleep(0.2)
                lines = trace.read_text()[len(mark):].splitlines()
                workers = {line.split()[0] for line in lines if "accept" in line}
                looked.setdefault(target, set()).update(
                    line.split()[0] for line in lines if CONFIG_FILE in line
                    and line.split()[0] in workers)
        finally:
            tracer.terminate()
            tracer.wait(timeout=30)
        assert looked["claude-code"]  # (strace saw a worker look: the test can see it)
        assert not looked["droid"] and not looked["codex"]
    finally:
        stop_servers(root)


def test_each_connection_sends_without_waiting_for_acks() -> None:
    """An answer is written as headers, then body; with Nagle's algorithm the body waited for
    the ACK of the headers, which an agent's kept-alive connection delays by up to 40 ms: the
    HTTP hooks cost Claude Code about 40 ms each. Each connection is TCP_NODELAY."""
    import http.client
    import socket

    from supervisor.hooks import http_transport as ht

    seen: list[int] = []

    class Probe(ht._RequestHandler):
        def do_POST(self) -> None:
            seen.append(self.connection.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            super().do_POST()

    config = ht.HttpConfig(port=0, token="t" * 43)
    listener = ht.HttpListener(config, lambda target, data, budget: "", contextlib.nullcontext,
                               lambda line: None)
    server = ht._Server((ht.HOST, 0), Probe)
    server.listener = listener
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        connection = http.client.HTTPConnection(ht.HOST, server.server_address[1], timeout=10)
        for _ in range(2):  # one kept-alive connection, as the agents keep theirs
            connection.request("POST", "/hooks/claude-code", body=b"{}",
                               headers={TOKEN_HEADER: config.token})
            answer = connection.getresponse()
            assert (answer.status, answer.read()) == (200, b"{}")
        connection.close()
    finally:
        server.shutdown()
        server.server_close()
        listener._server.server_close()
    assert seen == [1, 1]
