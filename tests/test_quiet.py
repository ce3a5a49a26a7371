"""The operator's quiet switch, end to end: `supervisor quiet` writes the decision, the real guard
applies it at the next tool call (recorded in `decision_applied` with its effect), the quieted
detector stays silent for N calls and then fires again, another detector and the hard limits are
untouched, and `analyze` / `stats` replay the recording to the live engine state."""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from supervisor.analysis.replay import analyze_events
from supervisor.engine import Engine, Policy
from supervisor.engine.effects import Quiet
from supervisor.guard.core import Guard
from supervisor.guard.inspect import replay_engine
from supervisor.guard.settings import GuardSettings
from supervisor.operator.send import send_decision
from supervisor.protocol.decisions import decision_problem
from supervisor.store.local import LocalStore
from tests.guard_helpers import events, of_type


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t

    def tick(self, s: float = 1.0) -> None:
        self.t += s


def _fail(guard: Guard, clock: Clock, command: str = "pytest -q") -> str:
    clock.tick()
    v = guard.pre_call("bash", {"command": command})
    if v.proceed:
        clock.tick()
        guard.post_call(v.call_id, "1 failed", ok=False, error="exit 1")
    return v.action


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "supervisor", "quiet", "--root", str(root),
                           *args], capture_output=True, text=True, timeout=60)


def test_quiet_from_the_command_line_silences_a_detector_for_n_calls(root: Path,
                                                                     tmp_path: Path) -> None:
    clock = Clock()
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock,
                       settings=GuardSettings(checkpoints=False))
    guard.start("test-agent")
    assert _fail(guard, clock, "ls") == "allow"
    out = _cli(root, "s1", "--detector", "exact_repeat", "--calls", "5", "--no-wait")
    assert out.returncode == 0, out.stderr
    # the next call picks the quiet up; five identical failures pass without a word
    actions = [_fail(guard, clock) for _ in range(5)]
    assert actions == ["allow"] * 5
    assert not [e for e in of_type(events(root, "s1"), "detection")
                if e["detector"] == "exact_repeat"]
    # the quiet is over: the detector counted all along, so the sixth identical failure
    # escalates at once (the policy's 6th)
    assert _fail(guard, clock) == "pause"
    applied = of_type(events(root, "s1"), "decision_applied")
    assert [e["effect"] for e in applied] == [{
        "kind": "quiet", "answers": False, "repeats": 0, "signature": None, "limit": None,
        "detector": "exact_repeat", "calls": 5}]
    assert applied[0]["outcome"] == "exact_repeat quiet for the next 5 tool call(s)"
    live = guard.engine.snapshot()["state"]
    guard.close()
    # analyze and stats reach the live state from the recording
    evs = events(root, "s1")
    policy = Policy.from_dict(evs[0]["policy"])
    analyzed = Engine(policy)
    report = analyze_events(evs, policy, session="s1", source="t", engine=analyzed)
    assert analyzed.snapshot()["state"] == live
    assert replay_engine(LocalStore(root).read_all("s1").events).snapshot()["state"] == live
    assert [(f.detector, f.action) for f in report.findings if f.level >= 1] == [
        ("exact_repeat", "escalate")]


def test_a_quiet_until_the_session_ends_leaves_other_detectors_and_limits_alone(
        root: Path, tmp_path: Path) -> None:
    clock = Clock()
    policy = {"limits": {"errors_per_session": {"limit": 8, "action": "pause"}}}
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock, policy=policy,
                       settings=GuardSettings(checkpoints=False))
    guard.start("test-agent")
    send_decision(root, "s1", "quiet", operator="ana", detector="exact_repeat")
    actions = [_fail(guard, clock) for _ in range(9)]
    # no detection of the quieted detector, but the hard limit still pauses the agent
    assert "pause" in actions
    assert not [e for e in of_type(events(root, "s1"), "detection")
                if e["detector"] == "exact_repeat"]
    assert of_type(events(root, "s1"), "limit")
    guard.close()


