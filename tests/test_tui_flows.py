"""Pilot tests of the dashboard's flows on real files: decisions, commands, search, problems."""

import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, OptionList, TextArea
from tui_support import (
    FROZEN_NOW,
    call,
    checkpoint,
    control_lines,
    escalated_session,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    start,
    until,
    write_events,
)

from supervisor.tui.screens.escalation import EscalationScreen
from supervisor.tui.screens.modals import CheckpointPicker, ConfirmScreen, GuidanceScreen
from supervisor.tui.screens.session import SessionScreen
from supervisor.tui.screens.sessions import SessionsScreen
from supervisor.tui.widgets.checkpoint_detail import CheckpointDetail
from supervisor.tui.widgets.history_view import HistoryView
from supervisor.tui.widgets.session_table import SessionTable

SIZE = (120, 40)
pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the dashboard under Pilot, whole flows


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _open_escalation(app, pilot) -> EscalationScreen:
    await load(pilot, initial=True)
    await pilot.pause()
    await press(pilot, "e")
    await pilot.pause()
    assert isinstance(app.screen, EscalationScreen)
    return app.screen


DECISIONS = {
    "approve": (["a", "y"], {"text": None, "checkpoint_id": None}),
    "guidance": (["g", *"try make clean", "ctrl+s"],
                 {"text": "try make clean", "checkpoint_id": None}),
    "rollback": (["r", "down", "enter"], {"text": None, "checkpoint_id": "cp-1"}),
    "skip": (["s", "y"], {"text": None, "checkpoint_id": None}),
    "abort": (["x", "y"], {"text": None, "checkpoint_id": None}),
}


async def test_each_decision_kind_writes_its_control_line(root: Path) -> None:
    for action in DECISIONS:
        escalated_session(root, action)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        for action, (keys, expected) in DECISIONS.items():
            app.open_escalation(action, "esc-1")
            await pilot.pause()
            assert isinstance(app.screen, EscalationScreen)
            await press(pilot, *keys)
            lines = control_lines(root, action)
            assert len(lines) == 1, action
            line = lines[0]
            assert {k: line[k] for k in expected} == expected
            assert line["type"] == "decision" and line["action"] == action
            assert line["escalation_id"] == "esc-1"
            assert line["decision_id"].startswith("d-") and line["operator"]
            assert "waiting for the agent" in screen_text(app)
            await press(pilot, "escape")
            await pilot.pause()


async def test_abort_needs_confirmation(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _open_escalation(app, pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {f"Decide: {a}" for a in ("approve", "guidance", "rollback", "skip", "abort")
                } <= titles
        await press(pilot, "x")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "n")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        assert control_lines(root, "s1") == []


async def test_rollback_picker_shows_what_each_checkpoint_changed_and_undoes(root: Path
                                                                           ) -> None:
    escalated_session(root)  # recorded checkpoints, no repository: the events say it all
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _open_escalation(app, pilot)
        await press(pilot, "r")
        await pilot.pause()
        assert isinstance(app.screen, CheckpointPicker)
        detail = app.screen.query_one(CheckpointDetail)
        await until(pilot, lambda: detail.since is not None)
        text = screen_text(app)
        assert "cp-2" in text and "Changed since the previous checkpoint: 1 file(s)" in text
        assert "A rollback to cp-2 throws away (at least what the later" in text
        await press(pilot, "down")
        await until(pilot, lambda: detail.since is not None and detail.checkpoint is not None
                    and detail.checkpoint.checkpoint_id == "cp-1")
        text = screen_text(app)
        assert "Changed since the previous checkpoint: 2 file(s)" in text and "a.py" in text
        assert "throws away (at least what the later checkpoints changed" in text
        assert "~ b.py" in text  # cp-2 changed b.py after cp-1
        await press(pilot, "escape")
        await pilot.pause()
        assert control_lines(root, "s1") == []


async def test_outcome_applied_then_shown(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        modal = await _open_escalation(app, pilot)
        await press(pilot, "a", "y")
        await pilot.pause()
        decision_id = control_lines(root, "s1")[0]["decision_id"]
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": "esc-1",
                                   "decision_id": decision_id, "action": "approve",
                                   "outcome": "level lowered to 1"}])
        await load(pilot)
        await pilot.pause()
        assert modal.decision_id == decision_id
        text = screen_text(app)
        assert "applied: level lowered to 1 (esc-1 answered)" in text  # the guard's words
        await press(pilot, "escape")
        await pilot.pause()
        assert "Needs you: 0" in screen_text(app)


