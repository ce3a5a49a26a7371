"""An operator's pause pauses (issue 15, item 3): no loop deadline, no fallback skip; the prompt
says so and shows the steps before it.

Guard level on real files (the SDK waiting in-process, the decision written by the operator's
own helper); the prompt through Pilot.
"""

import threading
import time
from pathlib import Path

import pytest
from tui_support import FROZEN_NOW, call, load, make_app, press, screen_text, start, write_events

from supervisor.guard import GuardSettings, Session
from supervisor.operator.send import send_decision
from supervisor.tui.screens.escalation import EscalationScreen
from tests.guard_helpers import events, of_type, wait_for


def paused_session(root: Path, work: Path, settings: GuardSettings) -> Session:
    return Session("test-agent", task="the task", cwd=work, root=root, session_id="s1",
                   settings=settings, heartbeat_s=None)


def test_a_pause_holds_past_the_loop_deadline_until_resumed(root: Path, tmp_path: Path) -> None:
    settings = GuardSettings(checkpoints=False, escalation_deadline_s=0.3)
    with paused_session(root, tmp_path, settings) as s:
        send_decision(root, "s1", "pause", operator="ana")
        resumed_at: list[float] = []

        def resume_later() -> None:
            evs = wait_for(root, "s1", lambda e: of_type(e, "escalation"), timeout=10)
            time.sleep(1.5)  # five times the loop deadline
            resumed_at.append(time.monotonic())
            send_decision(root, "s1", "approve",
                          escalation_id=of_type(evs, "escalation")[0]["escalation_id"])

        helper = threading.Thread(target=resume_later)
        helper.start()
        verdict = s.before_call("bash", {"command": "ls"})
        returned = time.monotonic()
        helper.join()
        assert (verdict.action, verdict.decision) == ("allow", "approve")
        assert returned >= resumed_at[0]
    evs = events(root, "s1")
    esc = of_type(evs, "escalation")[0]
    assert esc["kind"] == "pause" and esc["deadline_ts"] is None
    assert [d["decision_id"] for d in of_type(evs, "decision_applied")][-1] != "fallback"
    assert not [e for e in of_type(evs, "task_end") if e["status"] == "skipped"]


def test_a_pause_deadline_of_its_own_applies_the_fallback(root: Path, tmp_path: Path) -> None:
    settings = GuardSettings(checkpoints=False, escalation_deadline_s=600,
                             pause_deadline_s=0.3)
    with paused_session(root, tmp_path, settings) as s:
        s.guard.pause("paused by ana")
        verdict = s.before_call("bash", {"command": "ls"})
        assert verdict.action == "skip"
    evs = events(root, "s1")
    esc = of_type(evs, "escalation")[0]
    assert 0.25 <= esc["deadline_ts"] - esc["ts"] <= 0.5
    assert of_type(evs, "decision_applied")[-1]["decision_id"] == "fallback"
    start_event = of_type(evs, "session_start")[0]
    assert start_event["guard"]["pause_deadline_s"] == 0.3  # recorded for the dashboard


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_pause_prompt_says_it_holds_and_shows_the_steps_before_it(root: Path) -> None:
    events_ = [start()]
    for n in range(1, 4):
        events_ += call(n, cmd=f"make step{n}")
    events_ += [{"type": "heartbeat"}] * 60  # the agent waited a while before the pause
    events_ += [{"type": "escalation", "escalation_id": "esc-1", "level": 3,
                 "reason": "paused by ana", "evidence": [],
                 "options": ["approve", "guidance", "rollback", "skip", "abort"],
                 "deadline_ts": None, "fallback": "skip", "kind": "pause"}]
    events_ += [{"type": "heartbeat"}] * 40  # and waits now
    write_events(root, "s1", events_, t0=FROZEN_NOW - 400, step=2.0)
    app = make_app(root)
    async with app.run_test(size=(120, 45)) as pilot:
        await load(pilot, initial=True)
        assert "Needs you: 0" in screen_text(app)  # a pause is not a request (issue 25)
        await press(pilot, "P")  # on a paused session: its prompt
        assert isinstance(app.screen, EscalationScreen)
        text = screen_text(app)
        assert "Paused esc-1" in text and " resume " in text
        assert "Deadline: none: it holds until you resume it (a) or decide" in text
        assert "Evidence: none, an operator paused it" in text
        assert "Evidence (0 steps)" not in text
        recent = text[text.index("Recent steps before it"):]
        assert "make step3" in recent and "make step1" in recent
        assert "heartbeat" not in recent


@pytest.mark.slow
def test_a_hook_driven_pause_holds_across_hook_calls(tmp_path: Path) -> None:
    """Claude Code's hook cannot wait forever: each held call is refused when its time budget
    ends, but the pause stays (no fallback) until the operator resumes it."""
    import json

    from tests.hook_helpers import events as hook_events
    from tests.hook_helpers import payload, run_hook, start_hook

    root, ws = tmp_path / "store", tmp_path / "ws"
    root.mkdir()
    ws.mkdir()
    (root / "policy.toml").write_text("[guard]\ncheckpoints = false\nescalation_deadline_s = 1\n")
    assert run_hook(payload("SessionStart", cwd=ws, source="startup"), root).returncode == 0
    send_decision(root, "loop-1", "pause", operator="ana")
    for n in range(2):
        started = time.monotonic()
        proc = start_hook(payload("PreToolUse", cwd=ws, tool_name="Bash",
                                  tool_input={"command": "make deploy"},
                                  tool_use_id=f"toolu_{n}"), root, "--timeout", "8")
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert time.monotonic() - started < 8
        answer = json.loads(out)["hookSpecificOutput"]
        assert answer["permissionDecision"] == "deny"
        assert "on hold" in answer["permissionDecisionReason"]
    evs = hook_events(root, "loop-1")
    assert [e["kind"] for e in of_type(evs, "escalation")] == ["pause"]
    assert of_type(evs, "escalation")[0]["deadline_ts"] is None
    assert not [d for d in of_type(evs, "decision_applied") if d["decision_id"] == "fallback"]
