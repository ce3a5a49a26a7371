"""The resident hook server in real processes: started by the first call, serving later ones,
replaced after a crash, single under racing starts, gone when idle, and never in the way."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from supervisor import __version__
from supervisor.operator.send import send_decision
from supervisor.store.paths import session_files
from tests.conftest import cli_env, run_cli
from tests.hook_helpers import events, payload
from tests.hookd_helpers import server_pids, settled, wait_gone

CLIENT = [sys.executable, "-c", "import sys; from supervisor.hooks.client import main; "
          "st = main(); print(json.dumps(sorted(sys.modules)), file=sys.stderr); sys.exit(st)",
          "claude-code", "--timeout", "60"]
CLIENT[2] = "import json; " + CLIENT[2]
FORBIDDEN = ("pydantic", "textual", "watchfiles", "rapidfuzz", "argparse", "socket",
             "supervisor.engine", "supervisor.guard")


def _env(root: Path, **extra: str) -> dict[str, str]:
    return cli_env(SUPERVISOR_HOME=str(root), **extra)


def _start(body: dict, root: Path, **extra: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(CLIENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(root, **extra))
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(body).encode())
    proc.stdin.close()
    proc.stdin = None
    return proc


def _call(body: dict, root: Path, **extra: str) -> tuple[str, list[str]]:
    """One client call: (stdout, the modules the client process had loaded at its end)."""
    proc = _start(body, root, **extra)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    *_, modules = err.decode().splitlines()
    return out.decode(), json.loads(modules)


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def _read(ws: Path, i: int, event: str = "PreToolUse") -> dict:
    return payload(event, cwd=ws, tool_name="Read", tool_input={"file_path": f"/w/f{i}.py"},
                   tool_use_id=f"toolu_{i}")


def _wait_server(root: Path, timeout: float = 30, other_than: int | None = None) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pids = [p for p in server_pids(root) if p != other_than]
        if pids and list((root / "run").glob("hook-*.sock")):
            return pids[0]
        time.sleep(0.05)
    log = root / "run" / "hookd.log"
    raise AssertionError(f"no server: {log.read_text() if log.exists() else 'no log'}")


def _wait_listening(path: Path, running: Callable[[], bool] = lambda: True,
                    why: Callable[[], str] = lambda: "the server did not listen") -> None:
    """Until the server at `path` listens: its pid file, written after `listen` (the socket
    file appears at `bind`, before it, when a connection is still refused)."""
    end = time.monotonic() + 30
    while not Path(f"{path}.pid").exists():
        assert running() and time.monotonic() < end, why()
        time.sleep(0.01)


def _send_raw(path: Path, root: Path, ws: Path, i: int) -> socket.socket:
    """A connected socket that has sent call `i` (a Read) with a raw-reply header."""
    header = {"target": "claude-code", "cwd": str(ws), "version": __version__,
              "root": str(root), "timeout": 30.0, "reply": "raw"}
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(str(path))
    sock.sendall(json.dumps(header).encode() + b"\n" + json.dumps(_read(ws, i)).encode())
    sock.shutdown(socket.SHUT_WR)
    return sock


def _raw_call(path: Path, root: Path, ws: Path, i: int) -> bytes:
    """Call `i` straight over the server's socket: its raw answer (`0\\n` when allowed)."""
    with _send_raw(path, root, ws, i) as sock:
        return b"".join(iter(lambda: sock.recv(65536), b""))


