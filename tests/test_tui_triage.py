"""Pilot tests of triage on the sessions screen: sorting as in htop/k9s, columns that use the
width they get, the queue's aligned one-line entries, `tab` between table and queue, the next
pending escalation after answering, one notification for a burst, alerts outside the terminal."""

import json
import stat
from pathlib import Path

import pytest
from rich.text import Text
from tui_support import (
    FROZEN_NOW,
    call,
    control_lines,
    escalation,
    load,
    make_app,
    opened,
    press,
    screen_text,
    start,
    until,
    write_events,
)

from supervisor.tui.alerts import Alerts
from supervisor.tui.screens.escalation import EscalationScreen
from supervisor.tui.screens.modals import ConfirmScreen
from supervisor.tui.widgets.escalation_queue import EscalationQueue
from supervisor.tui.widgets.session_table import SessionTable

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # the dashboard under Pilot, whole flows


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def fleet(root: Path) -> None:
    """Five sessions: two waiting (the older escalation on `late-b`), one busy with errors,
    one quiet, one ended."""
    write_events(root, "busy", [start(agent="zeta"), *(e for n in range(1, 6) for e in call(n))],
                 t0=FROZEN_NOW - 100, step=1.0)
    write_events(root, "quiet", [start(agent="alpha"), *call(2)], t0=FROZEN_NOW - 900)
    write_events(root, "early-a", [start(agent="mu"), *call(1),
                                   escalation(reason="same_error: make fails 5 times")],
                 t0=FROZEN_NOW - 300)
    write_events(root, "late-b", [start(agent="mu"), *call(1),
                                  escalation(reason="exact_repeat: pytest 7 times")],
                 t0=FROZEN_NOW - 500)
    write_events(root, "done", [start(agent="beta"), {"type": "session_end",
                                                      "status": "completed"}],
                 t0=FROZEN_NOW - 50)


def rows(app) -> list[str]:
    return app.screen.query_one(SessionTable).keys


async def test_waiting_first_oldest_escalation_first_then_last_activity(root: Path) -> None:
    fleet(root)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        assert rows(app) == ["late-b", "early-a", "done", "busy", "quiet"]
        assert "status ▼" in screen_text(app)
        table = app.screen.query_one(SessionTable)
        table.cursor_row = rows(app).index("busy")
        await press(pilot, "s")  # last activity
        await pilot.pause()
        assert rows(app) == ["done", "busy", "early-a", "late-b", "quiet"]
        assert table.cursor_key == "busy"  # the cursor stays on its session
        await press(pilot, "s")  # errors: most first (busy has 3 failing results)
        await pilot.pause()
        assert rows(app)[0] == "busy" and "errors ▼" in screen_text(app)
        await press(pilot, "S")  # reversed
        await pilot.pause()
        assert rows(app)[-1] == "busy" and "errors ▲" in screen_text(app)
        await press(pilot, "s", "s")  # level, then agent: alphabetical
        await pilot.pause()
        assert [app.model.sessions[s].summary.agent for s in rows(app)] == [
            "alpha", "beta", "mu", "mu", "zeta"]
        await press(pilot, "s")  # around to status again
        await pilot.pause()
        assert rows(app) == ["late-b", "early-a", "done", "busy", "quiet"]


async def test_a_burst_of_keys_leaves_the_sort_and_the_rows_alone(root: Path) -> None:
    fleet(root)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        before = rows(app)
        await pilot.pause(0.5)
        for key in "xs S h":  # typed into the wrong pane: one burst
            await pilot.press("space" if key == " " else key)
        await pilot.pause()
        assert app.screen.sort.column == "status" and not app.screen.sort.reverse
        assert rows(app) == before and not app.screen.hide_ended


