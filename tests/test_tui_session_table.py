"""The sessions table widget: only changed rows are rendered again; cursor keys; widths."""

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from tui_support import call, load, make_app, screen_text, start, write_events

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
