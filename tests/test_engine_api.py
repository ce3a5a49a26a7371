"""The engine's public API: verdicts, events, levels, limits, operator effects, isolation."""
import json
import subprocess
import sys

import pytest

from supervisor.engine import Check, Engine, Finding, LimitHit, Policy
from tests.conftest import cli_env

FAIL = {"type": "tool_result", "ok": False, "output": "bash: foo: command not found",
        "error": "exit code 127"}


def _step(engine: Engine, i: int, command: str = "foo", ok: bool = False,
          output: str | None = None, now: float = 1.0) -> tuple[Check, list[Finding]]:
    call = {"call_id": f"c{i}", "tool": "Bash", "args": {"command": command}}
    check = engine.check(call, now)
    engine.observe({"seq": 2 * i + 1, "type": "tool_call", **call}, now)
    result = {**FAIL, "ok": ok, "seq": 2 * i + 2, "call_id": f"c{i}"}
    if output is not None:
        result["output"] = output
    return check, engine.observe(result, now)


def test_import_is_light() -> None:
    code = ("import sys, supervisor.engine as e\n"
            "eng = e.Engine(e.Policy.profile('seed-strict'))\n"
            "eng.check({'call_id': 'a', 'tool': 'Read', 'args': {'file_path': '/x'}}, 1.0)\n"
            "eng.observe({'type': 'tool_result', 'call_id': 'a', 'ok': True, 'output': 'x'}, 1)\n"
            "e.Engine.restore(eng.snapshot())\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('pydantic', 'textual', 'watchfiles', 'rapidfuzz', 'rich') or m.startswith("
            "('supervisor.store', 'supervisor.guard', 'supervisor.tui'))]\n"
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=cli_env(), check=True)
    assert out.stdout.strip() == "[]"


def test_observing_the_checked_tool_call_does_not_count_twice() -> None:
    engine = Engine()
    for i in range(3):
        _step(engine, i, command=f"cmd{i}", ok=True, output=f"o{i}")
    assert engine.steps == 3
    gauges = {g.name: g.value for g in engine.gauges(1.0)}
    assert gauges["iterations_per_session"] == 3


def test_a_tool_call_observed_without_check_is_counted_and_checked() -> None:
    engine = Engine()
    for i in range(4):
        engine.observe({"seq": 2 * i + 1, "type": "tool_call", "call_id": f"c{i}",
                        "tool": "Bash", "args": {"command": "foo"}}, 1.0)
        engine.observe({**FAIL, "seq": 2 * i + 2, "call_id": f"c{i}"}, 1.0)
    assert engine.steps == 4
    assert engine.level >= 2


def test_levels_rise_with_evidence_and_fall_with_progress() -> None:
    engine = Engine()
    for i in range(2):  # one retry of a failure is legitimate (the rubric's 3 occurrences)
        _, found = _step(engine, i)
        assert engine.level == 0 and found == []
    _, f2 = _step(engine, 2)
    assert [f.detector for f in f2] == ["exact_repeat"] and engine.level == 1
    event = f2[0].to_event()
    assert event == {"type": "detection", "detector": "exact_repeat", "level": 1,
                     "signature": f2[0].signature, "evidence": [1, 3, 5],
                     "message": f2[0].message, "action": "nudge", "confidence": "strong",
                     "basis": "3 identical calls, output unchanged"}
    assert "#" not in f2[0].message  # the evidence cites steps by seq; the model is not told
    assert "(3 times, the same call each time)" in f2[0].message  # what it can resolve
    check, _ = _step(engine, 3)
    assert check.action == "block" and check.level == 2 and engine.level == 2
    assert check.to_verdict("c3")["action"] == "block"
    for i in range(4, 8):  # real progress: new outputs from new successful calls
        _step(engine, i, command=f"ls d{i}", ok=True, output=f"file{i}")
    assert engine.level == 0


def test_escalation_pause_and_bounded_approval() -> None:
    engine = Engine()
    checks = [_step(engine, i)[0] for i in range(6)]
    assert [c.action for c in checks] == ["allow", "allow", "allow", "block", "block", "pause"]
    esc = checks[-1].escalation
    assert esc is not None and esc.kind == "detection" and esc.evidence
    assert engine.level == 3
    assert _step(engine, 6)[0].action == "pause"  # still waiting
    engine.approve(None, repeats=2)
    assert engine.level == 1
    assert [_step(engine, 7 + i)[0].action for i in range(2)] == ["allow", "allow"]
    third = _step(engine, 9)[0]
    assert third.action in ("block", "pause")  # the approval was bounded


