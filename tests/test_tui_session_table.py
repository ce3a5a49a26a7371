"""The sessions table widget: only changed rows are rendered again; cursor keys; widths."""

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from tui_support import FROZEN_NOW, call, load, make_app, screen_text, start, write_events

from supervisor.tui.screens.sessions import SessionsScreen
from supervisor.tui.widgets.session_table import SessionTable

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _count_renders(table: SessionTable) -> list[str]:
    """Record the key of every row the table renders from now on."""
    rendered: list[str] = []
    render_row = table._render_row

    def counting(key, *args):
        rendered.append(key)
        return render_row(key, *args)

    table._render_row = counting  # type: ignore[method-assign]
    return rendered


async def test_updating_one_session_renders_only_its_row(root: Path) -> None:
    for n in range(6):
        write_events(root, f"s{n}", [start(task=f"task {n}"), *call(1)])
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        table = app.screen.query_one(SessionTable)
        assert table.row_count == 6
        rendered = _count_renders(table)
        await load(pilot)  # nothing new: nothing rendered
        assert rendered == []
        write_events(root, "s3", [*call(2), *call(3)])
        await load(pilot)
        await pilot.pause()
        assert rendered == ["s3"]
        row = next(line for line in screen_text(app).splitlines() if " s3 " in line)
        events = app.model.sessions["s3"].summary.events
        assert events > 3 and f" {events} " in row


def _count_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every session whose row cells the sessions screen makes from now on."""
    made: list[str] = []
    cells = SessionsScreen._cells

    def counting(screen: SessionsScreen, sid: str, now: float):  # type: ignore[no-untyped-def]
        made.append(sid)
        return cells(screen, sid, now)

    monkeypatch.setattr(SessionsScreen, "_cells", counting)
    return made


def _ended(root: Path, sid: str, t0: float) -> None:
    write_events(root, sid, [start(task=f"task {sid}"), *call(1),
                             {"type": "session_end", "status": "completed", "reason": "done"}],
                 t0=t0)


async def test_an_update_makes_only_the_changed_rows_and_keeps_the_selection(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the row of the session that changed is made again (its cells, its place); it moves
    to its new place, the others keep theirs and their rendering, the cursor stays on its
    session. The old table made every row's cells at each update (1,000 sessions: the whole
    store at every update)."""
    for n in range(6):  # s5 the most recent
        _ended(root, f"s{n}", FROZEN_NOW - 4000 + 100 * n)
    app = make_app(root)
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        table = app.screen.query_one(SessionTable)
        assert table.keys == ["s5", "s4", "s3", "s2", "s1", "s0"]
        await pilot.press("down", "down")
        assert table.cursor_key == "s3"
        made, rendered = _count_made(monkeypatch), _count_renders(table)
        await load(pilot)
        assert made == [] and rendered == []  # nothing changed: nothing made, nothing drawn
        write_events(root, "s1", [{"type": "message", "role": "user", "text": "late"}],
                     t0=FROZEN_NOW - 60)
        await load(pilot)
        assert made == ["s1"]
        assert table.keys == ["s1", "s5", "s4", "s3", "s2", "s0"]  # most recent first
        assert table.cursor_key == "s3" and table.cursor_row == 3  # the same session
        assert rendered == ["s1"]  # the rows that only moved kept their rendering
        row = next(line for line in screen_text(app).splitlines() if " s1 " in line)
        assert app.model.sessions["s1"].summary.events == 5 and " 5 " in row and "50s ago" in row


async def test_time_makes_again_only_the_rows_whose_age_text_turns(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row showing `10m ago` is made again when that text turns; one showing `3d ago` is
    left alone; a live session's row at every update (its agent can die without a word)."""
    _ended(root, "recent", FROZEN_NOW - 600 - 8)  # its last event: 10 min before now
    _ended(root, "old", FROZEN_NOW - 3 * 86400)
    write_events(root, "live", [start(task="running"), *call(1)], t0=FROZEN_NOW - 30)
    now = [FROZEN_NOW]
    app = make_app(root)
    app.clock = lambda: now[0]
    async with app.run_test(size=(120, 30)) as pilot:
        await load(pilot, initial=True)
        made = _count_made(monkeypatch)
        now[0] += 20  # "10m ago" still
        await load(pilot)
        assert set(made) == {"live"}  # at each update (the app's tick may add one)
        made.clear()
        now[0] += 60
        await load(pilot)
        assert set(made) == {"live", "recent"} and made.count("recent") == 1
        assert "11m ago" in next(line for line in screen_text(app).splitlines()
                                 if " recent " in line)


async def test_cursor_keys_selection_and_widths() -> None:
    selected: list[str] = []

    class TableApp(App[None]):
        def compose(self) -> ComposeResult:
            yield SessionTable(("name", "count"))

        def on_session_table_row_selected(self, message: SessionTable.RowSelected) -> None:
            selected.append(message.key)

    app = TableApp()
    async with app.run_test(size=(40, 10)) as pilot:
        table = app.query_one(SessionTable)
        table.set_rows([(f"k{n}", (Text(f"row {n}"), Text(str(n), justify="right")))
                        for n in range(30)])
        table.focus()
        await pilot.pause()
        await pilot.press("down", "down")
        assert table.cursor_key == "k2"
        await pilot.press("pagedown")
        assert table.cursor_row > 2 + 5
        await pilot.press("end")
        assert table.cursor_key == "k29"
        assert table.scroll_y > 0  # the cursor's row is scrolled into view
        await pilot.press("home", "enter")
        assert table.cursor_key == "k0" and table.scroll_y == 0
        await pilot.pause()
        assert selected == ["k0"]
        # a longer text widens its column; markup in a cell is shown as it is
        assert table.update_row("k0", (Text("[bold]a much longer name[/bold]"), Text("0")))
        assert not table.update_row("k0", (Text("[bold]a much longer name[/bold]"), Text("0")))
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert lines[1].startswith(" [bold]a much longer name[/bold]  0")
        assert lines[0].startswith(" name" + " " * 29 + "coun")  # cut by the scrollbar
        await pilot.press("right", "right")
        assert table.scroll_x > 0  # wider than the terminal: left/right scroll sideways
        assert screen_text(app).splitlines()[0].rstrip().endswith("count")
        await pilot.press("left", "left")
        assert table.scroll_x == 0
