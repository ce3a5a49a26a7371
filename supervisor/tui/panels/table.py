"""A panel that is one table: a row per item of the session, and a line in the table's place
while there is none (the Plan and Memory panels).

The shared part of such a panel, in one place: the placeholder line and the table (ids
`<ID>-none` and `<ID>-table`), the columns added once, the table taking the focus, and
`update` refilling the table from `rows` and showing the line when it is empty. A subclass
names its `COLUMNS` and `EMPTY` line and says what its `rows` are; what a row does when chosen
stays the subclass's own (Memory shows the call in the history, Plan's keys change the plan).
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.console import RenderableType
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from supervisor.tui.panels.base import Panel

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState


class Row(NamedTuple):
    """One row: its cells (agent text already made safe), and its key (None: no key)."""

    cells: Sequence[RenderableType]
    key: str | None = None


class TablePanel(Panel):
    """See the module docstring."""

    COLUMNS: ClassVar[tuple[str, ...]]
    EMPTY: ClassVar[str]
    """The line shown while there is no row (the operator's words, never agent text)."""
    DEFAULT_CSS: ClassVar[str] = """
    TablePanel DataTable { height: 1fr; }
    TablePanel .table-empty { height: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static(self.EMPTY, id=f"{self.ID}-none", classes="table-empty")
        yield DataTable(id=f"{self.ID}-table", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns(*self.COLUMNS)

    def focus_target(self) -> DataTable:
        return self.query_one(DataTable)

    def rows(self, state: "SessionState") -> list[Row]:
        """The table's rows for `state`."""
        raise NotImplementedError

    def update(self, state: "SessionState", now: float) -> None:
        rows = self.rows(state)
        self.query_one(f"#{self.ID}-none", Static).display = not rows
        table = self.query_one(DataTable)
        table.clear()
        for row in rows:
            table.add_row(*row.cells, key=row.key)