def _check_session(root: Path, ids: list[str]) -> None:
    written = events(root, "loop-1")
    assert [e["seq"] for e in written] == list(range(1, len(written) + 1))
    calls = [e["call_id"] for e in written if e["type"] == "tool_call"]
    assert sorted(calls) == sorted(ids)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def test_the_client_and_the_cli_hook_path_import_nothing_heavy() -> None:
    code = ("import json, sys, supervisor.hooks.client, supervisor.cli; "
            "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=cli_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert _heavy(modules) == [] and "supervisor.cli.common" not in modules


@pytest.mark.slow
def test_the_first_call_starts_a_server_and_later_calls_are_served(
    tmp_path: Path, ws: Path
) -> None:
    root = tmp_path / "store"
    out, modules = _call(_read(ws, 0), root)
    assert out == ""  # allowed, answered in-process while the server starts
    assert "supervisor.hooks.runtime" in modules
    pid = _wait_server(root)
    assert oct((root / "run").stat().st_mode & 0o777) == "0o700"
    for i in (1, 2):
        out, modules = _call(_read(ws, i), root)
        assert out == "" and _heavy(modules) == []  # served: the client loaded no guard
    assert server_pids(root) == [pid]
    _check_session(root, ["toolu_0", "toolu_1", "toolu_2"])
    # a deny comes back through the server as it would in-process
    send_decision(root, "loop-1", "abort", operator="ana")
    out, modules = _call(_read(ws, 3), root)
    assert _heavy(modules) == []
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.slow
def test_a_bad_payload_through_the_server_lets_the_call_go(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _call(_read(ws, 0), root)
    _wait_server(root)
    proc = subprocess.Popen(CLIENT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(root))
    out, err = proc.communicate(b"not json", timeout=60)
    assert proc.returncode == 0 and out == b""
    assert _heavy(json.loads(err.decode().splitlines()[-1])) == []
    assert "ignored a payload it cannot use" in (root / "run" / "hookd.log").read_text()


@pytest.mark.slow
def test_a_killed_server_is_replaced_and_nothing_is_lost(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _call(_read(ws, 0), root)
    first = _wait_server(root)
    _call(_read(ws, 1), root)
    os.kill(first, signal.SIGKILL)
    wait_gone(first)  # (a process in the kernel, an fsync under load, dies when it returns)
    out, modules = _call(_read(ws, 2), root)  # refused: falls back in-process
    assert out == "" and "supervisor.hooks.runtime" in modules
    second = _wait_server(root, other_than=first)
    assert second != first
    out, modules = _call(_read(ws, 3), root)
    assert out == "" and _heavy(modules) == []
    _check_session(root, [f"toolu_{i}" for i in range(4)])


@pytest.mark.slow
def test_the_server_reads_the_transcript_on_after_a_calls_last_answer(
    tmp_path: Path, ws: Path
) -> None:
    """Claude Code often writes the answer asking for a call after that call's PreToolUse
    ran; the server reads it (and prices it) once the call's PostToolBatch is answered, off
    the agent's path, instead of in the next call's PreToolUse."""
    root = tmp_path / "store"
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("")

    def hook(event: str, **fields: object) -> str:
        return _call({**payload(event, cwd=ws, **fields),
                      "transcript_path": str(transcript)}, root)[0]

    hook("SessionStart", source="startup")  # in-process; it starts the server
    _wait_server(root)
    read = {"tool_name": "Read", "tool_input": {"file_path": "/w/f1.py"},
            "tool_use_id": "toolu_1"}
    assert hook("PreToolUse", **read) == ""
    message = {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
               "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read"}],
               "usage": {"input_tokens": 1000, "output_tokens": 50}}
    with transcript.open("a") as handle:  # written after the call's PreToolUse
        handle.write(json.dumps({"type": "assistant", "message": message}) + "\n")
    done = {**read, "tool_response": {"file": {"content": "x"}}}
    assert hook("PostToolUse", **done) == ""
    assert hook("PostToolBatch", tool_calls=[done]) == ""
    deadline = time.monotonic() + 30
    while not [e for e in events(root, "loop-1") if e["type"] == "usage"]:
        assert time.monotonic() < deadline, "the late answer was not read after the batch"
        time.sleep(0.05)
    (usage,) = [e for e in events(root, "loop-1") if e["type"] == "usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (1000, 50)
    assert usage["cost_usd"] == pytest.approx(0.003 + 0.00075)


def test_the_server_takes_the_due_checkpoint_after_a_calls_last_answer(
    tmp_path: Path, ws: Path
) -> None:
    """The periodic checkpoint the third call is due is taken once the second call's
    PostToolBatch is answered (the agent does not wait for git), from the work tree as that
    call left it, before the third call's PreToolUse, which then takes none."""
    root = tmp_path / "store"
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoint_every = 3\n")
    (ws / "a.py").write_text("x = 0\n")
    _call(payload("SessionStart", cwd=ws, source="startup"), root)
    _wait_server(root)

    def auto() -> list[dict]:
        return [e for e in events(root, "loop-1")
                if e["type"] == "checkpoint" and e["label"] == "auto: every 3 actions"]

    for i in (1, 2):
        assert _call(_read(ws, i), root)[0] == ""
        (ws / "a.py").write_text(f"x = {i}\n")
        done = {**_read(ws, i, "PostToolUse"), "tool_response": {"file": {"content": "x"}}}
        assert _call(done, root)[0] == ""
        batch = payload("PostToolBatch", cwd=ws, tool_calls=[
            {k: done[k] for k in ("tool_name", "tool_input", "tool_use_id", "tool_response")}])
        assert _call(batch, root)[0] == ""
    deadline = time.monotonic() + 30
    while not auto():
        assert time.monotonic() < deadline, "no checkpoint after the second call's answer"
        time.sleep(0.05)
    assert _call(_read(ws, 3), root)[0] == ""
    (taken,) = auto()
    order = [e["call_id"] if e["type"] == "tool_call" else "cp" for e in events(root, "loop-1")
             if e["type"] == "tool_call" or e in (taken,)]
    assert order == ["toolu_1", "toolu_2", "cp", "toolu_3"]
    shadow = session_files(root, "loop-1").checkpoints
    shown = subprocess.run(["git", "--git-dir", str(shadow), "show", f"{taken['commit']}:a.py"],
                           capture_output=True, text=True, check=True)
    assert shown.stdout == "x = 2\n"


EDIT = {"file_path": "/w/parser.py", "old_string": "foo()", "new_string": "bar()"}
NOT_FOUND = "String to replace not found in file.\nString: foo()"


def _failing_edit(ws: Path, i: int, event: str) -> dict:
    extra = {"error": NOT_FOUND} if event == "PostToolUseFailure" else {}
    return payload(event, cwd=ws, tool_name="Edit", tool_input=EDIT, tool_use_id=f"toolu_{i}",
                   **extra)


def _state_behind_log(root: Path) -> bool:
    session = root / "sessions" / "loop-1"
    saved = json.loads((session / "state.json").read_text())["log_offset"]
    return saved < (session / "events.jsonl").stat().st_size


@pytest.mark.slow
def test_a_server_killed_with_its_sessions_unsaved_loses_no_count(
    tmp_path: Path, ws: Path
) -> None:
    """The server keeps the session's state in memory (the state on disk is behind the log);
    killed, the next call, in-process and then through a new server, still counts every
    earlier attempt: the fourth identical failing edit is refused, and so is the fifth."""
    root = tmp_path / "store"
    _call(payload("SessionStart", cwd=ws, source="startup"), root)
    first = _wait_server(root)
    for i in range(3):
        out, _ = _call(_failing_edit(ws, i, "PreToolUse"), root)
        assert out == ""
        _call(_failing_edit(ws, i, "PostToolUseFailure"), root)
    assert _state_behind_log(root)  # kept in memory, not saved per call
    os.kill(first, signal.SIGKILL)
    wait_gone(first)  # (a process in the kernel, an fsync under load, dies when it returns)
    out, modules = _call(_failing_edit(ws, 3, "PreToolUse"), root)
    assert "supervisor.hooks.runtime" in modules  # answered in-process
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    _wait_server(root, other_than=first)
    out, modules = _call(_failing_edit(ws, 4, "PreToolUse"), root)
    assert _heavy(modules) == []  # answered by the new server
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    verdicts = [e["action"] for e in events(root, "loop-1") if e["type"] == "verdict"]
    assert verdicts == ["allow", "allow", "allow", "block", "block"]


@pytest.mark.slow
def test_a_stopped_server_saves_the_sessions_it_kept(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _call(_read(ws, 0), root)
    pid = _wait_server(root)
    _call(_read(ws, 1), root)
    assert _state_behind_log(root)
    os.kill(pid, signal.SIGTERM)
    # its end, not its pid file: the server removes that first, so a new server may start
    # while it finishes the calls in flight and saves the sessions it kept
    wait_gone(pid)
    assert not _state_behind_log(root)
    state = json.loads((root / "sessions" / "loop-1" / "state.json").read_text())
    assert state["actions"] == 2


@pytest.mark.slow
def test_clients_racing_at_a_cold_start_end_with_one_server(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    procs = [_start(_read(ws, i), root) for i in range(4)]
    for proc in procs:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    log = root / "run" / "hookd.log"
    end = time.monotonic() + 30
    while not settled(log) and time.monotonic() < end:
        time.sleep(0.05)
    assert settled(log)
    assert log.read_text().count("serving on") == 1
    assert len(server_pids(root)) == 1
    _check_session(root, [f"toolu_{i}" for i in range(4)])


@pytest.mark.slow
def test_an_idle_server_exits_and_cleans_up(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _call(_read(ws, 0), root, SUPERVISOR_HOOKD_IDLE_S="1")
    # from its log: a loaded machine may start it and see it idle for 1 s before a look
    log = root / "run" / "hookd.log"
    end = time.monotonic() + 30
    while not (served := re.search(r"serving on .* \(pid (\d+),", log.read_text()
                                   if log.exists() else "")):
        assert time.monotonic() < end, "no server started"
        time.sleep(0.05)
    pid = int(served.group(1))
    end = time.monotonic() + 20
    while (server_pids(root) or list((root / "run").glob("*.sock"))) and time.monotonic() < end:
        time.sleep(0.1)
    assert server_pids(root) == [] and list((root / "run").glob("*.sock")) == []
    assert "idle; exiting" in (root / "run" / "hookd.log").read_text()
    with pytest.raises(ProcessLookupError):
        for _ in range(100):  # reaped by init soon after it exits
            os.kill(pid, 0)
            time.sleep(0.05)


@pytest.mark.slow
def test_a_hold_is_answered_through_the_server(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    _call(payload("SessionStart", cwd=ws, source="startup"), root)
    _wait_server(root)
    send_decision(root, "loop-1", "pause", operator="ana")
    proc = _start(payload("PreToolUse", cwd=ws, tool_name="Bash",
                          tool_input={"command": "make deploy"}, tool_use_id="toolu_h"), root)
    end = time.monotonic() + 20
    while not [e for e in events(root, "loop-1") if e["type"] == "escalation"]:
        assert time.monotonic() < end, "no escalation"
        time.sleep(0.05)
    time.sleep(0.5)
    assert proc.poll() is None  # held in a server thread
    for i in range(3):  # meanwhile another session's calls are served, without waiting
        out, modules = _call(payload("PreToolUse", "other-1", cwd=ws, tool_name="Read",
                                     tool_input={"file_path": f"/w/o{i}.py"},
                                     tool_use_id=f"toolu_o{i}"), root)
        assert out == "" and _heavy(modules) == []
    assert proc.poll() is None
    answered = run_cli("answer", "loop-1", "--guidance", "Deploy after the tests.",
                       "--operator", "ana", SUPERVISOR_HOME=str(root))
    assert answered.returncode == 0, answered.stderr
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert _heavy(json.loads(err.decode().splitlines()[-1])) == []  # served by the server
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "Deploy after the tests." in answer["permissionDecisionReason"]


@pytest.mark.slow
def test_eight_parallel_clients_on_one_session_lose_and_duplicate_nothing(
    tmp_path: Path, ws: Path
) -> None:
    root = tmp_path / "store"
    _call(payload("SessionStart", cwd=ws, source="startup"), root)
    _wait_server(root)
    n = 8
    for event in ("PreToolUse", "PostToolUse"):
        procs = [_start({**_read(ws, i, event), "tool_response": {"file": {"content": "x"}}},
                        root) for i in range(n)]
        for proc in procs:
            _out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            assert _heavy(json.loads(err.decode().splitlines()[-1])) == []
    _check_session(root, [f"toolu_{i}" for i in range(n)])
    results = [e["call_id"] for e in events(root, "loop-1") if e["type"] == "tool_result"]
    assert sorted(results) == sorted(f"toolu_{i}" for i in range(n))


@pytest.mark.slow
def test_daemon_off_never_starts_a_server(tmp_path: Path, ws: Path) -> None:
    root = tmp_path / "store"
    for i in range(3):
        out, modules = _call(_read(ws, i), root, SUPERVISOR_HOOK_DAEMON="0")
        assert out == "" and "supervisor.hooks.runtime" in modules
    time.sleep(0.5)
    assert not (root / "run").exists()
    _check_session(root, [f"toolu_{i}" for i in range(3)])


def test_a_bad_command_line_is_still_a_non_blocking_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "supervisor.hooks.client", "claude-code",
                           "--timeout", "soon"], input=b"{}", capture_output=True,
                          env=_env(tmp_path / "store"), timeout=60)
    assert done.returncode == 1 and b"--timeout must be a number" in done.stderr
    assert not (tmp_path / "store" / "run").exists()


@pytest.mark.slow
def test_sigterm_stops_the_server_and_the_next_call_starts_another(
    tmp_path: Path, ws: Path
) -> None:
    root = tmp_path / "store"
    _call(_read(ws, 0), root)
    first = _wait_server(root)
    os.kill(first, signal.SIGTERM)
    end = time.monotonic() + 20
    while f"hookd[{first}] stopped" not in (root / "run" / "hookd.log").read_text():
        assert time.monotonic() < end, "the server did not stop"
        time.sleep(0.05)
    assert list((root / "run").glob("*.sock")) == [] and server_pids(root) == []
    out, modules = _call(_read(ws, 1), root)
    assert out == "" and "supervisor.hooks.runtime" in modules
    assert _wait_server(root, other_than=first) != first
    _check_session(root, ["toolu_0", "toolu_1"])


def test_client_default_root_is_the_store_root(monkeypatch, tmp_path) -> None:
    """Without --root or $SUPERVISOR_HOME the served hook must write where the dashboard reads."""
    import sys as _sys

    import pytest as _pytest

    from supervisor.hooks import client as hookclient
    from supervisor.store.paths import resolve_root

    if not _sys.platform.startswith("linux"):
        _pytest.skip("the client computes the default root only on Linux")
    monkeypatch.delenv("SUPERVISOR_HOME", raising=False)
    for xdg in (None, str(tmp_path / "state")):
        if xdg is None:
            monkeypatch.delenv("XDG_STATE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_STATE_HOME", xdg)
        assert hookclient._parse(["claude-code"])[2] == str(resolve_root(None))


def test_hook_command_line_errors_are_one_line() -> None:
    import pytest as _pytest

    from supervisor.hooks.args import parse_args

    assert parse_args(["claude-code", "--timeout=90", "--root", "/r"]) == (
        "claude-code", 90.0, "/r")
    for bad, reason in ((["cursor"], "unknown hook target"),
                        (["claude-code", "--x"], "unknown option"),
                        (["claude-code", "--timeout"], "needs a value"),
                        (["claude-code", "--timeout", "nan"], "positive"),
                        (["claude-code", "--timeout", "soon"], "number of seconds")):
        with _pytest.raises(ValueError, match=reason):
            parse_args(bad)


def test_the_server_serves_call_after_call_with_the_threads_it_has(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No thread is started per call (a start and a hand-over cost a sequential agent, Copilot
    CLI, twice a call): the workers waiting in `accept` serve the calls themselves."""
    import threading

    from supervisor.hooks import server as hookd

    root = tmp_path / "store"
    path = root / "run" / "hook-test.sock"
    monkeypatch.chdir(tmp_path)  # (the server binds from its run directory)
    started: list[str] = []
    real_start = threading.Thread.start

    def start(thread: threading.Thread) -> None:
        target = getattr(thread, "_target", None)  # (a step's git may start a Timer)
        started.append(getattr(target, "__qualname__", type(thread).__name__))
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    server = hookd.HookServer(root.resolve(), path.resolve(), 60.0)
    serving = threading.Thread(target=server.serve, daemon=True)
    serving.start()

    def call(i: int) -> bytes:
        return _raw_call(path, root, ws, i)

    try:
        _wait_listening(path)
        assert call(0) == b"0\n"
        before = len(started)
        for i in range(1, 11):
            assert call(i) == b"0\n"
        ours = ("HookServer._worker", "HookServer._serve_one")
        assert [name for name in started[before:] if name in ours] == [], started
    finally:
        server.stop.set()
        serving.join(timeout=30)
    assert not serving.is_alive() and not path.exists()
    _check_session(root, [f"toolu_{i}" for i in range(11)])


DRIVER = """
import os, resource, socket, sys, threading
from pathlib import Path
from supervisor.hooks import server as hookd

resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))  # (so that running out takes few files)
server = hookd.HookServer(Path(sys.argv[1]), Path(sys.argv[2]), 60.0)

def listener_fd():
    for name in os.listdir("/proc/self/fd"):
        try:
            with socket.fromfd(int(name), socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                    return int(name)
        except OSError:
            continue

def commands():
    for line in sys.stdin:
        if line == "use up\\n":  # no new descriptor for anyone; the open ones stay open
            resource.setrlimit(resource.RLIMIT_NOFILE, (1, 64))  # (0 is stdin's; at 0, EINVAL)
            try:
                os.close(os.open("/dev/null", os.O_RDONLY))
                print("not used up", flush=True)
            except OSError as exc:
                print(exc.errno, flush=True)
        elif line == "free\\n":
            resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
            print("freed", flush=True)
        elif line == "break\\n":  # the listening socket's descriptor is no socket any more
            os.dup2(os.open("/dev/null", os.O_RDONLY), listener_fd())
            print("broken", flush=True)
    server.stop.set()

threading.Thread(target=commands, daemon=True).start()
sys.exit(server.serve())
"""
"""A resident server in a process of its own that, on a line of stdin, can open no descriptor
(`use up`: its soft limit lowered to 1, which keeps the open ones working, until `free`) or
turns its listening socket into /dev/null (`break`). A limit, not a thread taking every
descriptor that comes free: such a thread lost the race for one the server freed (a file of
its last call, a module its start-up imported) often enough on a loaded machine that `accept`
got it and did not fail."""


def _driver(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    """(the DRIVER process, its store root, its socket) once it serves; its log in tmp_path."""
    root = (tmp_path / "store").resolve()
    path = root / "run" / "hook-test.sock"
    log = (tmp_path / "driver.log").open("w")
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(root), str(path)], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                            env=_env(root), cwd=tmp_path)
    log.close()
    _wait_listening(path, lambda: proc.poll() is None, lambda: _log_of(tmp_path))
    return proc, root, path


def _log_of(tmp_path: Path) -> str:
    return (tmp_path / "driver.log").read_text()


def _command(proc: subprocess.Popen[str], line: str) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


@pytest.mark.slow
def test_a_server_out_of_descriptors_accepts_again_once_it_has_some(
    tmp_path: Path, ws: Path
) -> None:
    """`accept` fails with EMFILE while the process has no descriptor left; the workers waiting
    in it must not end on that (no call was in flight to bring one back): the call the kernel
    queued meanwhile is answered once descriptors are free again, and so are later ones."""
    import errno

    proc, root, path = _driver(tmp_path)
    try:
        assert _raw_call(path, root, ws, 0) == b"0\n"
        assert _command(proc, "use up") == str(errno.EMFILE)
        with _send_raw(path, root, ws, 1) as queued:  # (the kernel takes it into the backlog)
            end = time.monotonic() + 30
            while "accept failed" not in _log_of(tmp_path):
                assert time.monotonic() < end, _log_of(tmp_path)
                time.sleep(0.02)
            assert _command(proc, "free") == "freed"
            queued.settimeout(30)
            assert b"".join(iter(lambda: queued.recv(65536), b"")) == b"0\n", _log_of(tmp_path)
        assert _raw_call(path, root, ws, 2) == b"0\n"
        assert "retrying" in _log_of(tmp_path)
        assert proc.stdin is not None
        proc.stdin.close()  # (the driver stops its server)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()
    _check_session(root, ["toolu_0", "toolu_1", "toolu_2"])


@pytest.mark.slow
def test_a_server_whose_listening_socket_broke_stops_so_that_a_new_one_starts(
    tmp_path: Path, ws: Path
) -> None:
    """An `accept` error that says the listener is gone (ENOTSOCK here) stops the server: its
    socket file goes, so the next hook call starts a fresh server instead of waiting out its
    timeout on a server that no longer accepts."""
    proc, root, path = _driver(tmp_path)
    try:
        assert _raw_call(path, root, ws, 0) == b"0\n"
        assert _command(proc, "break") == "broken"
        assert proc.wait(timeout=30) == 0, _log_of(tmp_path)
    finally:
        proc.kill()
        proc.wait()
    log = _log_of(tmp_path)
    assert "Socket operation on non-socket; stopping" in log and "stopped" in log
    assert not path.exists() and not Path(f"{path}.pid").exists()


def test_a_worker_that_cannot_start_another_serves_its_call_and_accepts_again(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no thread to be had (`can't start new thread`, at the process's limit), the worker
    that took a call and found no other waiting serves it anyway, then waits in `accept` again:
    neither the call nor the server is left without a thread."""
    import threading

    from supervisor.hooks import server as hookd

    root = tmp_path / "store"
    path = root / "run" / "hook-test.sock"
    monkeypatch.chdir(tmp_path)  # (the server binds from its run directory)
    real_start = threading.Thread.start
    workers: list[threading.Thread] = []

    def start(thread: threading.Thread) -> None:
        if getattr(getattr(thread, "_target", None), "__qualname__", "") == "HookServer._worker":
            workers.append(thread)
            if len(workers) > 1:  # the first worker starts; no other can
                raise RuntimeError("can't start new thread")
        real_start(thread)

    monkeypatch.setattr(threading.Thread, "start", start)
    server = hookd.HookServer(root.resolve(), path.resolve(), 60.0)
    serving = threading.Thread(target=server.serve, daemon=True)
    serving.start()
    try:
        _wait_listening(path)
        for i in range(3):
            with _send_raw(path, root, ws, i) as sock:
                sock.settimeout(30)
                assert b"".join(iter(lambda: sock.recv(65536), b"")) == b"0\n"
        assert len(workers) > 1  # (another was asked for, and refused)
    finally:
        server.stop.set()
        serving.join(timeout=30)
    assert not serving.is_alive() and not path.exists()
    _check_session(root, ["toolu_0", "toolu_1", "toolu_2"])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


NO_PRICES = """
import errno, importlib.abc, sys, threading
from pathlib import Path
from supervisor.hooks import server as hookd

class OutOfDescriptors(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "supervisor.guard.prices":
            raise OSError(errno.EMFILE, "Too many open files")
        return None

sys.meta_path.insert(0, OutOfDescriptors())
server = hookd.HookServer(Path(sys.argv[1]), Path(sys.argv[2]), 60.0)
threading.Thread(target=lambda: (sys.stdin.readline(), server.stop.set()), daemon=True).start()
sys.exit(server.serve())
"""
"""A resident server whose price module cannot be imported, as when its process runs out of
descriptors just after it starts listening (the first calls came in meanwhile)."""


def test_a_server_that_cannot_import_its_price_table_still_serves(
    tmp_path: Path, ws: Path
) -> None:
    """The price table is warmed in a thread once the socket listens; a failed import there
    (out of descriptors under load) ended the whole server, and the calls on it went on
    unsupervised. It costs only the warm-up now: the server answers, and says why."""
    root = (tmp_path / "store").resolve()
    path = root / "run" / "hook-test.sock"
    log = (tmp_path / "driver.log").open("w")
    proc = subprocess.Popen([sys.executable, "-c", NO_PRICES, str(root), str(path)], text=True,
                            stdin=subprocess.PIPE, stderr=log, env=_env(root), cwd=tmp_path)
    log.close()
    try:
        _wait_listening(path, lambda: proc.poll() is None, lambda: _log_of(tmp_path))
        end = time.monotonic() + 30
        while "price table was not loaded ahead" not in _log_of(tmp_path):
            assert proc.poll() is None, _log_of(tmp_path)
            assert time.monotonic() < end, _log_of(tmp_path)
            time.sleep(0.02)
        assert _raw_call(path, root, ws, 0) == b"0\n"
        assert proc.poll() is None, _log_of(tmp_path)
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_the_http_side_out_of_descriptors_waits_instead_of_spinning(
    tmp_path: Path, ws: Path
) -> None:
    """Out of descriptors, the HTTP listener's pending connection stays queued and its socket
    readable: a loop that retries at once spins a core. While the server has none, it must
    use far less CPU than a busy loop measured in the same seconds (a ratio: a loaded machine
    slows both alike); once it has some, the Unix socket's calls are answered as before."""
    from supervisor.hooks.http_transport import ensure_config

    config = ensure_config((tmp_path / "store").resolve())
    proc, root, path = _driver(tmp_path)
    spinner = None
    try:
        assert _command(proc, "use up") == "24"  # EMFILE
        with socket.create_connection(("127.0.0.1", config.port), timeout=10):
            spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            time.sleep(0.5)
            server, busy = _cpu_seconds(proc.pid), _cpu_seconds(spinner.pid)
            time.sleep(3)
            server = _cpu_seconds(proc.pid) - server
            busy = _cpu_seconds(spinner.pid) - busy
            assert server < busy / 4, (f"the server used {server:.2f} s of CPU while out of "
                                       f"descriptors, a busy loop {busy:.2f} s")
        assert _command(proc, "free") == "freed"
        assert _raw_call(path, root, ws, 0) == b"0\n"
        assert "HTTP hooks: accept failed (Too many open files)" in _log_of(tmp_path)
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
        proc.kill()
        proc.wait()
