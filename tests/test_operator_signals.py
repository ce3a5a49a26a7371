"""Stopping a guarded agent mid-wait (issue 15, item 4), with real processes and real signals.

One Ctrl+C (SIGINT) or one SIGTERM ends the wait and the session (`session_end` `terminated`,
the reason naming how), promptly, with nothing from a library on the terminal.
"""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli_env

pytestmark = pytest.mark.slow


def events(root: Path, session: str) -> list[dict]:
    path = root / "sessions" / session / "events.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(predicate, what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def escalated_demo(root: Path, tmp_path: Path, session: str) -> subprocess.Popen[str]:
    """A real demo agent (the SDK, real git) looping until it escalates and waits."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         session, "--scenario", "loop", "--workdir", str(tmp_path / session), "--pace", "0.02",
         "--deadline", "600"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )
    wait_for(lambda: any(e["type"] == "escalation" for e in events(root, session)),
             "the escalation")
    time.sleep(0.5)  # well inside the wait on the control file
    assert proc.poll() is None
    return proc


@pytest.mark.parametrize(("signum", "reason"), [
    (signal.SIGINT, "interrupted (Ctrl+C)"),
    (signal.SIGTERM, "stopped by SIGTERM"),
])
def test_one_signal_ends_the_wait_and_the_session(root: Path, tmp_path: Path, signum: int,
                                                   reason: str) -> None:
    proc = escalated_demo(root, tmp_path, "stopped")
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - sent < 10
    assert proc.returncode == 2
    end = events(root, "stopped")[-1]
    assert end["type"] == "session_end" and end["status"] == "terminated"
    assert end["reason"] == reason
    for noise in ("stopping watch", "KeyboardInterrupt", "Traceback", "WARNING"):
        assert noise not in out + err, (noise, out, err)
    assert err == ""


SDK_AGENT = """
import sys
from supervisor.guard import GuardSettings, Session
with Session("sdk-agent", task="t", root=sys.argv[1], session_id="sdk", cwd=sys.argv[2],
             settings=GuardSettings(checkpoints=False), heartbeat_s=None) as s:
    s.guard.pause("waiting for a person")
    print("WAITING", flush=True)
    s.before_call("bash", {"command": "ls"})
print("not reached", flush=True)
"""


def test_sigterm_ends_a_plain_sdk_script_with_status_143_and_no_traceback(
        root: Path, tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", SDK_AGENT, str(root), str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env())
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "WAITING"
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert err == "" and "not reached" not in out
    end = events(root, "sdk")[-1]
    assert end == {**end, "type": "session_end", "status": "terminated",
                   "reason": "stopped by SIGTERM"}


def test_an_application_handler_for_sigterm_is_left_alone(root: Path, tmp_path: Path) -> None:
    script = """
import signal, sys
from supervisor.guard import GuardSettings, Session
mine = lambda signum, frame: None
signal.signal(signal.SIGTERM, mine)
with Session("sdk-agent", root=sys.argv[1], session_id="own", cwd=sys.argv[2],
             settings=GuardSettings(checkpoints=False), heartbeat_s=None):
    assert signal.getsignal(signal.SIGTERM) is mine
assert signal.getsignal(signal.SIGTERM) is mine
default = signal.signal(signal.SIGTERM, signal.SIG_DFL)
with Session("sdk-agent", root=sys.argv[1], session_id="ours", cwd=sys.argv[2],
             settings=GuardSettings(checkpoints=False), heartbeat_s=None):
    assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
print("OK")
"""
    done = subprocess.run([sys.executable, "-c", script, str(root), str(tmp_path)],
                          capture_output=True, text=True, env=cli_env(), timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "OK", done.stderr
