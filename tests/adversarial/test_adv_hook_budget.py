"""The hook always answers before the agent's timeout (issue 18, item 10): a session lock held by
another process, a wedged resident server, a git that hangs. Real processes, real locks, a real
socket; each test fails on the old code (which waited `timeout + 5 s`, or forever)."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from supervisor.hooks.budget import Budget
from supervisor.store import waits
from tests.conftest import cli_env
from tests.hook_helpers import hook_command, native_command, payload

TIMEOUT_S = 4.0
"""The agent's hook timeout in these tests: small, so that waiting it out is cheap."""
SLACK_S = 2.5
"""What a loaded machine may add to the hook's own time (interpreter start-up, imports)."""


@contextmanager
def held_flock(path: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Another process holds an exclusive `flock` on `path` until the block ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(600)\n", str(path)],
        stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def _hook(data: dict, root: Path, command: list[str] | None = None,
          **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the real hook (the Python client, or `command`) once with `--timeout TIMEOUT_S`;
    (the process, its wall time)."""
    started = time.monotonic()
    done = subprocess.run(
        [*(command or hook_command()), "--timeout", f"{TIMEOUT_S:g}"],
        input=json.dumps(data).encode(),
        capture_output=True, timeout=TIMEOUT_S + 30, env=cli_env(SUPERVISOR_HOME=str(root), **env))
    took = time.monotonic() - started
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(),
                                       done.stderr.decode()), took


def _call(session: str, n: int) -> dict:
    return payload("PreToolUse", session, tool_name="Bash", tool_input={"command": f"ls {n}"},
                   tool_use_id=f"toolu_{n}")


# -- the bounded waits themselves ------------------------------------------------------------

def test_a_lock_held_by_another_process_is_waited_for_only_until_the_deadline(
        tmp_path: Path) -> None:
    lock = tmp_path / "x.lock"
    with held_flock(lock):
        fd = os.open(lock, os.O_RDWR)
        try:
            started = time.monotonic()
            with waits.within(started + 0.5), pytest.raises(waits.DeadlineExceeded) as caught:
                waits.flock(fd, "the test's lock")
            assert 0.45 <= time.monotonic() - started < 0.5 + SLACK_S
            assert "the test's lock" in str(caught.value)
            assert not isinstance(caught.value, OSError)  # no `except OSError` swallows it
        finally:
            os.close(fd)
    fd = os.open(lock, os.O_RDWR)  # released: taken at once, even with the deadline past
    try:
        with waits.within(time.monotonic() - 1):
            waits.flock(fd, "the test's lock")
            assert waits.remaining() == 0.0
    finally:
        os.close(fd)


def test_an_inner_deadline_never_extends_an_outer_one() -> None:
    now = time.monotonic()
    assert waits.remaining() is None
    with waits.within(now + 1):
        with waits.within(now + 100):
            assert waits.remaining() is not None and waits.remaining() <= 1
        with waits.within(None):
            assert waits.remaining() is not None and waits.remaining() <= 1
    assert waits.remaining() is None


def test_the_deadline_is_each_threads_own() -> None:
    seen: list[float | None] = []
    with waits.within(time.monotonic() + 5):
        thread = threading.Thread(target=lambda: seen.append(waits.remaining()))
        thread.start()
        thread.join()
    assert seen == [None]


@pytest.mark.slow
def test_the_budget_leaves_time_to_answer() -> None:
    budget = Budget(60, started=100.0)
    assert budget.deadline() == 99.0 + 60
    assert Budget(2, started=100.0).deadline() == 101.5  # a quarter of a short timeout


# -- the hook, in-process and through the server ---------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("daemon", ["0", "1"], ids=["in-process", "server"])
def test_the_hook_answers_in_time_while_another_process_holds_the_session(
        tmp_path: Path, daemon: str) -> None:
    root = tmp_path / "store"
    first, _ = _hook(_call("held-1", 1), root, SUPERVISOR_HOOK_DAEMON=daemon)
    assert first.returncode == 0, first.stderr
    if daemon == "1":  # the first call started a server: the next one goes through it
        end = time.monotonic() + 30
        while not list(root.glob("run/hook-*.sock")) and time.monotonic() < end:
            time.sleep(0.05)
    with held_flock(root / "sessions" / "held-1" / "guard.lock"):
        done, took = _hook(_call("held-1", 2), root, SUPERVISOR_HOOK_DAEMON=daemon)
    assert took < TIMEOUT_S + SLACK_S, took  # the old code: timeout + 5 s, or forever
    # the fail-safe: no answer (the call goes on), exit 0, and one line that says why
    assert done.returncode == 0 and done.stdout == ""
    if daemon == "0":
        assert "the session (another process of it holds the lock)" in done.stderr
        assert "time budget" in done.stderr
    else:
        log = (root / "run" / "hookd.log").read_text()
        assert "time budget" in log
    # and the session knows: a supervisor_error says which call went unsupervised and why
    lines = (root / "sessions" / "held-1" / "events.jsonl").read_text().splitlines()
    errors = [json.loads(x) for x in lines if '"supervisor_error"' in x]
    assert errors and "time budget" in errors[-1]["message"]


@pytest.mark.slow
@pytest.mark.parametrize("client", ["python", "native"])
def test_the_hook_answers_in_time_when_the_server_takes_the_call_and_never_replies(
        tmp_path: Path, client: str) -> None:
    root = tmp_path / "store"
    env = cli_env(SUPERVISOR_HOME=str(root))
    where = subprocess.run(
        [sys.executable, "-c", "import sys; from supervisor.hooks.client import socket_path;"
         "print(socket_path(sys.argv[1]))", str(root)],
        capture_output=True, text=True, env=env, check=True).stdout.strip()
    run = Path(where).parent
    run.mkdir(parents=True, mode=0o700)
    os.chmod(root, 0o700)
    taken: list[socket.socket] = []
    wedged = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cwd = os.getcwd()
    os.chdir(run)  # AF_UNIX paths are short: bind by the relative name, as the server does
    try:
        wedged.bind(Path(where).name)
    finally:
        os.chdir(cwd)
    wedged.listen(4)

    def accept_and_sit() -> None:  # a server that reads the call and never answers
        conn, _ = wedged.accept()
        taken.append(conn)

    thread = threading.Thread(target=accept_and_sit, daemon=True)
    thread.start()
    try:
        done, took = _hook(_call("wedged-1", 1), root,
                           native_command() if client == "native" else None)
    finally:
        thread.join(5)
        for conn in taken:
            conn.close()
        wedged.close()
    assert taken, "the client never reached the wedged server"
    assert took < TIMEOUT_S + SLACK_S, took  # the old code: timeout + 5 s
    assert done.returncode == 0 and done.stdout == ""


@pytest.mark.slow
def test_a_git_that_hangs_is_killed_within_the_budget(tmp_path: Path) -> None:
    """The checkpoint's git processes take their limit from the deadline: a git that never
    exits (here a wrapper that sleeps) costs the call no more than its budget."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nexec sleep 600\n")
    fake.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    root = tmp_path / "store"
    call = payload("PreToolUse", "git-1", cwd=work, tool_name="Bash",
                   tool_input={"command": "ls"}, tool_use_id="toolu_1")
    done, took = _hook(call, root, SUPERVISOR_HOOK_DAEMON="0",
                       PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert took < TIMEOUT_S + SLACK_S, took  # the old code: forever
    assert done.returncode == 0
    text = (root / "sessions" / "git-1" / "events.jsonl").read_text()
    assert "did not finish within the hook" in text  # the failed checkpoint is reported


@pytest.mark.slow
def test_a_lock_left_to_the_deadline_leaves_the_decision_for_the_next_call(
        tmp_path: Path) -> None:
    """A spent budget is not a failed decision: the operator's command is not consumed as
    `decision_ignored` but applied by the next call that has time."""
    root = tmp_path / "store"
    assert _hook(_call("later-1", 1), root, SUPERVISOR_HOOK_DAEMON="0")[0].returncode == 0
    from supervisor.operator.send import send_decision

    send_decision(root, "later-1", "guidance", text="use the other module")
    events = root / "sessions" / "later-1" / "events.jsonl"
    with held_flock(events):  # the event log's writer lock: nothing can be recorded
        _hook(_call("later-1", 2), root, SUPERVISOR_HOOK_DAEMON="0")
    done, _ = _hook(_call("later-1", 3), root, SUPERVISOR_HOOK_DAEMON="0")
    assert done.returncode == 0
    kinds = [json.loads(x)["type"] for x in events.read_text().splitlines()]
    outcomes = [k for k in kinds if k.startswith("decision_")]
    assert outcomes == ["decision_applied"], outcomes
