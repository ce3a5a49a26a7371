"""A lost guard state does not release a held agent (attack round 4).

The guard keeps the escalation an agent waits on in `state.json`; a state that is gone (the
agent's `rm`), unreadable (kept aside as `state.json.bad`) or saved before the escalation (its
step killed first) was rebuilt from the event log without it: the decisions, the numbers and the
end came back, the hold did not, so the very call the operator was asked about ran at once. Now
the log's last unanswered escalation (sealed: `store.voice`) is pending again, and the
operator's answer is what releases it. Real guard, real CLI.
"""

import json
from pathlib import Path

import pytest

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from tests.adversarial.sessions import TickingClock, paused_loop
from tests.conftest import run_cli


def _guard(root: Path, cwd: Path) -> Guard:
    """The real guard of `s1` (its clock in 1970: escalations without a deadline, so only an
    operator answers them)."""
    return Guard.open(root, "s1", cwd=cwd, clock=TickingClock(),
                      settings=GuardSettings(checkpoints=False, escalation_deadline_s=0))


@pytest.mark.parametrize("loss", ["removed", "garbled"])
def test_a_held_agent_stays_held_when_its_state_is_lost(tmp_path: Path, loss: str) -> None:
    root = tmp_path / "store"
    guard = _guard(root, tmp_path)
    guard.start("test-agent", task="a task")
    esc = paused_loop(guard, "make test", "1 failed", "exit 1")
    guard.close()
    state = root / "sessions" / "s1" / "state.json"
    if loss == "removed":
        state.unlink()
    else:
        state.write_text("{not json")
    again = _guard(root, tmp_path)
    verdict = again.pre_call("bash", {"command": "make test"})
    assert verdict.action == "pause", verdict
    assert again.pending is not None and again.pending["escalation_id"] == esc
    done = run_cli("answer", "s1", "--skip", "--operator", "ana", "--no-wait",
                   "--root", str(root))
    assert done.returncode == 0, done.stderr + done.stdout
    again.pre_call("bash", {"command": "ls"})
    assert again.pending is None
    applied = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_text()
               .splitlines() if '"type":"decision_applied"' in x]
    assert [(e["escalation_id"], e["operator"]) for e in applied] == [(esc, "ana")]
    again.close()


def test_an_answered_escalation_is_not_pending_again(tmp_path: Path) -> None:
    root = tmp_path / "store"
    guard = _guard(root, tmp_path)
    guard.start("test-agent", task="a task")
    paused_loop(guard, "make test", "1 failed", "exit 1")
    guard.close()
    assert run_cli("answer", "s1", "--skip", "--operator", "ana", "--no-wait",
                   "--root", str(root)).returncode == 0
    guard = _guard(root, tmp_path)
    guard.pre_call("bash", {"command": "ls"})  # applies the answer
    guard.close()
    (root / "sessions" / "s1" / "state.json").unlink()
    again = _guard(root, tmp_path)
    assert again.pre_call("bash", {"command": "ls -l"}).action != "pause"
    assert again.pending is None
    again.close()