def test_hard_limit_pauses_with_a_limit_hit() -> None:
    policy = Policy.from_dict({"limits": {"iterations_per_session": {"limit": 3,
                                                                     "action": "pause"}}})
    engine = Engine(policy)
    actions = [_step(engine, i, command=f"c{i}", ok=True, output=f"{i}")[0] for i in range(4)]
    assert [c.action for c in actions] == ["allow", "allow", "allow", "pause"]
    hit = actions[-1].limits[0]
    assert hit == LimitHit("iterations_per_session", 4, 3.0, "pause")
    assert hit.to_event() == {"type": "limit", "name": "iterations_per_session", "value": 4,
                              "limit": 3.0, "action": "pause"}
    assert actions[-1].escalation and actions[-1].escalation.kind == "limit"
    engine.approve(None)
    assert _step(engine, 4, command="c4", ok=True, output="4")[0].action == "allow"


def test_iterations_per_cycle_asks_to_continue_and_a_user_message_starts_a_new_cycle() -> None:
    engine = Engine(Policy.profile("seed-strict"))
    actions = [_step(engine, i, command=f"c{i}", ok=True, output=f"{i}")[0].action
               for i in range(10)]
    assert actions == ["allow"] * 10
    check = _step(engine, 10, command="c10", ok=True, output="10")[0]
    assert check.action == "pause"
    assert check.limits[0].name == "consecutive_tool_calls"
    engine.observe({"type": "message", "role": "user", "text": "go on"}, 2.0)
    assert _step(engine, 11, command="c11", ok=True, output="11")[0].action == "allow"


def test_seed_strict_stops_at_three_identical_failures() -> None:
    engine = Engine(Policy.profile("seed-strict"))
    actions = [_step(engine, i)[0].action for i in range(3)]
    assert actions == ["allow", "allow", "stop"]
    assert engine.level == 4
    assert _step(engine, 3, command="other")[0].action == "stop"


def test_duration_tokens_and_cost_limits() -> None:
    policy = Policy.from_dict({"limits": {"duration_s": {"limit": 60, "action": "stop"},
                                          "cost_usd": {"limit": 1.0, "action": "pause"}}})
    engine = Engine(policy)
    engine.observe({"type": "session_start", "ts": 100.0, "agent": "a"}, 100.0)
    assert _step(engine, 0, command="a", ok=True, output="a", now=120.0)[0].action == "allow"
    engine.observe({"type": "usage", "input_tokens": 10, "output_tokens": 5,
                    "cost_usd": 1.5}, 121.0)
    check = _step(engine, 1, command="b", ok=True, output="b", now=122.0)[0]
    assert check.action == "pause" and check.limits[0].name == "cost_usd"
    gauges = {g.name: (g.value, g.limit) for g in engine.gauges(130.0)}
    assert gauges["tokens"][0] == 15 and gauges["duration_s"] == (22.0, 60.0)  # paused since
    engine.go_on("c1", 150.0)  # the operator's answer: the wait for it was not work
    late = engine.check({"call_id": "z", "tool": "Bash", "args": {"command": "z"}}, 200.0)
    assert late.action == "stop" and late.limits[0].name == "duration_s"
    assert late.limits[0].value == 72.0


def _duration(engine: Engine, now: float) -> float:
    return next(g.value for g in engine.gauges(now) if g.name == "duration_s")


def test_duration_counts_working_time_not_the_waits_for_the_user_or_an_operator() -> None:
    engine = Engine()
    engine.observe({"type": "session_start", "ts": 1000.0, "agent": "a"}, 1000.0)
    engine.observe({"type": "message", "role": "user", "text": "fix it"}, 1010.0)
    _step(engine, 0, command="a", ok=True, output="a", now=1070.0)
    assert _duration(engine, 1070.0) == 60.0  # the first prompt's wait was not work either
    engine.observe({"type": "message", "role": "assistant", "text": "done"}, 1100.0)
    # the user comes back the next morning: the night was the agent waiting for its user
    engine.observe({"type": "message", "role": "user", "text": "now the docs"}, 1100.0 + 9 * 3600)
    assert _duration(engine, 1100.0 + 9 * 3600) == 90.0
    check, _ = _step(engine, 1, command="b", ok=True, output="b", now=1130.0 + 9 * 3600)
    assert check.action == "allow" and _duration(engine, 1130.0 + 9 * 3600) == 120.0
    # a guard's pause: from the escalation to the operator's decision is not work
    t = 1200.0 + 9 * 3600
    engine.observe({"type": "escalation", "escalation_id": "e1", "kind": "pause"}, t)
    assert _duration(engine, t + 5000) == _duration(engine, t) == 190.0
    engine.observe({"type": "decision_applied", "escalation_id": "e1", "action": "approve",
                    "effect": {"kind": "none", "answers": True, "repeats": 0,
                               "signature": None, "limit": None}}, t + 5000)
    assert _duration(engine, t + 5010) == 200.0
    # a silence nobody explains (a call left hanging) counts at most idle_gap_s
    gap = engine.policy.idle_gap_s
    assert _duration(engine, t + 5000 + 10 * gap) == 190.0 + gap
    # the sum is state: a restored engine goes on from it, the same from the same events
    again = Engine.restore(json.loads(json.dumps(engine.snapshot())))
    assert _duration(again, t + 5010) == 200.0