async def test_outcome_ignored_because_another_operator_answered(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _open_escalation(app, pilot)
        await press(pilot, "s", "y")
        await pilot.pause()
        ours = control_lines(root, "s1")[0]["decision_id"]
        write_events(root, "s1", [
            {"type": "decision_applied", "escalation_id": "esc-1", "decision_id": "d-other",
             "action": "approve", "outcome": "approved by bob"},
            {"type": "decision_ignored", "decision_id": ours,
             "reason": "duplicate: already answered by d-other"},
        ])
        await load(pilot)
        await pilot.pause()
        text = screen_text(app)
        assert "ignored: duplicate: already answered by d-other" in text
        assert "another operator" in text


async def test_escalation_answered_elsewhere_before_we_decide(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _open_escalation(app, pilot)
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": "esc-1",
                                   "decision_id": "d-bob", "action": "guidance",
                                   "outcome": "guidance delivered"}])
        await load(pilot)
        await pilot.pause()
        assert "already answered: guidance (d-bob)" in screen_text(app)


async def test_deadline_countdown_uses_the_injected_clock(root: Path) -> None:
    escalated_session(root)
    now = [FROZEN_NOW]
    app = make_app(root)
    app.clock = lambda: now[0]
    async with app.run_test(size=SIZE) as pilot:
        await _open_escalation(app, pilot)
        assert "2:05 left" in screen_text(app)
        now[0] += 100
        app.refresh_screens()
        await pilot.pause()
        assert "0:25 left" in screen_text(app)
        now[0] += 60
        app.refresh_screens()
        await pilot.pause()
        assert "deadline passed" in screen_text(app)


COMMANDS = {
    "pause": ("P", [], {}),
    "guidance": ("G", [*"slow down", "ctrl+s"], {"text": "slow down"}),
    "rollback": ("B", ["enter"], {"checkpoint_id": "cp-2"}),
    "reset": ("R", ["y"], {}),
    "abort": ("X", ["y"], {}),
}


