"""Memory: what the project's failure memory did in this session (docs/memory.md): the pitfalls
offered at the start, the warnings given before calls that failed in earlier sessions, and the
failures it learned. Enter shows the call in the history. The project's whole memory is the
operator's through `supervisor memory` (list, show, forget, off)."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from supervisor.tui.format import safe
from supervisor.tui.panels.base import Panel

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState

_STYLES = {"warned": "bold yellow", "pitfalls": "cyan", "learned": "dim"}


class MemoryPanel(Panel):
    ID = "memory"
    TITLE = "Memory"
    KEY = "m"
    HELP = "What the project's failure memory told the agent and learned in this session"
    DEFAULT_CSS: ClassVar[str] = """
    MemoryPanel DataTable { height: 1fr; }
    MemoryPanel #memory-none { height: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static("Nothing from the failure memory in this session. `supervisor memory "
                     "list` shows what the project's memory holds.", id="memory-none")
        yield DataTable(id="memory-table", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("#", "kind", "entries", "what")

    def focus_target(self) -> DataTable:
        return self.query_one(DataTable)

    def title(self, state: "SessionState") -> str:
        warned = sum(1 for n in state.memory if n.kind == "warned")
        return f"{self.TITLE} ({warned})" if warned else self.TITLE

    def update(self, state: "SessionState", now: float) -> None:
        notes = state.memory
        self.query_one("#memory-none", Static).display = not notes
        table = self.query_one(DataTable)
        table.clear()
        for note in notes:
            table.add_row(str(note.seq), Text(note.kind, _STYLES.get(note.kind, "")),
                          safe(", ".join(note.entries), 40),
                          safe(note.message, 600), key=str(note.seq))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(self.ShowInHistory(int(event.row_key.value)))