async def test_the_filter_excludes_with_a_bang_and_h_hides_ended_sessions(root: Path) -> None:
    fleet(root)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "h")
        await pilot.pause()
        assert "done" not in rows(app) and len(rows(app)) == 4
        assert "1 hidden (ended: h shows them)" in screen_text(app)
        await press(pilot, "h")
        await pilot.pause()
        assert "done" in rows(app)
        await press(pilot, "slash")
        for key in "mu !late":
            await pilot.press("space" if key == " " else key)
        await pilot.pause()
        assert rows(app) == ["early-a"] and "4 hidden by the filter" in screen_text(app)


async def test_q_asks_before_quitting_while_escalations_wait(root: Path) -> None:
    fleet(root)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "q")
        assert isinstance(app.screen, ConfirmScreen)
        assert "2 escalations wait for you. Quit anyway?" in screen_text(app)
        await press(pilot, "n")
        assert not isinstance(app.screen, ConfirmScreen) and app.is_running
        await press(pilot, "q", "y")
        await pilot.pause()
        assert not app.is_running


async def test_clicking_a_header_sorts_by_it_and_again_reverses(root: Path) -> None:
    fleet(root)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        table = app.screen.query_one(SessionTable)
        header = screen_text(app).splitlines()[table.region.y]
        x = header.index("agent") + 1
        await pilot.click(SessionTable, offset=(x, 0))
        await pilot.pause()
        assert app.model.sessions[rows(app)[0]].summary.agent == "alpha"
        await pilot.click(SessionTable, offset=(x, 0))
        await pilot.pause()
        assert app.model.sessions[rows(app)[0]].summary.agent == "zeta"
        assert "agent ▲" in screen_text(app)


async def test_columns_use_the_width_they_get_and_give_way_at_80(root: Path) -> None:
    long_task = "Port the whole command line interface to click, keeping every flag " * 2
    write_events(root, "a-session-with-a-long-name", [start(task=long_task), *call(1)])
    wide = make_app(root)
    async with wide.run_test(size=(300, 20)) as pilot:
        await load(pilot, initial=True)
        text = screen_text(wide)
        assert long_task.strip()[:130] in text  # not cut at 27 characters
        assert all(name in text for name in ("agent", "events", "errors", "last activity"))
    narrow = make_app(root)
    async with narrow.run_test(size=(80, 20)) as pilot:
        await load(pilot, initial=True)
        lines = screen_text(narrow).splitlines()
        header = next(line for line in lines if "status" in line)
        assert "events" not in header and "agent" not in header  # the least useful go first
        assert all(name in header for name in ("session", "task", "status", "level"))
        row = next(line for line in lines if "a-session" in line)
        assert "…" in row and len(row.rstrip()) <= 80


async def test_queue_entries_are_aligned_a_summary_line_and_the_prose(root: Path) -> None:
    write_events(root, "s", [start(), escalation(
        reason="exact_repeat: " + "a very long reason that goes on and on " * 6)])
    write_events(root, "a-longer-session", [start(), escalation("esc-2",
                                                                reason="same_error: short")])
    app = make_app(root)
    async with app.run_test(size=(104, 24)) as pilot:
        await load(pilot, initial=True)
        queue = app.screen.query_one(EscalationQueue)
        assert queue.option_count == 2
        text = screen_text(app).splitlines()
        lines = [line for line in text if "abort in" in line]
        assert len(lines) == 2, text  # a summary line each, the deadline on it
        assert len({line.index("3 escalate") for line in lines}) == 1  # aligned columns
        assert len({line.index("abort in") for line in lines}) == 1
        long = next(line for line in text if "exact_repeat: a very long" in line)
        assert long.rstrip().endswith("…")  # the prose, under it, gives way at the edge


