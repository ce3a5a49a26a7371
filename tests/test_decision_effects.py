"""One meaning per operator decision: the live guard, `analyze`'s replay and `stats` reach the
same engine state, on a real session (real files, real git checkpoints) driven through every
decision kind; reset keeps session-wide limits; answered limit escalations end their episode."""

import json
from pathlib import Path
from typing import Any

import pytest

from supervisor.analysis.replay import analyze_events
from supervisor.engine import Engine, Policy, reset_description
from supervisor.guard.core import Guard
from supervisor.guard.inspect import replay_engine, session_usage
from supervisor.guard.settings import GuardSettings
from supervisor.guard.state import STATE_FILE
from supervisor.operator.send import send_decision
from supervisor.store.local import LocalStore
from tests.guard_helpers import events, of_type


class Clock:
    """A clock the test moves: every event's `ts`, every `now` of the engine."""

    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t

    def tick(self, s: float = 1.0) -> None:
        self.t += s


def _open(root: Path, work: Path, clock: Clock, policy: Any = None,
          settings: GuardSettings | None = None) -> Guard:
    return Guard.open(root, "s1", cwd=work, clock=clock, policy=policy,
                      settings=settings or GuardSettings(escalation_deadline_s=60.0,
                                                         checkpoint_every=0))


def _fail(guard: Guard, clock: Clock, command: str = "pytest -q") -> str:
    """One failing shell call; returns the verdict's action."""
    clock.tick()
    v = guard.pre_call("bash", {"command": command})
    if v.proceed:
        clock.tick()
        guard.post_call(v.call_id, "1 failed", ok=False, error="exit 1")
    return v.action


def _until_paused(guard: Guard, clock: Clock, command: str = "pytest -q") -> None:
    for _ in range(12):
        if _fail(guard, clock, command) == "pause":
            return
    raise AssertionError("the loop never escalated")


def _answer(root: Path, guard: Guard, clock: Clock, action: str, **kw: Any) -> None:
    esc = guard.pending["escalation_id"]
    send_decision(root, "s1", action, escalation_id=esc, operator="ana", **kw)
    clock.tick()
    guard.poll()
    assert guard.pending is None


def _command(root: Path, guard: Guard, clock: Clock, action: str, **kw: Any) -> str:
    send_decision(root, "s1", action, operator="ana", **kw)
    return _fail(guard, clock, "ls")  # the next call picks the command up


