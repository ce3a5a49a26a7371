"""Problems: the bad lines of `events.jsonl` and `control.jsonl`, with their byte offsets and
reasons (nothing is dropped silently)."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable

from supervisor.tui.panels.base import Panel

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState


class ProblemsPanel(Panel):
    ID = "problems"
    TITLE = "Problems"
    KEY = "p"
    HELP = "Bad lines of the session's files, with their offsets and reasons"
    DEFAULT_CSS: ClassVar[str] = """
    ProblemsPanel DataTable { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield DataTable(id="problems-table", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("file", "offset", "reason", "line")

    def focus_target(self) -> DataTable:
        return self.query_one(DataTable)

    @classmethod
    def title(cls, state: "SessionState") -> str:
        return f"{cls.TITLE} ({len(state.bad_lines)})"

    def update(self, state: "SessionState", now: float) -> None:
        table = self.query_one(DataTable)
        if table.row_count > len(state.bad_lines):
            table.clear()
        if table.row_count == len(state.bad_lines):
            return
        table.add_rows(
            (bad.file, "-" if bad.offset is None else str(bad.offset), Text(bad.reason),
             Text(bad.preview, no_wrap=True, overflow="ellipsis"))
            for bad in state.bad_lines[table.row_count:]
        )