async def test_the_queue_draws_its_first_entry_at_the_width_it_appears_with(root: Path) -> None:
    # it is hidden while empty: its first entry was drawn at a guessed 120 columns, and the
    # frames until its resize redrew it (under load, the one a test read) wrapped each line
    write_events(root, "calm", [start()])
    app = make_app(root)
    async with app.run_test(size=(104, 24)) as pilot:
        await load(pilot, initial=True)
        queue = app.screen.query_one(EscalationQueue)
        assert not queue.display
        write_events(root, "calm", [escalation()])
        app.ingest(app.follower.scan())
        app.refresh_screens()  # drawn while the queue is still hidden, before its layout
        first = queue.get_option_at_index(0).prompt
        assert isinstance(first, Text)
        summary = first.plain.splitlines()[0]
        assert "3 escalate" in summary and "abort in" in summary
        await until(pilot, lambda: queue.display and queue.scrollable_content_region.width)
        assert len(summary) == queue.scrollable_content_region.width == 102  # (laid out now)


async def test_the_queue_draws_its_first_entry_beside_its_scrollbar_when_it_overflows(
        root: Path) -> None:
    # more entries than its nine rows hold arrive at once: the queue appears with its
    # scrollbar, so its first entry is drawn at the width the scrollbar leaves (drawn wider,
    # the option list wraps each line: the deadline alone on the next row)
    for n in range(6):
        write_events(root, f"s{n}", [start()])
    app = make_app(root)
    async with app.run_test(size=(104, 30)) as pilot:
        await load(pilot, initial=True)
        queue = app.screen.query_one(EscalationQueue)
        assert not queue.display
        for n in range(6):
            write_events(root, f"s{n}", [escalation()])
        app.ingest(app.follower.scan())
        app.refresh_screens()  # drawn while the queue is still hidden, before its layout
        summary = queue.get_option_at_index(0).prompt.plain.splitlines()[0]
        assert "3 escalate" in summary and "abort in" in summary
        await until(pilot, lambda: queue.display and queue.scrollable_content_region.width)
        assert queue.show_vertical_scrollbar and queue.option_count == 6
        width = queue.scrollable_content_region.width
        assert width == 102 - queue.styles.scrollbar_size_vertical  # (laid out now)
        assert len(summary) == width
        shown = queue.get_option_at_index(0).prompt.plain.splitlines()[0]
        assert len(shown) == width  # and as it is shown after its layout


async def test_tab_moves_focus_between_table_and_queue(root: Path) -> None:
    write_events(root, "calm", [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        table = app.screen.query_one(SessionTable)
        assert app.focused is table
        await press(pilot, "tab")  # nothing in the queue: the focus stays, and says why
        assert app.focused is table
        write_events(root, "calm", [escalation()])
        await load(pilot)
        await press(pilot, "tab")
        queue = app.screen.query_one(EscalationQueue)
        assert app.focused is queue and queue.highlighted == 0
        await press(pilot, "enter")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        await press(pilot, "escape")
        await pilot.pause()
        await press(pilot, "tab")
        assert app.focused is table
        await press(pilot, "shift+tab")
        assert app.focused is queue


async def test_the_queue_highlight_stays_on_its_escalation_when_one_arrives_above(
        root: Path) -> None:
    write_events(root, "newer", [start(), escalation()], t0=FROZEN_NOW - 100)
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "tab")
        queue = app.screen.query_one(EscalationQueue)
        assert app.focused is queue and queue.highlighted == 0
        # an older escalation arrives late (a relay catching up): it sorts above the cursor
        write_events(root, "older", [start(), escalation()], t0=FROZEN_NOW - 500)
        await load(pilot)
        assert queue.option_count == 2 and queue.highlighted == 1
        await press(pilot, "enter")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen) and app.screen.session_id == "newer"