def _replayed_states(root: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The engine state `analyze` reaches, and the one `stats` reaches without saved state."""
    evs = events(root, "s1")
    policy = Policy.from_dict(evs[0]["policy"])
    analyzed = Engine(policy)
    analyze_events(evs, policy, session="s1", source="test", engine=analyzed)
    (root / "sessions" / "s1" / STATE_FILE).unlink()
    usage = session_usage(LocalStore(root), "s1")
    assert usage.source == "replay"
    stats = replay_engine(LocalStore(root).read_all("s1").events)
    assert usage.level == stats.level
    return analyzed.snapshot()["state"], stats.snapshot()["state"]


def test_every_decision_kind_replays_to_the_live_state(root: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text("x = 1\n")
    clock = Clock()
    guard = _open(root, work, clock)
    guard.start("test-agent", task="first task")
    # a guidance command after identical failures, the last one refused
    assert [_fail(guard, clock) for _ in range(4)] == ["allow", "allow", "allow", "block"]
    assert guard.engine.level == 2
    _command(root, guard, clock, "guidance", text="look at the fixture")
    assert guard.engine.level == 0
    # every answer to an escalation
    for action, kw in [("approve", {}), ("guidance", {"text": "try another test"}),
                       ("rollback", {"checkpoint_id": "cp-1"}), ("skip", {})]:
        _until_paused(guard, clock, f"pytest -q -k {action}")  # one signature per round
        _answer(root, guard, clock, action, **kw)
        if action == "skip":
            guard.task_start("second task")
    # commands not tied to an escalation: rollback refuses the call it meets
    (work / "app.py").write_text("x = 2\n")
    guard.checkpoint("manual")
    assert _command(root, guard, clock, "rollback", checkpoint_id="cp-1") == "block"
    assert of_type(events(root, "s1"), "tool_call")[-1]["refused_by"] == "operator"
    assert _command(root, guard, clock, "reset") == "nudge"
    assert _command(root, guard, clock, "skip") == "skip"
    guard.task_start("third task")
    # an operator pause, approved; then the deadline's fallback
    send_decision(root, "s1", "pause", operator="ana")
    _fail(guard, clock)
    _answer(root, guard, clock, "approve")
    _until_paused(guard, clock, "make test")
    clock.tick(61)
    guard.poll()
    assert of_type(events(root, "s1"), "decision_applied")[-1]["decision_id"] == "fallback"
    _command(root, guard, clock, "abort")
    assert guard.ended == "aborted"
    live = guard.engine.snapshot()["state"]
    guard.close()

    applied = of_type(events(root, "s1"), "decision_applied")
    kinds = [e["effect"]["kind"] for e in applied]
    assert kinds == ["guidance", "approve", "guidance", "rollback", "skip",
                     "rollback", "reset", "skip", "none", "none", "skip", "stop"]
    assert applied[-1]["level"] == 4 and applied[1]["level"] == 1 and applied[2]["level"] == 0
    analyzed, stats = _replayed_states(root)
    assert analyzed == live
    assert stats == live


def test_guidance_after_three_failures_leaves_one_level_everywhere(root: Path,
                                                                   tmp_path: Path) -> None:
    clock = Clock()
    guard = _open(root, tmp_path, clock, settings=GuardSettings(checkpoints=False))
    guard.start("test-agent")
    for _ in range(4):
        _fail(guard, clock)
    _command(root, guard, clock, "guidance", text="read the error first")
    level = guard.engine.level
    guard.close()
    assert level == 0
    evs = events(root, "s1")
    report_engine = Engine(Policy.from_dict(evs[0]["policy"]))
    analyze_events(evs, report_engine.policy, session="s1", source="t", engine=report_engine)
    assert report_engine.level == level
    (root / "sessions" / "s1" / STATE_FILE).unlink()
    assert session_usage(LocalStore(root), "s1").level == level


def test_reset_keeps_session_limits_unless_the_policy_says_otherwise(root: Path,
                                                                       tmp_path: Path) -> None:
    def run(policy: dict[str, Any]) -> int:
        clock = Clock()
        session_root = root / str(len(json.dumps(policy)))
        guard = _open(session_root, tmp_path, clock, policy=policy,
                      settings=GuardSettings(checkpoints=False))
        guard.start("test-agent")
        calls = 0
        for i in range(30):
            if i == 6:
                send_decision(session_root, "s1", "reset", operator="ana")
            clock.tick()
            v = guard.pre_call("bash", {"command": f"echo {i}"})
            if v.action == "stop":
                break
            calls += 1
            guard.post_call(v.call_id, f"{i}", ok=True)
        guard.close()
        return calls

    limits = {"limits": {"iterations_per_session": {"limit": 12, "action": "stop"}}}
    assert run(limits) == 12
    assert run({**limits, "reset_clears_session_limits": True}) == 12 + 6


def test_reset_description_says_what_is_kept() -> None:
    text = reset_description(Policy.profile("default"))
    assert "iterations_per_session" in text.split("Still counted:")[1]
    assert "consecutive_tool_calls" in text.split("Still counted:")[0]
    text = reset_description(Policy.from_dict({"reset_clears_session_limits": True}))
    assert "iterations_per_session" in text.split("Still counted:")[0]


@pytest.mark.parametrize("answer", ["approve", "fallback"])
def test_an_answered_limit_escalation_ends_that_limits_episode(root: Path, tmp_path: Path,
                                                                answer: str) -> None:
    """Issue 13: a limit escalation approved, or fallen back at the deadline, does not
    escalate again at the very next call; the limit counts afresh from there."""
    clock = Clock()
    policy = {"limits": {"consecutive_tool_calls": {"limit": 5, "action": "pause"}}}
    guard = _open(root, tmp_path, clock, policy=policy,
                  settings=GuardSettings(checkpoints=False, escalation_deadline_s=30.0))
    guard.start("test-agent", task="a task")
    actions = []
    for i in range(6):
        clock.tick()
        v = guard.pre_call("bash", {"command": f"echo {i}"})
        actions.append(v.action)
        if v.proceed:
            guard.post_call(v.call_id, f"{i}", ok=True)
    assert actions[-1] == "pause"
    if answer == "approve":
        _answer(root, guard, clock, "approve")
    else:
        clock.tick(31)
        guard.poll()
        assert guard.pending is None
    after = []
    for i in range(7):
        clock.tick()
        v = guard.pre_call("bash", {"command": f"echo again {i}"})
        after.append(v.action)
        if v.proceed:
            guard.post_call(v.call_id, f"{i}", ok=True)
    guard.close()
    assert after[:5] == ["allow"] * 5
    assert after[5] == "pause"  # the next episode reaches the limit again


def test_each_effect_reads_back_what_it_records_and_names_are_checked() -> None:
    """Every registered effect type survives its own record (`decision_applied`'s `effect`),
    a record of no known type or a quiet of no detector reads as None, and a second type with
    a taken name is refused when registered."""
    from dataclasses import dataclass
    from typing import ClassVar

    from supervisor.engine.effects import EFFECTS, Approve, Effect, Quiet, registered

    made = [Approve(True, "sig", "limit", 2), Quiet(False, "sig", None, "exact_repeat", 5, True)]
    made += [t(True, "sig", None) for name, t in EFFECTS.items() if name not in (
        Approve.kind, Quiet.kind)]
    assert {type(e) for e in made} == set(EFFECTS.values())
    for effect in made:
        assert Effect.from_dict(effect.to_dict()) == effect, effect
    assert Effect.from_dict({"kind": "teleport"}) is None
    assert Effect.from_dict({"kind": "quiet", "answers": False}) is None

    @dataclass(frozen=True, slots=True)
    class Twice(Effect):
        kind: ClassVar[str] = "stop"

    with pytest.raises(ValueError, match="Stop and Twice are both named 'stop'"):
        registered((*EFFECTS.values(), Twice))
