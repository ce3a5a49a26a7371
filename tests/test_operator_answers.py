"""The escalation prompt refuses answers that cannot apply, and says when the agent does not
respond (issue 15, item 1). Pilot on real session files; nothing is written when refused."""

import os
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_support import (
    FROZEN_NOW,
    control_lines,
    escalated_session,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    start,
    write_events,
)

from supervisor.operator.send import send_decision
from supervisor.store.liveness import THIS_HOST
from supervisor.tui.followup import RESPONSE_WAIT_S
from supervisor.tui.screens.escalation import EscalationScreen
from tests.test_operator_liveness import dead_pid

SIZE = (120, 40)
pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the dashboard under Pilot, whole flows


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def open_prompt(app, pilot, sid: str = "s1") -> EscalationScreen:
    await load(pilot, initial=True)
    app.open_escalation(sid, "esc-1")
    await pilot.pause()
    assert isinstance(app.screen, EscalationScreen)
    return app.screen


async def press_and_read(app, pilot, *keys: str) -> str:
    """Press keys; then the screen's text, and the prompt's outcome box unwrapped."""
    for key in keys:
        await press(pilot, key)
        await pilot.pause()
    box = ""
    if isinstance(app.screen, EscalationScreen):
        box = str(app.screen.query_one("#esc-outcome", Static).content)
    return " ".join(screen_text(app).split()) + "\n" + box


async def test_refused_once_another_operator_answered(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": "esc-1",
                                   "decision_id": "d-alice", "action": "skip",
                                   "outcome": "task t1 skipped", "operator": "alice"}])
        await load(pilot)
        text = await press_and_read(app, pilot, "a")
        assert "already answered by alice: skip" in text
    assert control_lines(root, "s1") == []


async def test_an_answered_escalation_announces_no_fallback_any_more(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        text = await press_and_read(app, pilot)
        assert "fallback when the deadline passes: abort" in text
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": "esc-1",
                                   "decision_id": "d-alice", "action": "approve",
                                   "outcome": "approved: continue", "operator": "alice"}])
        await load(pilot)
        text = await press_and_read(app, pilot)
        assert "Deadline: answered" in text and "already answered by alice: approve" in text
        assert "fallback when the deadline passes" not in text


async def test_refused_while_another_operators_answer_is_on_its_way(root: Path) -> None:
    escalated_session(root)
    send_decision(root, "s1", "skip", escalation_id="esc-1", operator="alice")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        text = await press_and_read(app, pilot, "g")  # refused before the text box opens
        assert "already answered by alice: skip (the agent has not applied it yet)" in text
        assert "Guidance for" not in text
        # the agent applies alice's answer: the refusal's "not applied yet" is no longer true
        [line] = control_lines(root, "s1")
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": "esc-1",
                                   "decision_id": line["decision_id"], "action": "skip",
                                   "outcome": "task t1 skipped", "operator": "alice"}])
        await load(pilot)
        text = await press_and_read(app, pilot)
        assert "already answered by alice: skip" in text and "task t1 skipped" in text
        assert "not applied it yet" not in text
    assert [line["operator"] for line in control_lines(root, "s1")] == ["alice"]


async def test_refused_after_the_deadline_fallback(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": "esc-1",
                                   "decision_id": "fallback", "action": "abort",
                                   "outcome": "deadline passed: session aborted",
                                   "operator": "guard"}])
        await load(pilot)
        text = await press_and_read(app, pilot, "s")
        assert "the deadline passed: the fallback (abort) applied" in text
    assert control_lines(root, "s1") == []


async def test_refused_when_the_deadline_passed_before_the_fallback_is_recorded(
        root: Path) -> None:
    escalated_session(root)  # deadline at FROZEN_NOW + 125, fallback abort
    now = [FROZEN_NOW]
    app = make_app(root)
    app.clock = lambda: now[0]
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        assert "fallback when the deadline passes: abort" in await press_and_read(app, pilot)
        now[0] += 130
        text = await press_and_read(app, pilot, "a")
        assert "the deadline passed 5 s ago: the fallback (abort) applies" in text
        assert "fallback when the deadline passes" not in text
    assert control_lines(root, "s1") == []


