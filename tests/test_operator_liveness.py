"""Liveness from the agent's own events and its real process (issue 15, items 2 and 8).

A dead pid is a real process that ran and exited; a dead SDK agent is a real subprocess killed
with SIGKILL (no `session_end`); the offline rollback is the real `supervisor rollback`.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_support import FROZEN_NOW, start, write_events

from supervisor.guard.inspect import agent_alive
from supervisor.store.liveness import THIS_HOST, dead_after, judge
from supervisor.store.local import LocalStore
from tests.conftest import cli_env, run_cli


def summarize_session(root: Path, session_id: str):
    return LocalStore(root).summary(session_id)


def dead_pid() -> int:
    """The id of a real process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_gone_process_on_this_host_is_dead_at_once() -> None:
    pid = dead_pid()
    verdict = judge(end_status=None, pid=pid, host=THIS_HOST, heartbeat_s=5.0,
                    last_seen_ts=100.0, now=101.0)
    assert verdict.alive is False and verdict.reason == f"its process {pid} is gone"
    alive = judge(end_status=None, pid=os.getpid(), host=THIS_HOST, heartbeat_s=None,
                  last_seen_ts=100.0, now=10_000.0)
    assert alive.alive is True and str(os.getpid()) in alive.reason


def test_a_pid_recorded_elsewhere_is_never_looked_up_here() -> None:
    pid = dead_pid()
    for host in ("another-machine/pid:[1]", None):
        verdict = judge(end_status=None, pid=pid, host=host, heartbeat_s=None,
                        last_seen_ts=100.0, now=101.0)
        assert verdict.alive is None  # hook-like: no heartbeats promised, nothing to judge
        beating = judge(end_status=None, pid=pid, host=host, heartbeat_s=5.0,
                        last_seen_ts=100.0, now=101.0)
        assert beating.alive is True


def test_missed_heartbeats_mean_dead_with_the_silence_in_the_reason() -> None:
    window = dead_after(5.0)
    assert window == 15.0 and dead_after(10.0) == 30.0
    quiet = judge(end_status=None, pid=None, host=None, heartbeat_s=5.0, last_seen_ts=100.0,
                  now=100.0 + window)
    assert quiet.alive is True
    gone = judge(end_status=None, pid=None, host=None, heartbeat_s=5.0, last_seen_ts=100.0,
                 now=140.0)
    assert gone.alive is False and gone.reason == "no heartbeat for 40 s"
    ended = judge(end_status="aborted", pid=os.getpid(), host=THIS_HOST, heartbeat_s=5.0,
                  last_seen_ts=100.0, now=101.0)
    assert ended.alive is False and ended.reason == "session ended: aborted"


def test_summary_status_is_dead_when_the_recorded_process_is_gone(root: Path) -> None:
    write_events(root, "gone", [start(pid=dead_pid(), host=THIS_HOST)], t0=FROZEN_NOW - 4)
    write_events(root, "here", [start(pid=os.getpid(), host=THIS_HOST)], t0=FROZEN_NOW - 4)
    assert summarize_session(root, "gone").status(FROZEN_NOW) == "dead"
    assert summarize_session(root, "here").status(FROZEN_NOW) == "running"
    # a recording is shown as it was recorded
    assert summarize_session(root, "gone").status(FROZEN_NOW, judge_liveness=False) == "running"


def test_operator_appended_events_are_no_sign_of_life(root: Path) -> None:
    write_events(root, "s1", [start(heartbeat_s=5.0)], t0=FROZEN_NOW - 100)
    write_events(root, "s1", [{"type": "rollback", "checkpoint_id": "cp-1",
                               "restored_files": 1, "safety_checkpoint_id": "cp-2",
                               "by": "supervisor rollback", "ts": FROZEN_NOW - 1}])
    summary = summarize_session(root, "s1")
    assert summary.last_ts == FROZEN_NOW - 1 and summary.last_seen_ts == FROZEN_NOW - 98
    assert summary.status(FROZEN_NOW) == "dead"
    assert agent_alive(summary, FROZEN_NOW) == (False, "no heartbeat for 98 s")