def test_a_policy_recorded_before_idle_gap_s_gets_the_default() -> None:
    data = Policy.profile().to_dict()
    del data["idle_gap_s"]
    assert Policy(data).idle_gap_s == 900.0


def test_reset_is_bounded() -> None:
    engine = Engine(Policy.profile("seed-strict"))
    for i in range(2):
        _step(engine, i)
    assert engine.level == 1
    assert engine.reset(5.0) is True and engine.level == 0
    assert engine.reset(6.0) is True
    assert engine.reset(7.0) is False
    assert {g.name: g.value for g in engine.gauges(8.0)}["resets_per_conversation"] == 2


def test_task_skipped_and_task_boundaries_clear_the_level() -> None:
    engine = Engine()
    for i in range(4):
        _step(engine, i)
    assert engine.level == 2
    engine.observe({"type": "task_end", "task_id": "t1", "status": "skipped"}, 2.0)
    assert engine.level == 0
    assert _step(engine, 4)[0].action == "allow"  # a new task: the old repeats do not count


def test_malformed_events_never_raise() -> None:
    engine = Engine()
    for event in ({}, {"type": "tool_result"}, {"type": "tool_call", "args": "x"},
                  {"type": "message", "role": "assistant", "text": None},
                  {"type": "usage", "input_tokens": "many"}, {"type": 5}, {"type": "checkpoint"}):
        assert isinstance(engine.observe(event, 1.0), list)
    assert engine.check({"tool": None, "args": None}, 1.0).action == "allow"


def test_snapshot_is_json_and_restores() -> None:
    engine = Engine()
    for i in range(3):
        _step(engine, i)
    snap = json.loads(json.dumps(engine.snapshot()))
    other = Engine.restore(snap)
    assert other.level == engine.level == 1
    assert _step(other, 3)[0].action == _step(engine, 3)[0].action == "block"


def test_snapshot_is_bounded_by_the_window() -> None:
    engine = Engine(Policy.from_dict({"window": 100, "lookback": 50}))
    for i in range(400):
        _step(engine, i, command=f"c{i}", ok=True, output=f"{i}")
    size_400 = len(json.dumps(engine.snapshot()))
    for i in range(400, 800):
        _step(engine, i, command=f"c{i}", ok=True, output=f"{i}")
    assert len(json.dumps(engine.snapshot())) < size_400 * 1.1


def test_a_recorded_decision_without_an_effect_replays_the_effect_its_action_has() -> None:
    """Recordings made before `effect` existed: the engine derives it from the action."""
    def paused() -> Engine:
        engine = Engine()
        for i in range(6):
            _step(engine, i)
        assert engine.level == 3
        return engine

    def decided(action: str) -> Engine:
        engine = paused()
        engine.observe({"type": "decision_applied", "escalation_id": "esc-1",
                        "decision_id": "d", "action": action, "outcome": "x"}, 2.0)
        return engine

    engine = decided("approve")
    assert engine.level == 1 and engine.escalation is None
    assert _step(engine, 6)[0].action == "allow"  # one of the approved repeats
    assert decided("skip").level == 0
    assert decided("guidance").level == 0
    engine = decided("abort")
    assert engine.level == 4 and _step(engine, 6)[0].action == "stop"
    assert decided("reset").level == 0
    engine = decided("rollback")
    assert engine.level == 1 and engine.escalation is None
    assert decided("bogus").level == 3