def test_a_quiet_of_one_signature_keeps_the_detector_on_for_other_loops() -> None:
    engine = Engine()
    call = {"tool": "Bash", "args": {"command": "pytest -q"}}
    other = {"tool": "Bash", "args": {"command": "make"}}

    def run(c: dict[str, Any], i: int) -> str:
        check = engine.check({**c, "call_id": f"c{i}", "seq": 2 * i + 1}, 1.0)
        engine.observe({"type": "tool_result", "call_id": f"c{i}", "seq": 2 * i + 2,
                        "ok": False, "output": "1 failed"}, 1.0)
        return check.action

    sig = engine.check({**call, "call_id": "probe"}, 1.0).signature
    engine.st.pending.clear()
    engine.st.step_count = 0
    engine.apply_effect(Quiet(False, sig, None, "exact_repeat", 0), 1.0)
    assert [run(call, i) for i in range(5)] == ["allow"] * 5
    assert [run(other, 10 + i) for i in range(4)] == ["allow", "allow", "allow", "block"]


@pytest.mark.slow
def test_unknown_detectors_and_bad_quiet_lines_are_refused(root: Path, tmp_path: Path) -> None:
    clock = Clock()
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock,
                       settings=GuardSettings(checkpoints=False))
    guard.start("test-agent")
    out = _cli(root, "s1", "--detector", "no_such_detector", "--no-wait")
    assert out.returncode != 0 and "unknown detector 'no_such_detector'" in out.stderr
    assert _cli(root, "s1", "--detector", "cycle", "--calls", "0").returncode != 0
    base = {"type": "decision", "v": 1, "seq": 1, "ts": 1.0, "decision_id": "d-1",
            "operator": "ana", "action": "quiet"}
    assert decision_problem(base) == "quiet needs a 'detector'"
    assert "calls" in (decision_problem({**base, "detector": "cycle", "calls": -1}) or "")
    assert decision_problem({**base, "detector": "cycle", "calls": 3}) is None
    # a decision naming a detector the guard does not know is recorded as ignored (sealed as
    # an operator path writes it: an unsealed line would be rejected for that alone)
    from supervisor.store.provenance import sealed

    line = sealed(root, "s1", {**base, "detector": "nope", "decision_id": "d-2", "seq": 2})
    control = root / "sessions" / "s1" / "control.jsonl"
    with control.open("a") as f:
        f.write(json.dumps(line) + "\n")
    _fail(guard, clock, "ls")
    ignored = of_type(events(root, "s1"), "decision_ignored")
    assert ignored and "unknown detector 'nope'" in ignored[-1]["reason"]
    guard.close()


# --- the dashboard --------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.anyio
async def test_the_dashboard_quiets_a_detector_that_fired_and_shows_the_quiet(
        root: Path) -> None:
    from textual.widgets import OptionList
    from tui_support import call, control_lines, load, make_app, press, start, write_events

    from supervisor.tui.screens.quiet import QuietScreen

    detection = {"type": "detection", "detector": "similar_calls", "level": 1,
                 "signature": "abc", "evidence": [2], "message": "Loop: near-identical calls",
                 "action": "nudge", "confidence": "moderate", "basis": "5 similar calls"}
    applied = {"type": "decision_applied", "decision_id": "d-0", "escalation_id": None,
               "action": "quiet", "outcome": "cycle quiet until the session ends",
               "effect": {"kind": "quiet", "detector": "cycle", "calls": 0}}
    write_events(root, "s1", [start(), *call(1), detection, applied])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        st = app.model.sessions["s1"]
        assert st.quiets == ["cycle quiet until the session ends (from #5)"]
        assert st.detections[0].confidence == "moderate"
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert titles[-1] == "Quit"  # "qui" matches it as well: the quiets come first
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        # one entry per detector: it opens a list where the highlighted choice is what is written
        assert "Quiet similar_calls…" in commands
        assert not any("until the session ends" in title for title in commands)
        for moves, calls, lift in ((0, 20, None), (1, None, None), (2, None, True)):
            commands["Quiet similar_calls…"].callback()
            await pilot.pause()
            assert isinstance(app.screen, QuietScreen)
            for _ in range(moves):
                await pilot.press("down")
            options = app.screen.query_one(OptionList)
            shown = str(options.get_option_at_index(options.highlighted or 0).prompt)
            await press(pilot, "enter")
            await pilot.pause()
            line = control_lines(root, "s1")[-1]
            assert (line["detector"], line["calls"], line.get("lift")) == (
                "similar_calls", calls, lift), shown
            assert shown.startswith({20: "quiet it for the next 20", None: "quiet it until"}[
                calls] if not lift else "lift its quiet")
        # escape writes nothing
        commands["Quiet similar_calls…"].callback()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
    assert len(control_lines(root, "s1")) == 3