async def test_marked_escalations_are_answered_together_each_with_its_own_decision(
        root: Path) -> None:
    from supervisor.tui.screens.batch import BatchScreen

    for sid, age in (("m1", 500), ("m2", 400), ("left", 300)):
        write_events(root, sid, [start(), escalation(eid=f"esc-{sid}")], t0=FROZEN_NOW - age)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "A")  # nothing marked yet: says how to mark
        assert not isinstance(app.screen, BatchScreen)
        await press(pilot, "tab", "space", "down", "space")
        queue = app.screen.query_one(EscalationQueue)
        assert len(queue.marked) == 2 and "● " in screen_text(app)
        # a marked entry is as wide as the others, its columns where theirs are
        lines = [queue.get_option_at_index(i).prompt.plain.split("\n") for i in range(3)]
        assert [line[0][0] for line in lines] == ["●", "●", " "]
        assert len({tuple(len(part) for part in line) for line in lines}) == 1
        assert len({line[0].index(sid) for line, sid in zip(lines, ("m1", "m2", "left"),
                                                             strict=True)}) == 1
        await press(pilot, "A")
        assert isinstance(app.screen, BatchScreen)
        text = screen_text(app)
        assert "Answer 2 escalations at once" in text and "esc-m1" in text and "esc-m2" in text
        assert app.screen.answers == ["approve", "guidance", "skip", "abort"]  # no rollback
        await press(pilot, "r")  # a rollback is per session: not a key here
        assert isinstance(app.screen, BatchScreen)
        await press(pilot, "a")
        assert isinstance(app.screen, ConfirmScreen)
        assert "Approve 2 escalations m1, m2?" in screen_text(app)
        await press(pilot, "y")
        await pilot.pause()
        for sid in ("m1", "m2"):
            assert [(d["action"], d["escalation_id"]) for d in control_lines(root, sid)] == [
                ("approve", f"esc-{sid}")]
        assert control_lines(root, "left") == []
        said = [str(n.message) for n in app._notifications]
        assert any(m.startswith("approve sent to m1") for m in said)
        assert any(m.startswith("approve sent to m2") for m in said)
        assert not queue.marked


async def test_after_answering_the_prompt_offers_the_next_pending(root: Path) -> None:
    write_events(root, "first", [start(), escalation("esc-1", reason="same_error: one")],
                 t0=FROZEN_NOW - 900)
    write_events(root, "second", [start(), escalation("esc-9", reason="cycle: two")],
                 t0=FROZEN_NOW - 600)
    async with opened(root, "e") as (app, pilot):
        prompt = app.screen
        assert isinstance(prompt, EscalationScreen) and prompt.session_id == "first"
        assert "next:" not in screen_text(app)  # nothing offered before answering
        await press(pilot, "n")
        await pilot.pause()
        assert app.screen is prompt
        await press(pilot, "a", "y")
        await until(pilot, lambda: "next:" in screen_text(app))
        assert "second" in screen_text(app) and "cycle: two" in screen_text(app)
        await press(pilot, "n")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen) and app.screen.session_id == "second"