async def test_operator_commands_on_a_running_session(root: Path) -> None:
    for action in COMMANDS:
        write_events(root, action, [start(), checkpoint("cp-1", 1), *call(1),
                                    checkpoint("cp-2", 4)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        for action, (key, extra_keys, expected) in COMMANDS.items():
            app.open_session(action)
            await pilot.pause()
            assert isinstance(app.screen, SessionScreen)
            await press(pilot, key)
            await pilot.pause()
            for k in extra_keys:
                await press(pilot, k)
            await pilot.pause()
            lines = control_lines(root, action)
            assert len(lines) == 1, action
            assert lines[0]["escalation_id"] is None and lines[0]["action"] == action
            assert {k: lines[0][k] for k in expected} == expected
            await press(pilot, "escape")
            await pilot.pause()


async def test_operator_command_from_the_sessions_table(root: Path) -> None:
    write_events(root, "a1", [start(task="first")])
    write_events(root, "b2", [start(task="second")])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await pilot.pause()
        await press(pilot, "down", "P")
        await pilot.pause()
        assert control_lines(root, "a1") == []
        assert control_lines(root, "b2")[0]["action"] == "pause"


async def test_commands_refused_on_ended_session_and_read_only(root: Path) -> None:
    write_events(root, "done", [start(), {"type": "session_end", "status": "completed"}])
    write_events(root, "live", [start()])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "P", "G")
        await pilot.pause()
        assert not isinstance(app.screen, GuidanceScreen)
        assert any("session ended: completed" in str(n.message) for n in app._notifications)
        assert control_lines(root, "done") == []
    app = make_app(root, read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "down", "P")
        await pilot.pause()
        assert control_lines(root, "live") == []


async def test_guidance_needs_text(root: Path) -> None:
    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "G")
        await pilot.pause()
        assert isinstance(app.screen, GuidanceScreen)
        await press(pilot, "ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, GuidanceScreen)
        app.screen.query_one(TextArea).text = "  "
        await press(pilot, "escape")
        await pilot.pause()
        assert control_lines(root, "s1") == []


async def test_filter_sessions(root: Path) -> None:
    write_events(root, "alpha", [start(agent="claude", task="write docs")])
    write_events(root, "beta", [start(agent="codex", task="fix tests")])
    write_events(root, "gamma", [start(agent="claude", task="fix lint")])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        table = app.screen.query_one(SessionTable)
        assert table.row_count == 3
        await press(pilot, "slash", *"claude fix")
        await pilot.pause()
        assert table.row_count == 1
        assert table.get_row_at(0)[0].plain == "gamma"
        await press(pilot, "enter", "escape")
        await pilot.pause()
        assert table.row_count == 3


async def test_search_and_filter_history(root: Path) -> None:
    events = [start()]
    for n in range(1, 200):
        events += call(n, cmd=f"step {n}")
    events.append({"type": "message", "role": "assistant", "text": "needle in the haystack"})
    events += call(300)
    write_events(root, "s1", events, step=0.01)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter")
        await pilot.pause()
        history = app.screen.query_one(HistoryView)
        assert history.follow
        await press(pilot, "slash", *"needle", "enter")
        await pilot.pause()
        assert not history.follow
        row = history.store.row(history.store_index(history.cursor))
        assert row.type == "message" and "needle" in row.text
        assert "needle in the haystack" in screen_text(app)
        await press(pilot, "f", *"step 17", "enter")
        await pilot.pause()
        shown = {history.store.row(history.store_index(i)).text for i in range(history.row_count)}
        assert history.row_count == 11  # the calls "step 17" and "step 170".."step 179"
        assert all("step 17" in text or "c17" in text for text in shown if text)
        await press(pilot, "f", "home", "ctrl+k", "enter")
        await pilot.pause()
        assert history.row_count == len(history.store)


async def test_the_history_line_is_read_whole_beside_the_side_bar(root: Path) -> None:
    """At 120 columns, beside the side bar, the line under the history was cut at the
    history's edge after "scrolled": its way back ("end: live") and the ellipsis were lost."""
    events = [start()]
    for n in range(1, 40):
        events += call(n, cmd=f"pytest -q tests/test_{n}.py")
    events += [{"type": "heartbeat"}] * 30
    write_events(root, "a-session", events, t0=FROZEN_NOW - 10, step=0.01)  # live
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter")
        await pilot.pause()
        await press(pilot, "slash", *"pytest", "enter")
        await pilot.pause()
        said = " ".join(screen_text(app).split())
        assert '"pytest": match 1/39 · 30 heartbeats folded (h) · scrolled (end: live)' in said


async def test_history_follows_live_unless_scrolled_up(root: Path) -> None:
    events = [start()]
    for n in range(1, 100):
        events += call(n)
    write_events(root, "s1", events, step=0.01)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter")
        await pilot.pause()
        history = app.screen.query_one(HistoryView)
        assert history.scroll_y == history.max_scroll_y > 0
        write_events(root, "s1", call(500))
        await load(pilot)
        await pilot.pause()
        assert history.scroll_y == history.max_scroll_y
        assert "c500" in screen_text(app)
        await press(pilot, "up", "up", "pageup")
        await pilot.pause()
        assert not history.follow
        held = history.scroll_y
        write_events(root, "s1", call(501))
        await load(pilot)
        await pilot.pause()
        assert history.scroll_y == held < history.max_scroll_y
        await press(pilot, "end")
        await pilot.pause()
        assert history.follow and history.scroll_y == history.max_scroll_y


async def test_selecting_a_detection_jumps_to_its_evidence(root: Path) -> None:
    events = [start()]
    for n in range(1, 150):
        events += call(n)
    events.append({"type": "detection", "detector": "exact_repeat", "level": 2,
                   "signature": "bash:make", "evidence": [21, 23], "message": "make again"})
    write_events(root, "s1", events, step=0.01)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter", "d")
        await pilot.pause()
        options = app.screen.query_one("#detections", OptionList)
        assert options.option_count == 1
        await press(pilot, "enter")
        await pilot.pause()
        history = app.screen.query_one(HistoryView)
        assert history.store.row(history.store_index(history.cursor)).seq == 21
        assert history.evidence == {21, 23, 300}
        assert "evidence [21, 23]" in screen_text(app) or "#21" in screen_text(app)


async def test_problems_view_lists_bad_lines_with_offsets(root: Path) -> None:
    write_events(root, "s1", [start()])
    path = root / "sessions" / "s1" / "events.jsonl"
    offset = path.stat().st_size
    with path.open("ab") as f:
        f.write(b"{not json\n[1,2]\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter", "p")
        await pilot.pause()
        table = app.screen.query_one("#problems-table", DataTable)
        assert table.row_count == 2
        assert table.get_row_at(0)[1] == str(offset)
        assert table.get_row_at(1)[1] == str(offset + len(b"{not json\n"))
        text = screen_text(app)
        assert "Problems (2)" in text and "invalid JSON" in text and "not a JSON object" in text


async def test_a_sessions_panels_are_made_when_first_shown(root: Path) -> None:
    """Opening a session makes the history and the first panel only (the others were most of
    a long session's time to first paint); each other panel is made, filled, when its tab is
    first shown, by its key or a click; a tab not shown yet still says its count."""
    from supervisor.tui.panels import PANELS

    write_events(root, "s1", [start()])
    with (root / "sessions" / "s1" / "events.jsonl").open("ab") as f:
        f.write(b"{not json\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        assert [type(p) for p in screen.panels()] == [PANELS[0]]
        assert "Problems (1)" in screen_text(app)  # its tab's count, the panel not made
        await press(pilot, "p")
        await pilot.pause()
        assert app.screen.query_one("#problems-table", DataTable).row_count == 1
        await pilot.click("#side Tab#--content-tab-tab-memory")
        await until(pilot, lambda: len(screen.panels()) == 3)
        assert "Memory" in [p.TITLE for p in screen.panels()]
        await press(pilot, "p")  # shown again: the same panel, not a second one
        await pilot.pause()
        assert len(screen.query("#problems-table")) == 1


async def test_vanished_session_and_new_sessions_while_running(root: Path) -> None:
    write_events(root, "keep", [start()])
    write_events(root, "gone", [start()])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "enter")
        await pilot.pause()
        assert app.screen.session_id == "gone"
        shutil.rmtree(root / "sessions" / "gone")
        write_events(root, "fresh", [start(task="new arrival"), escalation()])
        await load(pilot)
        await pilot.pause()
        assert "folder vanished" in screen_text(app)
        await press(pilot, "P")
        await pilot.pause()
        assert not (root / "sessions" / "gone").exists()  # nothing written into a vanished dir
        await press(pilot, "escape")
        await pilot.pause()
        text = screen_text(app)
        assert "fresh" in text and "Needs you: 1" in text and "vanished" in text


async def test_new_escalation_rings_and_notifies(root: Path) -> None:
    write_events(root, "s1", [start(), *call(1)])
    app = make_app(root)
    bells = []
    app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert bells == []
        write_events(root, "s1", [escalation(reason="loop [bold]detected[/]")])
        await load(pilot)
        await pilot.pause()
        assert bells == [1]
        assert any("loop [bold]detected[/]" in str(n.message) for n in app._notifications)
        assert "Needs you: 1" in screen_text(app)


async def test_queue_is_oldest_first_and_e_opens_the_oldest(root: Path) -> None:
    write_events(root, "late", [start(), escalation("esc-late")], t0=FROZEN_NOW - 100)
    write_events(root, "early", [start(), escalation("esc-early")], t0=FROZEN_NOW - 900)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await pilot.pause()
        queue = app.model.queue(FROZEN_NOW)
        assert [e["escalation_id"] for _, e in queue] == ["esc-early", "esc-late"]
        text = screen_text(app)
        assert "Needs you: 2" in text
        assert text.index("early") < text.index("late  ")
        await press(pilot, "e")
        await pilot.pause()
        assert app.screen.escalation_id == "esc-early"


async def test_help_lists_every_key(root: Path) -> None:
    app = make_app(root)
    async with app.run_test(size=(120, 80)) as pilot:  # all of it at once (it scrolls)
        await press(pilot, "question_mark")
        await pilot.pause()
        text = screen_text(app)
        for _ in range(3):  # the help scrolls: every key is in it, not all on one page
            await pilot.press("pagedown")
            await pilot.pause()
            text += screen_text(app)
        for needle in ("Approve", "Guidance", "Rollback", "Skip task", "Abort", "Pause",
                       "Reset", "Filter", "Search", "Problems", "command palette",
                       "Open the session"):
            assert needle in text, needle
        await press(pilot, "escape")
        await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)


