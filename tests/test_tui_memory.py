"""The session screen's Memory panel (docs/memory.md): what the failure memory told the agent
and learned, one row per `memory` event, agent text shown safely, enter shows the call."""

from pathlib import Path

import pytest
from tui_support import call, load, make_app, press, screen_text, start, write_events

from supervisor.tui.panels.memory import MemoryPanel
from supervisor.tui.screens.session import SessionScreen
from supervisor.tui.widgets.history_view import HistoryView

SIZE = (160, 40)
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
async def test_the_memory_panel_lists_what_was_told_and_learned(root: Path) -> None:
    warned = ("Failure memory: this same call failed once in an earlier session of this "
              "project (session s0 #3), with “bash: lint: command not found”.")
    write_events(root, "s1", [
        start(),
        {"type": "memory", "kind": "pitfalls", "project": "git:x/y", "entries": ["aa11"],
         "message": "Failure memory of this project: 1. Bash “lint” failed 1x"},    # seq 2
        *call(1),                                                                   # 3-4
        {"type": "tool_call", "call_id": "c9", "tool": "Bash",
         "args": {"command": "lint"}},                                              # 5
        {"type": "memory", "kind": "warned", "call_id": "c9", "project": "git:x/y",
         "entries": ["aa11"], "message": warned},                                   # 6
        {"type": "memory", "kind": "learned", "call_id": "c9", "project": "git:x/y",
         "entries": ["aa11"], "message": "remembered “\x1b[31mred[/b] text”"},      # 7
    ])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await press(pilot, MemoryPanel.KEY)
        await pilot.pause()
        panel = screen.query_one(MemoryPanel)
        text = screen_text(app)
        assert "Memory (1)" in text  # one warning
        assert "warned" in text and "pitfalls" in text and "learned" in text
        assert "Failure memory: this same call failed onc" in text  # the panel
        assert "warned [c9] Failure memory: this same call" in text  # the history's row
        assert "\x1b" not in text and "red[/b] text" in text  # escapes gone, markup shown
        table = panel.focus_target()
        assert table.row_count == 3
        table.move_cursor(row=1)
        await press(pilot, "enter")
        await pilot.pause()
        history = screen.query_one(HistoryView)
        assert history.store.seq_of(history.current_index()) == 6


@pytest.mark.slow
async def test_the_table_panels_say_so_when_they_have_no_row(root: Path) -> None:
    """Memory and Plan share their table and its empty line (`panels.table.TablePanel`): each
    shows its own line in place of an empty table, and its table once there are rows."""
    from supervisor.tui.panels.plan import PlanPanel

    write_events(root, "s1", [start(), *call(1)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        for panel_type, line in ((MemoryPanel, "Nothing from the failure memory in this"),
                                 (PlanPanel, "No plan: answer an escalation with split")):
            await press(pilot, panel_type.KEY)
            await pilot.pause()
            panel = screen.query_one(panel_type)
            assert line in screen_text(app)
            assert panel.focus_target().row_count == 0
            assert panel.focus_target().ordered_columns[0].label.plain == "#"
