"""An agent that runs the calls the supervisor refused is noticed (issue 41, medium).

18 identical `git push --force` calls, the agent running each refused one anyway: there was one
escalation, then nine refused calls ran with no second escalation, no note, and the session
stayed at level 2. Now a result for a refused call is disobedience: recorded (`disobeyed`),
shown (`tail`), and escalated again (so the operators are notified) when no escalation already
waits. The real guard and engine; the real `tail`."""

from pathlib import Path

import pytest

from supervisor.operator.send import send_decision
from tests.adversarial.sessions import held_guard, started_guard
from tests.conftest import run_cli
from tests.guard_helpers import events, of_type

PUSH = {"command": "git push --force origin main"}


@pytest.mark.slow
def test_refused_calls_that_ran_anyway_are_recorded_and_escalated(tmp_path: Path) -> None:
    root = tmp_path / "store"
    guard = started_guard(root, tmp_path, task="publish the branch")
    refused = []
    for n in range(18):
        if guard.pending is not None:  # the operator answers each escalation with guidance
            send_decision(root, "s1", "guidance", escalation_id=guard.pending["escalation_id"],
                          text="do not force-push; open a pull request", operator="ana")
            guard.poll()
        verdict = guard.pre_call("bash", PUSH, call_id=f"call-{n}")
        if not verdict.proceed:
            refused.append(verdict.call_id)
        # the agent runs it whatever it was told
        guard.post_call(f"call-{n}", "! [rejected] main -> main (stale info)", ok=False,
                        error="exit 1")
    guard.close()
    seen = events(root, "s1")
    disobeyed = of_type(seen, "disobeyed")
    assert [e["call_id"] for e in disobeyed] == refused and len(refused) >= 4
    escalations = of_type(seen, "escalation")
    again = [e for e in escalations if e["kind"] == "disobedience"]
    assert len(again) >= 2, [e["kind"] for e in escalations]
    # the first refused call that ran is escalated at once: no refused call runs unnoticed
    first = next(e for e in seen if e["type"] == "disobeyed")
    assert any(e["type"] == "escalation" and e["seq"] == first["seq"] + 1 for e in seen)
    assert "ran call call-" in again[0]["reason"] and "git push" not in again[0]["reason"]
    shown = run_cli("tail", "s1", "--root", str(root)).stdout
    assert "ran although refused" in shown


def test_a_held_call_approved_later_is_no_disobedience(tmp_path: Path) -> None:
    root = tmp_path / "store"
    guard, esc = held_guard(root, tmp_path, "the operator wants a look")
    verdict = guard.pre_call("bash", {"command": "make"}, call_id="held")
    assert verdict.action == "pause"
    send_decision(root, "s1", "approve", escalation_id=esc, operator="ana")
    assert guard.wait(timeout=10).proceed
    guard.post_call("held", "built", ok=True)
    guard.close()
    assert of_type(events(root, "s1"), "disobeyed") == []