async def test_palette_lists_every_action(root: Path) -> None:
    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for action in ("Pause", "Guidance", "Rollback", "Reset", "Abort", "Open"):
            assert f"{action} session s1" in titles
        assert "Filter sessions" in titles and "Help: every key" in titles
        assert {"Theme: supervisor-light", "Theme: supervisor-high-contrast"} <= set(titles)
        app.open_session("s1")
        await pilot.pause()
        session_titles = [c.title for c in app.get_system_commands(app.screen)]
        assert {"Search history", "Filter history", "Show problems", "Show detections",
                "Answer this session's escalation"} <= set(session_titles)
        await press(pilot, "escape")
        await pilot.pause()
        await press(pilot, "ctrl+p", *"Pause session s1")
        await pilot.pause(0.3)
        await press(pilot, "enter")
        await pilot.pause()
        assert control_lines(root, "s1")[0]["action"] == "pause"


async def test_live_follower_shows_sessions_appearing_while_running(root: Path) -> None:
    """The real watcher: a session created after start shows up, then its escalation."""
    import asyncio

    from tui_support import utc_clock

    from supervisor.tui.app import SupervisorApp

    write_events(root, "first", [start()])
    app = SupervisorApp(root, theme="supervisor-dark", clock_format=utc_clock)

    async def until(predicate, what: str) -> None:
        for _ in range(200):
            await asyncio.sleep(0.05)
            if predicate():
                return
        raise AssertionError(f"timed out waiting for {what}")

    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: "first" in app.model.sessions, "the first session")
        write_events(root, "newcomer", [start(task="arrived later")])
        await until(lambda: "newcomer" in app.model.sessions, "the new session")
        write_events(root, "newcomer", [escalation("esc-live")])
        await until(lambda: app.model.queue(FROZEN_NOW), "the escalation")
        await pilot.pause(0.4)  # one redraw tick
        text = screen_text(app)
        assert "newcomer" in text and "Needs you: 1" in text


