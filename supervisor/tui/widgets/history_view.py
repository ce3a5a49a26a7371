"""The history of one session as a Line API `ScrollView`: only the visible lines are rendered.

Rows come from a `HistoryStore` (compact arrays, already cleaned), so a session with 100,000+
events scrolls as smoothly as one with ten. The view follows new events live unless the operator
scrolled up (scrolling back to the end, or `end`, resumes following). A filter narrows the rows
to those matching a text; evidence rows of the selected detection are highlighted.
"""

import time
from collections.abc import Callable
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from supervisor.tui.history import HistoryStore

_TYPE_CLASSES = {
    "tool_call": "history--call",
    "tool_result": "history--result",
    "message": "history--message",
    "detection": "history--warn",
    "verdict": "history--verdict",
    "limit": "history--warn",
    "escalation": "history--alert",
    "decision_applied": "history--ok",
    "decision_ignored": "history--warn",
    "checkpoint": "history--ok",
    "rollback": "history--warn",
    "session_end": "history--alert",
    "heartbeat": "history--dim",
}


def format_clock(ts: float) -> str:
    """`HH:MM:SS` in local time (the store keeps Unix seconds)."""
    return time.strftime("%H:%M:%S", time.localtime(ts)) if ts else "--:--:--"


class HistoryView(ScrollView, can_focus=True):
    """Scrollable history lines: `seq  time  type  summary`."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "history--seq", "history--time", "history--call", "history--result",
        "history--error", "history--message", "history--warn", "history--verdict",
        "history--alert", "history--ok", "history--dim", "history--cursor",
        "history--evidence", "history--text",
    }
    DEFAULT_CSS = """
    HistoryView { background: $surface; }
    HistoryView > .history--seq { color: $text-muted; }
    HistoryView > .history--time { color: $text-muted; }
    HistoryView > .history--call { color: $primary; text-style: bold; }
    HistoryView > .history--result { color: $success; }
    HistoryView > .history--error { color: $error; text-style: bold; }
    HistoryView > .history--message { color: $secondary; }
    HistoryView > .history--warn { color: $warning; text-style: bold; }
    HistoryView > .history--verdict { color: $accent; }
    HistoryView > .history--alert { color: $error; text-style: bold reverse; }
    HistoryView > .history--ok { color: $success; text-style: bold; }
    HistoryView > .history--dim { color: $text-disabled; }
    HistoryView > .history--cursor { background: $primary 35%; }
    HistoryView > .history--evidence { background: $warning 25%; }
    HistoryView > .history--text { color: $foreground; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "cursor(-20)", "Page up", show=False),
        Binding("pagedown", "cursor(20)", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "follow", "Follow", show=False),
    ]

    follow: reactive[bool] = reactive(True)
    cursor: reactive[int] = reactive(-1)
    """Index in the shown rows of the highlighted line; -1 when following."""

    def __init__(
        self, store: HistoryStore, *, clock_format: Callable[[float], str] = format_clock,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.store = store
        self.clock_format = clock_format
        self._filter: str = ""
        self._rows: list[int] | None = None
        """Store indices shown when a filter is set (None: all rows)."""
        self._filtered_upto = 0
        self.evidence: set[int] = set()
        self._known = -1

    # -- data --------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.store) if self._rows is None else len(self._rows)

    def store_index(self, row: int) -> int:
        return row if self._rows is None else self._rows[row]

    def set_store(self, store: HistoryStore) -> None:
        self.store = store
        self._known = -1
        self.set_filter(self._filter)

    def set_filter(self, text: str) -> None:
        """Show only rows whose type or text contains `text` (empty: all rows)."""
        self._filter = text.strip()
        self._rows = self.store.matches(self._filter) if self._filter else None
        self._filtered_upto = len(self.store)
        self.cursor = -1
        self.follow = True
        self._known = -1
        self.sync()

    def sync(self) -> None:
        """Take in rows appended since the last call (called on the app's refresh tick)."""
        size = len(self.store)
        if self._rows is not None and size > self._filtered_upto:
            self._rows.extend(self.store.matches(self._filter, self._filtered_upto, size))
            self._filtered_upto = size
        elif self._rows is not None and size < self._filtered_upto:
            self.set_filter(self._filter)
            return
        count = self.row_count
        if count == self._known:
            return
        self._known = count
        self.virtual_size = Size(self.size.width, count)
        if self.follow:
            self.scroll_end(animate=False, immediate=True)
            self.call_after_refresh(self._stay_at_end)
        self.refresh()

    def _stay_at_end(self) -> None:
        if self.follow and self.scroll_y < self.max_scroll_y:
            self.scroll_end(animate=False, immediate=True)

    # -- navigation --------------------------------------------------------------------------

    def jump_to_seq(self, seq: int, evidence: set[int] | None = None) -> bool:
        """Put the cursor on the row with `seq` (clearing a filter that hides it)."""
        if evidence is not None:
            self.evidence = evidence
        index = self.store.index_of_seq(seq)
        if index is None:
            return False
        if self._rows is not None and index not in self._rows:
            self.set_filter("")
        row = index if self._rows is None else self._rows.index(index)
        self._move_cursor(row)
        return True

    def search(self, needle: str, *, backwards: bool = False) -> bool:
        """Move the cursor to the next row matching `needle`; False when none matches."""
        start = self.store_index(self.cursor) if self.cursor >= 0 else 0
        start = start - 1 if backwards else start + 1
        index = self.store.search(needle, max(0, min(start, len(self.store) - 1)),
                                  backwards=backwards)
        if index is None:
            return False
        if self._rows is not None and index not in self._rows:
            self.set_filter("")
        self._move_cursor(index if self._rows is None else self._rows.index(index))
        return True

    def _move_cursor(self, row: int) -> None:
        self.follow = False
        self.cursor = max(0, min(row, self.row_count - 1))
        self.scroll_to(y=max(0, self.cursor - self.size.height // 2), animate=False,
                       immediate=True)
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        if not self.row_count:
            return
        start = self.cursor if self.cursor >= 0 else int(self.scroll_y) + self.size.height - 1
        self.follow = False
        self.cursor = max(0, min(start + delta, self.row_count - 1))
        if self.cursor < self.scroll_y:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= self.scroll_y + self.size.height:
            self.scroll_to(y=self.cursor - self.size.height + 1, animate=False, immediate=True)
        self.refresh()

    def action_first(self) -> None:
        self._move_cursor(0)

    def action_follow(self) -> None:
        """Back to the end, following new events."""
        self.follow = True
        self.cursor = -1
        self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value and new_value < self.max_scroll_y:
            self.follow = False  # the operator scrolled up: stop following
        elif new_value >= self.max_scroll_y and self.cursor < 0:
            self.follow = True

    def on_resize(self) -> None:
        self._known = -1
        self.sync()

    # -- rendering ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        row = int(self.scroll_y) + y
        width = self.size.width
        base = self.rich_style
        if row >= self.row_count:
            return Strip.blank(width, base)
        if y == 0:  # read the visible rows' lines back in one go
            top = int(self.scroll_y)
            last = min(top + self.size.height, self.row_count)
            self.store.prefetch(self.store_index(r) for r in range(top, last))
        item = self.store.row(self.store_index(row))
        text = self._line_text(item.seq, item.ts, item.type, item.text)
        line_style = base
        if row == self.cursor:
            line_style = base + self.get_component_rich_style("history--cursor")
        elif item.seq in self.evidence:
            line_style = base + self.get_component_rich_style("history--evidence")
        text.truncate(width, overflow="ellipsis", pad=True)
        segments = [
            Segment(seg.text, line_style + seg.style if seg.style else line_style)
            for seg in text.render(self.app.console)
            if seg.text != "\n"
        ]
        return Strip(segments, width).crop(0, width)

    def _line_text(self, seq: int, ts: float, kind: str, summary: str) -> Text:
        style = self.get_component_rich_style
        cls = _TYPE_CLASSES.get(kind, "history--text")
        if kind == "tool_result" and summary.startswith("ERROR"):
            cls = "history--error"
        text = Text(no_wrap=True, end="")
        text.append(f"{seq:>7} ", style("history--seq"))
        text.append(f"{self.clock_format(ts)} ", style("history--time"))
        text.append(f"{kind[:16]:<16} ", style(cls))
        text.append(summary, style("history--text") if cls != "history--dim" else Style())
        return text