def test_a_recorded_effect_is_applied_as_recorded() -> None:
    from supervisor.engine.effects import Approve

    engine = Engine()
    for i in range(6):
        _step(engine, i)
    sig = engine.escalation.signature
    effect = Approve(True, sig, None, 1)
    engine.observe({"type": "decision_applied", "escalation_id": "esc-1", "decision_id": "d",
                    "action": "approve", "outcome": "x", "effect": effect.to_dict()}, 2.0)
    assert engine.level == 1 and engine.escalation is None
    assert _step(engine, 6)[0].action == "allow"  # the one recorded repeat
    assert _step(engine, 7)[0].action != "allow"
    # an effect that is not one is ignored, not guessed
    engine = Engine()
    for i in range(6):
        _step(engine, i)
    engine.observe({"type": "decision_applied", "decision_id": "d", "action": "approve",
                    "outcome": "x", "effect": {"kind": "teleport"}}, 2.0)
    assert engine.level == 3


def test_an_approved_escalation_is_not_asked_again_within_the_cooldown() -> None:
    engine = Engine()

    texts = ["def parse(self):", "import os, sys", "return tokens[0]", "class Lexer(Base):",
             "    raise ValueError(msg)", "if __name__ == '__main__':", "x = {}  # cache",
             "@property", "yield from items", "async def fetch(url):", "print(result)"]

    def fail(i: int, now: float) -> list[Finding]:
        call = {"call_id": f"e{i}", "tool": "Edit",
                "args": {"file_path": "/r/a.py", "old_string": texts[i]}}
        check = engine.check(call, now)
        return check.findings + engine.observe(
            {"type": "tool_result", "call_id": f"e{i}", "ok": False, "seq": i + 1,
             "output": "String to replace not found"}, now)

    escalated = []
    for i in range(6):  # looks in between do not hide a recurring error
        escalated += [f for f in fail(i, 10.0 + i) if f.level == 3]
        engine.check({"call_id": f"r{i}", "tool": "Grep", "args": {"pattern": f"p{i}"}}, 10.0)
        engine.observe({"type": "tool_result", "call_id": f"r{i}", "ok": True,
                        "output": "No matches found"}, 10.0)
    assert engine.level == 3 and [f.detector for f in escalated] == ["recurring_error"]
    engine.approve(None)
    again = [f for f in fail(7, 30.0) if f.detector == "recurring_error"]
    assert again and again[0].level == 2 and again[0].action == "block"
    assert engine.level == 2
    # and it says so: it said "Paused: ..." of the call it blocked, nothing waiting for anyone
    assert again[0].message.startswith("Blocked: ") and "Paused" not in again[0].message
    late = [f for f in fail(8, 30.0 + 301) if f.detector == "recurring_error"]
    assert late and late[0].level == 3 and engine.level == 3


def test_a_refused_call_within_the_cooldown_is_told_blocked_not_paused() -> None:
    """A call refused before it runs (exact_repeat) within the cooldown after an answered
    escalation: the model read "Paused: ..." of a call that was blocked (a live Claude Code
    session, the person's next prompt after the operator's guidance)."""
    engine = Engine()
    for i in range(6):
        check, _ = _step(engine, i)
    assert check.action == "pause" and check.message.startswith("Paused: ")
    engine.observe({"type": "decision_applied", "escalation_id": "esc-1", "decision_id": "d",
                    "action": "guidance", "outcome": "x"}, 2.0)
    actions = [_step(engine, i, now=3.0)[0] for i in range(6, 12)]
    refused = [c for c in actions if c.action != "allow"]
    assert refused and {c.action for c in refused} == {"block"}
    assert all(c.message.startswith("Blocked: ") for c in refused), [c.message for c in refused]


def test_seed_strict_stops_at_the_third_failure_with_the_same_error() -> None:
    engine = Engine(Policy.profile("seed-strict"))
    olds = ["def a():", "import b", "return c"]
    actions = []
    for i, old in enumerate(olds):
        call = {"call_id": f"e{i}", "tool": "Edit", "args": {"file_path": "/x", "old_string": old}}
        actions.append(engine.check(call, 1.0).action)
        engine.observe({"type": "tool_result", "call_id": f"e{i}", "ok": False,
                        "output": "String to replace not found in file."}, 1.0)
    assert actions == ["allow", "allow", "stop"] and engine.level == 4


def test_a_snapshot_of_an_older_engine_resumes_fresh_under_its_policy() -> None:
    old = {"v": 1, "policy": {"profile": "seed-strict", "detectors": {"gone_detector": {}}},
           "state": {"sizes": {"window": 10, "lookback": 5, "text_lookback": 3}}}
    engine = Engine.resume(old)
    assert engine.policy.name == "seed-strict" and engine.steps == 0
    with pytest.raises(ValueError):
        Engine.restore(old)
    current = Engine(Policy.profile("seed-strict"))
    _step(current, 0)
    assert Engine.resume(current.snapshot()).snapshot() == current.snapshot()
