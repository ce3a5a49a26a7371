"""The "Needs you" queue and the sessions screen tell the truth (issue 15, items 2, 7 and 10).

Pilot on real session files: a dead agent's escalation leaves the queue for the stale group,
`e` goes to a live one, ages and deadline countdowns tick, recordings are read-only, and an
empty or not-yet-existing root says what to do.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tui_support import (
    FROZEN_NOW,
    REPO,
    call,
    control_lines,
    escalation,
    load,
    make_app,
    opened,
    press,
    screen_text,
    start,
    write_events,
)

from supervisor.operator.send import send_decision
from supervisor.store.liveness import THIS_HOST
from supervisor.store.recordings import MARKER, ReadOnlyRecording, is_recording
from supervisor.tui.screens.escalation import EscalationScreen
from supervisor.tui.screens.session import SessionScreen
from tests.conftest import run_cli
from tests.test_operator_liveness import dead_pid

SIZE = (120, 40)
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def two_escalated(root: Path) -> None:
    """`dead-one` escalated first (its process is gone), `live-one` later (it is this test)."""
    write_events(root, "dead-one", [start(pid=dead_pid(), host=THIS_HOST),
                                    escalation("esc-1", deadline_ts=FROZEN_NOW + 300)],
                 t0=FROZEN_NOW - 60)
    write_events(root, "live-one", [start(pid=os.getpid(), host=THIS_HOST),
                                    escalation("esc-1", deadline_ts=FROZEN_NOW + 125,
                                               fallback="skip")],
                 t0=FROZEN_NOW - 20)


@pytest.mark.slow
async def test_a_dead_agent_leaves_the_queue_and_e_goes_to_a_live_one(root: Path) -> None:
    two_escalated(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert [sid for sid, _ in app.model.queue(FROZEN_NOW)] == ["live-one"]
        assert [sid for sid, _ in app.model.stale(FROZEN_NOW)] == ["dead-one"]
        text = screen_text(app)
        assert "Needs you: 1" in text and "1 stale: agent not running" in text
        assert "not running (1): their agents are gone" in text
        assert "dead: its process" in text and "is gone" in text
        row = next(line for line in text.splitlines() if line.startswith(" dead-one "))
        assert " dead " in row
        await press(pilot, "e")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        assert app.screen.session_id == "live-one"


@pytest.mark.slow
async def test_queue_ages_and_deadline_countdowns_tick(root: Path) -> None:
    two_escalated(root)
    now = [FROZEN_NOW]
    app = make_app(root)
    app.clock = lambda: now[0]
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        assert "16s ago  live-one" in text and "skip in 2:05" in text
        now[0] += 30
        app.refresh_screens()
        await pilot.pause()
        text = screen_text(app)
        assert "46s ago  live-one" in text and "skip in 1:35" in text
        now[0] += 100
        app.refresh_screens()
        await pilot.pause()
        assert "deadline passed: skip applies" in screen_text(app)


@pytest.mark.slow
async def test_an_escalation_without_deadline_says_so(root: Path) -> None:
    write_events(root, "s1", [start(), escalation("esc-1", deadline_ts=None)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert "no deadline" in screen_text(app)


# -- recordings (item 7) -----------------------------------------------------------------------


def recordings_copy(tmp_path: Path) -> Path:
    copy = tmp_path / "samples"
    shutil.copytree(REPO / "sample_sessions", copy, ignore=shutil.ignore_patterns("generated"))
    return copy


@pytest.mark.slow
def test_the_shipped_recordings_carry_the_marker_the_generator_writes(tmp_path: Path) -> None:
    assert is_recording(REPO / "sample_sessions")
    subprocess.run([sys.executable, str(REPO / "sample_sessions" / "generate.py"), "--out",
                    str(tmp_path)], check=True, capture_output=True)
    assert (tmp_path / MARKER).read_bytes() == (REPO / "sample_sessions" / MARKER).read_bytes()


@pytest.mark.slow
async def test_a_recordings_root_from_the_checkout_is_read_only(tmp_path: Path) -> None:
    samples = recordings_copy(tmp_path)
    app = make_app(samples)  # no read_only=True: the marker file decides
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert app.read_only and app.recordings
        assert "(recordings, read-only)" in screen_text(app)
        await press(pilot, "e")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        await press(pilot, "a")
        await pilot.pause()
        text = screen_text(app)
        assert "waiting for the agent" not in text
    assert not list(samples.rglob("control.jsonl.lock"))
    assert control_lines(samples, "waiting-for-operator") == []


def test_every_writer_refuses_a_recording(tmp_path: Path) -> None:
    samples = recordings_copy(tmp_path)
    with pytest.raises(ReadOnlyRecording, match="is a recording"):
        send_decision(samples, "waiting-for-operator", "approve", escalation_id="esc-1")
    answered = run_cli("answer", "waiting-for-operator", "--approve", "--root", str(samples))
    assert answered.returncode == 2 and answered.stderr.startswith("supervisor: error: ")
    assert "is a recording" in answered.stderr and "Traceback" not in answered.stderr
    assert control_lines(samples, "waiting-for-operator") == []
    # one recorded session copied into a live root is refused as well
    live = tmp_path / "live"
    shutil.copytree(samples / "sessions" / "waiting-for-operator",
                    live / "sessions" / "waiting-for-operator")
    (live / "sessions" / "waiting-for-operator" / MARKER).write_text("recorded\n")
    # private, as a live root's own: copied, it has the checkout's mode (0775 under umask 002,
    # refused first as writable by others)
    (live / "sessions" / "waiting-for-operator").chmod(0o700)
    with pytest.raises(ReadOnlyRecording, match="session 'waiting-for-operator'"):
        send_decision(live, "waiting-for-operator", "approve", escalation_id="esc-1")


# -- an empty root, a root just created, a session not there yet (item 10) ---------------------


@pytest.mark.slow
async def test_an_empty_dashboard_says_how_to_start(root: Path) -> None:
    root.mkdir()
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        assert "No sessions yet" in text
        for way in ("supervisor demo", "supervisor install claude-code",
                    "from supervisor.guard import Session"):
            assert way in text
        write_events(root, "s1", [start()])
        await load(pilot)
        assert "No sessions yet" not in screen_text(app)


@pytest.mark.slow
async def test_the_empty_dashboards_ways_to_start_read_whole_at_80_columns(root: Path) -> None:
    """At 80x24 each way to start is its command, then what it does on a line of its own:
    a description beside a 38-column command wrapped back to the left edge, under the
    commands, where it read as part of the next one."""
    root.mkdir()
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await load(pilot, initial=True)
        lines = [line.strip() for line in screen_text(app).splitlines()]
        for command, what in (
                ("supervisor demo",
                 "scripted demo agents with a dashboard on them (no model needed)"),
                ("supervisor install claude-code",
                 "then use Claude Code as usual: every session shows up here"),
                ("from supervisor.guard import Session",
                 "guard your own agent's tool calls (the SDK; see the README)")):
            assert lines[lines.index(command) + 1] == what, lines


@pytest.mark.slow
async def test_a_root_created_by_the_dashboard_is_announced(root: Path) -> None:
    root.mkdir()
    app = make_app(root, root_created=True)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert "(created empty)" in screen_text(app)
        assert any("did not exist: created it, empty" in n.message
                   for n in app._notifications)


@pytest.mark.slow
async def test_session_flag_waits_for_a_session_that_is_not_there_yet(root: Path) -> None:
    write_events(root, "other", [start()])
    app = make_app(root, open_session="later")
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert "waiting for session later to appear" in screen_text(app)
        assert any("no session later yet: waiting for it" in n.message
                   for n in app._notifications)
        write_events(root, "later", [start()])
        await load(pilot)
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen) and app.screen.session_id == "later"



@pytest.mark.slow
async def test_the_evidence_is_in_view_at_80x24(root: Path) -> None:
    """At 80x24 a long reason (the demo's) and the answers' legend filled the escalation
    screen, and the evidence below them never showed, though the legend said the arrows
    scroll it: the text above the evidence takes at most half the height (`tab` scrolls it)."""
    reason = ("Paused: this exact call (bash {\"command\":\"pytest -q\"}) already ran at #9, #16 "
              "and #26 with the same error (test_failure), and nothing changed since. The tests "
              "fail the same way; read the failing assertion and change the code before running "
              "them again. (Evidence: strong, 4 identical calls, output unchanged.)")
    write_events(root, "s1", [start(pid=os.getpid(), host=THIS_HOST), *call(1), *call(2),
                              *call(3), escalation(reason=reason, evidence=[2, 4, 6],
                                                   kind="detection")])
    async with opened(root, "e", (80, 24)) as (app, _):
        assert isinstance(app.screen, EscalationScreen)
        text = screen_text(app)
        assert "Reason: Paused: this exact call" in text and "approve (+y)" in text
        rows = [line for line in text.splitlines() if " call    bash" in line
                or " result  " in line]
        # at least a call and its result (an unsealed session's notice takes three rows more)
        assert "Evidence (3 steps" in text and len(rows) >= 2, text