async def test_a_selection_queued_behind_the_palettes_escape_is_dropped(root: Path) -> None:
    """A burst typed into the palette: its `enter` selected a command that was still queued when
    its `escape` closed the palette. Textual's palette then popped the screen under it (the
    sessions screen; with nothing under that, the dashboard ended in `ScreenStackError`) and ran
    the command. Closed, the palette takes no selection."""
    from textual.command import CommandList

    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "ctrl+p", *"Pause session s1")
        palette = app.screen
        listed = palette.query_one(CommandList)
        await until(pilot, lambda: listed.option_count > 0)
        selected = OptionList.OptionSelected(listed, listed.get_option_at_index(0), 0)
        palette.post_message(selected)  # the burst's enter, handled after its escape
        palette.dismiss()  # the escape
        for _ in range(5):
            await pilot.pause()
        assert isinstance(app.screen, SessionsScreen) and app.is_running
        assert control_lines(root, "s1") == []  # the command did not run


async def test_the_history_line_says_what_is_known_of_the_agent(root: Path) -> None:
    """The line under the history said "live" (following new events) of a session that
    ended, of one whose agent's process is gone and of one silent for hours: it says what is
    known (ended, not running and why, quiet and for how long, or that no one can tell)."""
    import subprocess
    import sys

    from textual.widgets import Label

    from supervisor.store.liveness import THIS_HOST

    gone = subprocess.Popen([sys.executable, "-c", "pass"])  # an agent whose process ended
    gone.wait()
    write_events(root, "done", [start(), *call(1),
                                {"type": "session_end", "status": "completed", "reason": None}])
    write_events(root, "going", [start(), *call(1)], t0=FROZEN_NOW - 10)
    write_events(root, "dead", [start(pid=gone.pid, host=THIS_HOST), *call(1)],
                 t0=FROZEN_NOW - 10)
    write_events(root, "hours", [start(), *call(1)], t0=FROZEN_NOW - 3 * 3600)
    write_events(root, "beating", [start(heartbeat_s=2.0), *call(1)], t0=FROZEN_NOW - 3 * 3600)
    write_events(root, "beating", [{"type": "heartbeat", "ts": FROZEN_NOW - 1}])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        for sid, said in (
                ("done", "the whole history"), ("going", "live"),
                ("dead", f"the agent is not running (its process {gone.pid} is gone)"),
                ("hours", "no activity for 3 h (whether the agent is still there cannot be "
                          "told)"),
                ("beating", "live, no activity for 3 h")):
            app.open_session(sid)
            await pilot.pause()
            await pilot.pause()
            state = str(app.screen.query_one("#history-state", Label).content)
            assert state.endswith(f"· {said}"), (sid, state)
            await press(pilot, "escape")
