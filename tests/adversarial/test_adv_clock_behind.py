"""An agent whose clock is behind is not judged dead while its process runs (issue 41, low).

The agent's events carry its own clock; one 120 s behind looked silent for 120 s, so it was
judged dead and the operator's answer refused ("the agent is not running (no heartbeat for
120 s)"). On the agent's own host its live process now wins over the time stamps. The real
CLI."""

import os
import time
from pathlib import Path

import pytest

from supervisor.store.liveness import THIS_HOST, judge
from supervisor.store.writer import event_writer
from tests.conftest import run_cli

BEHIND_S = 120.0


@pytest.mark.slow
def test_a_live_agent_with_a_slow_clock_gets_its_answer(tmp_path: Path) -> None:
    root = tmp_path / "store"
    then = time.time() - BEHIND_S  # the agent's clock
    with event_writer(root, "s1") as w:
        w.append({"type": "session_start", "agent": "sdk", "task": "t", "cwd": str(tmp_path),
                  "pid": os.getpid(), "host": THIS_HOST, "heartbeat_s": 5.0, "ts": then})
        w.append({"type": "escalation", "escalation_id": "esc-1", "level": 3,
                  "reason": "held", "evidence": [], "options": ["approve", "skip"],
                  "deadline_ts": None, "fallback": "skip", "kind": "pause", "ts": then + 1})
        w.append({"type": "heartbeat", "ts": then + 2})
    done = run_cli("answer", "s1", "--approve", "--operator", "ana", "--no-wait",
                   "--root", str(root))
    assert done.returncode == 0, done.stderr
    assert "not running" not in done.stderr


def test_a_gone_process_is_still_dead_and_another_host_is_judged_by_silence() -> None:
    now = time.time()
    gone = judge(end_status=None, pid=2**31 - 2, host=THIS_HOST, heartbeat_s=5.0,
                 last_seen_ts=now, now=now)
    assert gone.alive is False and "is gone" in gone.reason
    elsewhere = judge(end_status=None, pid=os.getpid(), host="another-host/pid:[1]",
                      heartbeat_s=5.0, last_seen_ts=now - BEHIND_S, now=now)
    assert elsewhere.alive is False
