"""Memory: what the project's failure memory did in this session (docs/memory.md): the pitfalls
offered at the start, the warnings given before calls that failed in earlier sessions, and the
failures it learned. Enter shows the call in the history. The project's whole memory is the
operator's through `supervisor memory` (list, show, forget, off)."""

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import DataTable

from supervisor.tui.format import safe
from supervisor.tui.panels.table import Row, TablePanel

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState

_STYLES = {"warned": "bold yellow", "pitfalls": "cyan", "learned": "dim"}


class MemoryPanel(TablePanel):
    ID = "memory"
    TITLE = "Memory"
    KEY = "m"
    HELP = "What the project's failure memory told the agent and learned in this session"
    COLUMNS = ("#", "kind", "entries", "what")
    EMPTY = ("Nothing from the failure memory in this session. `supervisor memory list` shows "
             "what the project's memory holds.")

    @classmethod
    def title(cls, state: "SessionState") -> str:
        warned = sum(1 for n in state.memory if n.kind == "warned")
        return f"{cls.TITLE} ({warned})" if warned else cls.TITLE

    def rows(self, state: "SessionState") -> list[Row]:
        return [Row((str(note.seq), Text(note.kind, _STYLES.get(note.kind, "")),
                     safe(", ".join(note.entries), 40), safe(note.message, 600)),
                    key=str(note.seq))
                for note in state.memory]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.post_message(self.ShowInHistory(int(event.row_key.value)))
