"""A state saved behind its event log is brought up to date from the log
(`supervisor.guard.catch_up`): a guard that kept its state in memory and died before saving it
(the resident hook server killed) loses nothing, and two guards of one session that keep their
states in memory never lose each other's steps."""

import json
import math
from pathlib import Path

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings

EDIT = {"file_path": "/w/parser.py", "old_string": "foo()", "new_string": "bar()"}
NOT_FOUND = "String to replace not found in file.\nString: foo()"


def _open(root: Path, save_every_s: float = math.inf) -> Guard:
    return Guard.open(root, "s1", cwd=root, settings=GuardSettings(checkpoints=False),
                      save_every_s=save_every_s)


def _steps(guard: Guard, first: int, count: int) -> list[str]:
    """`count` failing edits, the same each time, and a message now and then; the verdicts."""
    actions = []
    for i in range(first, first + count):
        verdict = guard.pre_call("Edit", EDIT, call_id=f"c{i}")
        actions.append(verdict.action)
        if verdict.action in ("allow", "nudge"):
            guard.post_call(f"c{i}", "", ok=False, error=NOT_FOUND, tool="Edit")
        guard.usage(100, 20, 0.01, model="m")
        if i % 2:
            guard.message("assistant", f"trying again ({i})")
    return actions


def _counts(guard: Guard) -> dict:
    state = guard.state
    return {"engine": json.dumps(guard.engine.snapshot(), sort_keys=True),
            "actions": state.actions, "calls": dict(state.calls),
            "since_checkpoint": state.since_checkpoint, "last_seq": state.last_seq,
            "spend": json.dumps(state.spend, sort_keys=True),
            "refused": dict(state.refused or {}), "task": state.task}


def _behind(root: Path) -> bool:
    session = root / "sessions" / "s1"
    saved = json.loads((session / "state.json").read_text())["log_offset"]
    return saved < (session / "events.jsonl").stat().st_size


def test_a_guard_killed_before_it_saved_loses_no_count(tmp_path: Path) -> None:
    live = _open(tmp_path)
    live.start("claude-code")
    live.task_start("fix the parser")
    _steps(live, 0, 2)
    assert _behind(tmp_path)  # the state on disk misses those steps
    # the live guard dies here without saving (its lock is not held between steps)
    restored = _open(tmp_path)
    assert _counts(restored) == _counts(live)
    assert restored.state.task == {"task_id": "t1", "title": "fix the parser"}
    restored.close()


def test_the_next_repeat_is_refused_after_the_kill_as_it_would_have_been(
    tmp_path: Path,
) -> None:
    straight = tmp_path / "straight"
    killed = tmp_path / "killed"
    one = _open(straight)
    one.start("claude-code")
    expected = _steps(one, 0, 5)
    one.close()
    two = _open(killed)
    two.start("claude-code")
    before = _steps(two, 0, 3)
    three = _open(killed)  # two dies unsaved; three starts from the saved state and the log
    after = _steps(three, 3, 2)
    three.close()
    assert before + after == expected
    assert "block" in expected  # the loop is refused either way


def test_two_guards_keeping_states_in_memory_see_each_others_steps(tmp_path: Path) -> None:
    first = _open(tmp_path)
    first.start("claude-code")
    second = _open(tmp_path)
    straight = _open(tmp_path / "straight")
    straight.start("claude-code")
    expected = _steps(straight, 0, 5)
    got = []
    for i in range(5):  # alternating, neither saving in between
        got += _steps(first if i % 2 else second, i, 1)
    assert got == expected
    first.journal.refresh()  # what a step starts with
    second.journal.refresh()
    assert _counts(first) == _counts(second)
    assert _counts(first)["actions"] == 5
    first.close()
    second.close()
    reopened = _open(tmp_path, save_every_s=0)
    assert reopened.state.actions == 5
    reopened.close()