async def test_a_burst_of_arrivals_gives_one_notification(root: Path) -> None:
    for n in range(3):
        write_events(root, f"s{n}", [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        app.clear_notifications()
        for n in range(3):
            write_events(root, f"s{n}", [escalation()])
        await load(pilot)
        toasts = [n.message for n in app._notifications]
        assert len(toasts) == 1 and toasts[0].startswith("s0, s1, s2")
        assert [n.title for n in app._notifications] == ["3 escalations need you"]
        write_events(root, "s0", [escalation("esc-2", reason="cycle: again")])
        await load(pilot)
        assert [n.message for n in app._notifications][-1] == "s0 needs you: cycle: again"


async def test_no_arrival_toast_covers_an_open_prompt(root: Path) -> None:
    """An escalation's toast stood over the prompt opened to answer it (ten seconds), and
    one arriving while a prompt was open covered part of its answers and evidence: opening a
    prompt takes the arrivals' toasts away, one arriving meanwhile is said in the prompt, and
    its toast is shown once the prompt closes (if it still waits)."""
    for sid in ("s1", "s2", "s3"):
        write_events(root, sid, [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        app.clear_notifications()
        write_events(root, "s1", [escalation(reason="exact_repeat: one")])
        await load(pilot)
        assert [n.title for n in app._notifications] == ["Escalation"]
        app.notify("a word of its own", timeout=600)  # not an arrival's: it stays
        await press(pilot, "e")
        assert isinstance(app.screen, EscalationScreen)
        await pilot.pause()
        assert [n.message for n in app._notifications] == ["a word of its own"]
        assert "also waiting" not in screen_text(app)
        write_events(root, "s2", [escalation(reason="cycle: two")])
        await load(pilot)
        assert [n.message for n in app._notifications] == ["a word of its own"]
        await until(pilot, lambda: "also waiting: 1, the oldest s2" in screen_text(app))
        await press(pilot, "escape")
        await load(pilot)
        assert [n.message for n in app._notifications][-1] == "s2 needs you: cycle: two"
        await press(pilot, "e")  # s1's, the oldest
        write_events(root, "s3", [escalation(reason="cycle: three")])
        await load(pilot)
        write_events(root, "s3", [{"type": "session_end", "status": "failed"}])
        await load(pilot)  # it no longer waits when the prompt closes: no news
        await press(pilot, "escape")
        await load(pilot)
        assert not any("s3" in str(n.message) for n in app._notifications)


async def test_the_first_reads_count_does_not_cover_the_prompt_it_invites(root: Path) -> None:
    """"2 escalation(s) need you (e: answer the oldest)": `e`, and the toast stood over the
    prompt it invited for its eight seconds (at 80x24, over the evidence)."""
    write_events(root, "s1", [start(), escalation()])
    write_events(root, "s2", [start(), escalation()])
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await load(pilot, initial=True)
        await pilot.pause()
        assert [n.message for n in app._notifications] == [
            "2 escalation(s) need you (e: answer the oldest)"]
        await press(pilot, "e")
        assert isinstance(app.screen, EscalationScreen)
        await pilot.pause()
        assert list(app._notifications) == []
        await until(pilot, lambda: "also waiting: 1, the oldest s2" in screen_text(app))


def _recorder(folder: Path) -> tuple[Path, Path]:
    """An executable that appends its arguments and the escalation it was given (from its
    environment) to a JSON-lines file; returns (executable, file)."""
    folder.mkdir(exist_ok=True)
    out = folder / "calls.jsonl"
    script = folder / "record.py"
    script.write_text("#!/usr/bin/env python3\nimport json, os, sys\n"
                      f"open({str(out)!r}, 'a').write(json.dumps({{'argv': sys.argv[1:], "
                      "'session': os.environ.get('SUPERVISOR_SESSION'), "
                      "'reason': os.environ.get('SUPERVISOR_REASON')}) + '\\n')\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, out


async def test_alerts_run_for_live_arrivals_only(root: Path, tmp_path: Path) -> None:
    command, commanded = _recorder(tmp_path / "command")
    notify_send, notified = _recorder(tmp_path / "notify-send")
    write_events(root, "old", [start(), escalation()])  # pending before the dashboard started
    write_events(root, "new", [start()])
    alerts = Alerts(desktop=True, command=str(command), which=lambda name: str(notify_send))
    app = make_app(root, alerts=alerts)
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        write_events(root, "new", [escalation(reason="same_error: `boom`; $(id)")])
        await load(pilot)
        await app.workers.wait_for_complete()
    alerts.close()
    sent = [json.loads(line) for line in commanded.read_text().splitlines()]
    assert [(s["session"], s["reason"]) for s in sent] == [("new", "same_error: `boom`; $(id)")]
    desktop = [json.loads(line) for line in notified.read_text().splitlines()]
    assert len(desktop) == 1 and desktop[0]["argv"][-2:] == [
        "new needs you", "same_error: `boom`; $(id)"]


async def test_sessions_screen_keys_are_in_the_help(root: Path) -> None:
    from supervisor.tui.app import help_sections

    keys = dict(dict(help_sections())["Sessions"])
    assert keys["s"] == "Sort" and keys["S"] == "Reverse sort" and keys["tab/shift+tab"]