AGENT = """
import sys, time
from pathlib import Path
from supervisor.guard import Session
work = Path(sys.argv[2]); work.mkdir(exist_ok=True); (work / "a.txt").write_text("one\\n")
s = Session("killed-agent", task="t", cwd=work, root=sys.argv[1], session_id="victim",
            heartbeat_s=1.0)
v = s.before_call("write", {"path": "a.txt"})
(work / "a.txt").write_text("two\\n")
s.after_call(v, "ok")
print("READY", flush=True)
time.sleep(120)
"""


@pytest.mark.slow
def test_offline_rollback_of_a_killed_agent_leaves_it_dead(root: Path, tmp_path: Path) -> None:
    agent = subprocess.Popen([sys.executable, "-c", AGENT, str(root), str(tmp_path / "work")],
                             stdout=subprocess.PIPE, text=True, env=cli_env())
    try:
        assert agent.stdout is not None and agent.stdout.readline().strip() == "READY"
        start_event = json.loads((root / "sessions" / "victim" / "events.jsonl")
                                 .read_text().splitlines()[0])
        assert start_event["pid"] == agent.pid and start_event["host"] == THIS_HOST
        assert summarize_session(root, "victim").status(time.time()) == "running"
        refused = run_cli("rollback", "victim", "cp-1", "--root", str(root))
        assert refused.returncode == 1 and "looks alive" in refused.stderr
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
    summary = summarize_session(root, "victim")
    assert summary.end_status is None  # killed: no session_end
    assert summary.status(time.time()) == "dead"
    assert summary.liveness(time.time()).reason == f"its process {agent.pid} is gone"
    done = run_cli("rollback", "victim", "cp-1", "--root", str(root))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "work" / "a.txt").read_text() == "one\n"
    after = summarize_session(root, "victim")
    assert after.last_ts > summary.last_ts  # the rollback appended its events...
    assert after.last_seen_ts == summary.last_seen_ts  # ...which are not the agent's
    assert after.status(time.time()) == "dead"
    listed = run_cli("sessions", "--root", str(root))
    assert "dead" in listed.stdout and "running" not in listed.stdout



@pytest.mark.slow
def test_a_rollback_is_refused_while_another_session_works_in_the_same_folder(
        root: Path, tmp_path: Path) -> None:
    """Two agents in one repository: `supervisor rollback` of the one that ended removed the
    file the other had just written (it put back the whole folder, and said only "removed 1
    created since: notes.txt"). It names the other session and asks for --force."""
    from supervisor.guard import Session

    work = tmp_path / "repo"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    done = Session("claude-code", task="t", cwd=work, root=root, session_id="first",
                   heartbeat_s=0)
    verdict = done.before_call("write", {"path": "a.txt"})
    (work / "a.txt").write_text("two\n")
    done.after_call(verdict, "ok")
    done.close("completed")
    now = time.time()
    write_events(root, "first.sub-1", [start(cwd=str(work))], t0=now - 10)  # its own sub-agent
    write_events(root, "elsewhere", [start(cwd=str(tmp_path / "other"))], t0=now - 10)
    write_events(root, "second", [start(agent="codex", cwd=str(work / "sub"))], t0=now - 10)
    (work / "notes.txt").write_text("the second session's work\n")
    refused = run_cli("rollback", "first", "cp-1", "--root", str(root))
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f"supervisor: error: another session that has not ended works in the folder of "
        f"'first' ({work}): second (codex, running, last activity ")
    assert "--force" in refused.stderr and "first.sub-1" not in refused.stderr
    assert (work / "notes.txt").exists() and (work / "a.txt").read_text() == "two\n"
    write_events(root, "second", [{"type": "session_end", "status": "completed"}])
    rolled = run_cli("rollback", "first", "cp-1", "--root", str(root))
    assert rolled.returncode == 0, rolled.stderr
    assert (work / "a.txt").read_text() == "one\n" and not (work / "notes.txt").exists()
