"""One real guard for the adversarial tests of operators' decisions (disobedience, forged and
late answers, rewritten seals, what OTLP exports): a session `s1` under `tmp_path/store`, its
checkpoints off, on a clock that moves one second per reading, optionally held by an operator's
pause. Written once here instead of copied into each test."""

from pathlib import Path

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings


class TickingClock:
    """A clock that moves one second each time it is read (from 1,000 s): every event gets its
    own time, whatever the machine's clock does."""

    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        self.t += 1.0
        return self.t


def started_guard(root: Path, cwd: Path, task: str = "a task") -> Guard:
    """The real guard of session `s1` under `root`, started on `task` in `cwd`."""
    guard = Guard.open(root, "s1", cwd=cwd, clock=TickingClock(),
                       settings=GuardSettings(checkpoints=False))
    guard.start("test-agent", task=task)
    return guard


def held_guard(root: Path, cwd: Path, reason: str = "held for a look") -> tuple[Guard, str]:
    """A started guard an operator paused: the guard and its pending escalation's id."""
    guard = started_guard(root, cwd)
    guard.pause(reason)
    assert guard.pending is not None
    return guard, str(guard.pending["escalation_id"])


def paused_loop(guard: Guard, command: str, output: str, error: str) -> str:
    """The same failing shell `command` (its `output`, its `error`) until the guard pauses it,
    12 calls at most: the id of the escalation left pending."""
    for _ in range(12):
        verdict = guard.pre_call("bash", {"command": command})
        if verdict.action == "pause":
            break
        if verdict.proceed:
            guard.post_call(verdict.call_id, output, ok=False, error=error)
    else:
        raise AssertionError("the loop never escalated")
    assert guard.pending is not None
    return str(guard.pending["escalation_id"])