@pytest.mark.slow
def test_a_quiet_is_lifted_from_the_command_line(root: Path, tmp_path: Path) -> None:
    """`--lift` ends the quiet at the next tool call: the detector, which counted all along,
    fires again at once."""
    clock = Clock()
    guard = Guard.open(root, "s1", cwd=tmp_path, clock=clock,
                       settings=GuardSettings(checkpoints=False))
    guard.start("test-agent")
    send_decision(root, "s1", "quiet", operator="ana", detector="exact_repeat")
    assert [_fail(guard, clock) for _ in range(5)] == ["allow"] * 5
    assert _cli(root, "s1", "--detector", "exact_repeat", "--lift", "--calls", "3"
                ).returncode == 2  # a lift has no span
    out = _cli(root, "s1", "--detector", "exact_repeat", "--lift", "--no-wait")
    assert out.returncode == 0, out.stderr
    assert _fail(guard, clock) == "pause"
    applied = of_type(events(root, "s1"), "decision_applied")
    assert applied[-1]["outcome"] == "exact_repeat: quiet lifted, its findings count again"
    assert applied[-1]["effect"]["lift"] is True
    live = guard.engine.snapshot()["state"]
    guard.close()
    # a replay of the recording lifts it too
    assert replay_engine(LocalStore(root).read_all("s1").events).snapshot()["state"] == live


def test_applied_says_what_the_agent_still_waits_for() -> None:
    """A quiet (or a replan) applied while an escalation holds the agent does not let it go
    on: the CLI and the dashboard say what it still waits for."""
    from supervisor.guard.inspect import still_waiting
    from supervisor.protocol.codec import BadLine, parse_line
    from supervisor.store.summary import SessionSummary

    def summary(*lines: dict[str, Any]) -> SessionSummary:
        out = SessionSummary("s1")
        for n, line in enumerate(lines, 1):
            event = parse_line(json.dumps({"v": 1, "seq": n, "ts": float(n), **line}).encode())
            assert not isinstance(event, BadLine), event
            out.apply(event)
        return out

    begin = {"type": "session_start", "agent": "a", "task": "t", "cwd": "/w", "pid": 1}
    esc = {"type": "escalation", "escalation_id": "esc-1", "level": 3, "reason": "make 5 times",
           "evidence": [], "options": ["approve"], "deadline_ts": None, "fallback": "abort"}
    said = still_waiting(summary(begin, esc), "s1")
    assert said is not None and "still waits on escalation esc-1 (make 5 times)" in said
    paused = still_waiting(summary(begin, {**esc, "kind": "pause"}), "s1")
    assert paused is not None and "still paused" in paused and "supervisor resume s1" in paused
    answered = {"type": "decision_applied", "decision_id": "d-1", "escalation_id": "esc-1",
                "action": "approve", "outcome": "ok"}
    assert still_waiting(summary(begin, esc, answered), "s1") is None
    assert still_waiting(summary(begin), "s1") is None
