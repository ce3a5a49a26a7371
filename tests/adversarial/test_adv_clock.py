"""The clock going backwards during a session and during an escalation (issue 24, "not yet
tried"): the guard keeps recording, detecting and holding, the operator's answer still applies
exactly once, and every reader (the summary, `supervisor sessions`) reads the session. The real
guard and engine with a clock the test moves."""

import json
from pathlib import Path

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.operator.send import send_decision
from supervisor.store.local import LocalStore
from tests.conftest import run_cli


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_clock_that_jumps_back_loses_no_escalation(tmp_path: Path) -> None:
    root = tmp_path / "store"
    clock = Clock(1_800_000_000.0)
    settings = GuardSettings(checkpoint_every=0, escalation_deadline_s=600.0)
    with Guard.open(root, "s1", settings=settings, clock=clock) as guard:
        guard.start("agent")
        verdicts = []
        for i in range(12):
            clock.now += 5 if i != 4 else -86_400  # a day back, in the middle of the loop
            verdict = guard.pre_call("bash", {"command": "pytest -q"}, call_id=f"c{i}")
            verdicts.append(verdict.action)
            if verdict.action == "pause":
                break
            guard.post_call(f"c{i}", "FAILED test_x", ok=False)
        assert verdicts[-1] == "pause", verdicts  # the loop is still caught
        esc = guard.pending["escalation_id"]
        clock.now -= 3 * 86_400  # and back again while the escalation waits
        assert guard.poll() == [] or guard.pending is not None
        assert guard.pending is not None  # not decided by a deadline the clock never reached
    send_decision(root, "s1", "skip", escalation_id=esc, operator="ana")
    with Guard.open(root, "s1", settings=settings, clock=clock) as guard:
        guard.poll()
        assert guard.pending is None
    events = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_text()
              .splitlines()]
    assert [e["action"] for e in events if e["type"] == "decision_applied"] == ["skip"]
    summary = LocalStore(root).summary("s1")
    assert summary.pending == {} and summary.status(clock.now) in ("running", "idle", "dead")
    listed = run_cli("sessions", "--root", str(root))
    assert listed.returncode == 0 and "s1" in listed.stdout, listed.stderr
