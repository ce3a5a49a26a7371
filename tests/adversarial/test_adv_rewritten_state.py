"""A guard state the agent rewrote does not release a held agent (attack round 5).

Round 4 kept the hold when the state is lost (`rm state.json`): the log's last unanswered
escalation is pending again. A state *rewritten* with the hold taken out (`"pending": null`)
was still believed, and one saying the session ended (`"ended": "completed"`) left every later
call unsupervised. The state is not sealed as a whole (an HMAC of the engine's snapshot at every
save), but the part that holds the agent is: the pending escalation, the end and how far into
the log the state is (`hold_seal`, a keyed hash of a few bytes). A state whose hold does not
hold its seal takes its hold and its end from the sealed log. Real guard, real CLI.
"""

import json
from pathlib import Path

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from tests.adversarial.sessions import TickingClock, paused_loop
from tests.conftest import run_cli


def _guard(root: Path, cwd: Path) -> Guard:
    """The real guard of `s1` (escalations without a deadline: only an operator answers)."""
    return Guard.open(root, "s1", cwd=cwd, clock=TickingClock(),
                      settings=GuardSettings(checkpoints=False, escalation_deadline_s=0))


def _rewrite(root: Path, **fields: object) -> None:
    """What a shell line of the agent does to `state.json`: set `fields`, keep the rest."""
    path = root / "sessions" / "s1" / "state.json"
    state = json.loads(path.read_text())
    state.update(fields)
    path.write_text(json.dumps(state))


def test_a_state_rewritten_without_its_hold_keeps_the_agent_held(tmp_path: Path) -> None:
    root = tmp_path / "store"
    guard = _guard(root, tmp_path)
    guard.start("test-agent", task="a task")
    guard.pause("the operator wants a look first")
    esc = str(guard.pending["escalation_id"]) if guard.pending else ""
    guard.close()
    _rewrite(root, pending=None)
    again = _guard(root, tmp_path)
    verdict = again.pre_call("bash", {"command": "git push --force origin main"})
    assert verdict.action == "pause", verdict
    assert again.pending is not None and again.pending["escalation_id"] == esc
    again.close()
    done = run_cli("answer", "s1", "--skip", "--operator", "ana", "--no-wait",
                   "--root", str(root))
    assert done.returncode == 0, done.stderr + done.stdout
    again = _guard(root, tmp_path)
    again.pre_call("bash", {"command": "ls"})
    assert again.pending is None  # the operator's answer is what releases it
    again.close()


def test_a_state_rewritten_as_ended_keeps_the_session_supervised(tmp_path: Path) -> None:
    root = tmp_path / "store"
    guard = _guard(root, tmp_path)
    guard.start("test-agent", task="a task")
    guard.pre_call("bash", {"command": "ls"})
    guard.close()
    _rewrite(root, ended="completed")
    again = _guard(root, tmp_path)
    paused_loop(again, "make test", "1 failed", "exit 1")
    again.close()


def test_the_guards_own_states_are_believed(tmp_path: Path) -> None:
    """An answered escalation stays answered across the guard's own saves and loads."""
    root = tmp_path / "store"
    guard = _guard(root, tmp_path)
    guard.start("test-agent", task="a task")
    paused_loop(guard, "make test", "1 failed", "exit 1")
    guard.close()
    assert run_cli("answer", "s1", "--skip", "--operator", "ana", "--no-wait",
                   "--root", str(root)).returncode == 0
    for command in ("ls", "ls -l", "ls -a"):
        again = _guard(root, tmp_path)
        assert again.pre_call("bash", {"command": command}).action != "pause"
        assert again.pending is None
        again.close()