async def test_refused_for_an_ended_session(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        write_events(root, "s1", [{"type": "session_end", "status": "aborted",
                                   "reason": "aborted by bob"}])
        await load(pilot)
        assert "no longer waiting: the session ended (aborted) unanswered" in (
            await press_and_read(app, pilot))  # not "already answered": nobody answered
        text = await press_and_read(app, pilot, "a")
        assert "session ended: aborted" in text
    assert control_lines(root, "s1") == []


async def test_refused_for_a_dead_agent(root: Path) -> None:
    pid = dead_pid()
    write_events(root, "gone", [start(pid=pid, host=THIS_HOST), escalation("esc-1")])
    write_events(root, "silent", [start(heartbeat_s=5.0), escalation("esc-1")],
                 t0=FROZEN_NOW - 44)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot, "gone")
        text = await press_and_read(app, pilot, "a")
        assert f"the agent is not running (its process {pid} is gone)" in text
        await press(pilot, "escape")
        app.open_escalation("silent", "esc-1")
        text = await press_and_read(app, pilot, "s")
        assert "the agent is not running (no heartbeat for 40 s)" in text
    assert control_lines(root, "gone") == [] and control_lines(root, "silent") == []


async def test_waiting_for_the_agent_turns_into_not_responding(root: Path) -> None:
    write_events(root, "s1", [start(pid=os.getpid(), host=THIS_HOST), escalation("esc-1")],
                 t0=FROZEN_NOW - 10)
    now = [FROZEN_NOW]
    app = make_app(root)
    app.clock = lambda: now[0]
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        text = await press_and_read(app, pilot, "a", "y")
        assert "waiting for the agent to apply it" in text
        now[0] += RESPONSE_WAIT_S + 2
        app.refresh_screens()
        text = await press_and_read(app, pilot)
        assert f"agent not responding: approve not applied after {RESPONSE_WAIT_S + 2:.0f} s"\
            in text
        assert "the agent has not read it (its last event was 18 s ago)" in text
        assert "waiting for the agent" not in text
    assert [line["action"] for line in control_lines(root, "s1")] == ["approve"]


async def test_an_agent_that_ends_before_reading_the_answer_is_said_so(root: Path) -> None:
    write_events(root, "s1", [start(pid=os.getpid(), host=THIS_HOST), escalation("esc-1")])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        await press_and_read(app, pilot, "a", "y")
        write_events(root, "s1", [{"type": "session_end", "status": "terminated",
                                   "reason": "stopped by SIGTERM"}])
        await load(pilot)
        text = await press_and_read(app, pilot)
        assert "the session ended (terminated) before the agent read your approve" in text


async def test_an_answer_another_dashboard_wrote_a_moment_ago_is_refused(root: Path) -> None:
    """Two dashboards on one escalation: alice's answer is in the control channel, but this
    dashboard's follower has not read it yet (it reads at its tick); the answer is still
    refused, from what the store holds when it is given, not written second."""
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        send_decision(root, "s1", "skip", escalation_id="esc-1", operator="alice")
        text = await press_and_read(app, pilot, "a", "y")  # no load: the follower lags
        assert "already answered by alice: skip (the agent has not applied it yet)" in text
    assert [line["operator"] for line in control_lines(root, "s1")] == ["alice"]


async def test_an_answer_the_agent_forged_does_not_refuse_the_operators(root: Path) -> None:
    """The agent can append to `control.jsonl`: an unsealed "approve by alice" is no answer
    (the guard rejects it), so it neither refuses the operator's nor is said to be alice's."""
    import json

    escalated_session(root)
    forged = {"v": 1, "seq": 1, "ts": FROZEN_NOW, "type": "decision", "decision_id": "d-forged",
              "escalation_id": "esc-1", "action": "approve", "text": None,
              "checkpoint_id": None, "operator": "alice"}
    with open(root / "sessions" / "s1" / "control.jsonl", "a") as control:
        control.write(json.dumps(forged) + "\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await open_prompt(app, pilot)
        text = await press_and_read(app, pilot, "s", "y")
        assert "already answered" not in text and "waiting for the agent to apply it" in text
    lines = control_lines(root, "s1")
    assert [(line["action"], "seal" in line) for line in lines] == [
        ("approve", False), ("skip", True)]
