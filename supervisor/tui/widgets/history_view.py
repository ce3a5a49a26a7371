"""The history of one session as a Line API `ScrollView`: only the visible lines are rendered.

Rows come from a `HistoryStore` (compact arrays, already cleaned) through a `HistoryLayout`
(heartbeat runs folded, a filter applied), so a session with 100,000+ events scrolls as smoothly
as one with ten. The view follows new events live unless the operator scrolled up (scrolling back
to the end, or `end`, resumes following). A row cut at the pane's edge ends with `…`; `enter`
asks for the row's event in full (`OpenEvent`). A new filter over a big session is applied in a
worker thread; evidence rows of the selected detection are highlighted.
"""

import bisect
from collections.abc import Callable
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from supervisor.store.units import duration
from supervisor.tui.format import format_clock
from supervisor.tui.history import HistoryStore
from supervisor.tui.history_layout import HistoryFilter, HistoryLayout

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
        Binding("enter", "open", "Event in full", show=False),
    ]

    class OpenEvent(Message):
        """The operator asked for the event of store row `index` in full."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    class LayoutChanged(Message):
        """The shown rows changed (a filter applied, heartbeats folded or not)."""

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
        self.rows = HistoryLayout(store)
        self.rows.extend()
        self.filter: HistoryFilter | None = None
        self.pending_filter: HistoryFilter | None = None
        """A filter being applied in a worker (None: none is)."""
        self._generation = 0
        self.match: tuple[int, int] | None = None
        """(n, of) of the latest search: the cursor is on match n of `of`; None: no search."""
        self.evidence: set[int] = set()
        self._known = -1

    # -- data --------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def quiet(self) -> bool:
        return self.rows.quiet

    @property
    def filtering(self) -> bool:
        """A new filter is being applied (in a worker)."""
        return self.pending_filter is not None

    def store_index(self, row: int) -> int:
        return self.rows.index(row)

    def current_index(self) -> int | None:
        """Store index of the highlighted row, else of the last row shown (None: no rows)."""
        if not self.row_count:
            return None
        return self.store_index(self.cursor if self.cursor >= 0 else self.row_count - 1)

    def set_store(self, store: HistoryStore) -> None:
        """The events file was reset: show the new store, same filter and folding."""
        self.store = store
        self._relayout(self.rows.quiet, self.filter)

    def set_filter(self, text: str) -> None:
        """Show only rows the filter lets through (see `HistoryFilter`; empty: all rows)."""
        self._relayout(self.rows.quiet, HistoryFilter.parse(text))

    def set_quiet(self, quiet: bool) -> None:
        """Fold runs of heartbeats into one row, or show each of them."""
        keep = self.current_index() if self.cursor >= 0 else None
        self._relayout(quiet, self.filter, keep)

    def _relayout(self, quiet: bool, filter: HistoryFilter | None,
                  keep: int | None = None) -> None:
        self._generation += 1
        if filter is None:  # type codes only: cheap even for 100,000 rows
            layout = HistoryLayout(self.store, quiet=quiet)
            layout.extend()
            self.pending_filter = None
            self._install(layout, None, self._generation, keep)
        else:
            self.pending_filter = filter
            self._build(self.store, quiet, filter, self._generation)
            self.post_message(self.LayoutChanged())

    @work(thread=True, exclusive=True, group="history-layout")
    def _build(self, store: HistoryStore, quiet: bool, filter: HistoryFilter,
               generation: int) -> None:
        """Apply a filter in a thread: it reads the rows' lines back from the file."""
        layout = HistoryLayout(store, quiet=quiet, filter=filter)
        layout.extend(len(store))
        self.app.call_from_thread(self._install, layout, filter, generation, None)

    def _install(self, layout: HistoryLayout, filter: HistoryFilter | None, generation: int,
                 keep: int | None) -> None:
        if generation != self._generation or layout.store is not self.store:
            return  # a newer filter (or a reset file) came after this one
        self.rows = layout
        self.filter = filter
        self.pending_filter = None
        layout.extend()  # rows that arrived while the worker ran
        self.cursor = -1
        self.follow = True
        self._known = -1
        self.sync()
        row = layout.row_of(keep) if keep is not None else None
        if row is not None:
            self._move_cursor(row)
        self.post_message(self.LayoutChanged())

    def sync(self) -> None:
        """Take in rows appended since the last call (called on the app's refresh tick)."""
        changed = self.rows.extend()
        count = self.row_count
        if count == self._known and not changed:
            return
        grew = count != self._known
        self._known = count
        if grew:
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
        return self._go_to_index(index)

    def _go_to_index(self, index: int) -> bool:
        row = self.rows.row_of(index)
        if row is None and self.filter is not None:
            self._relayout(self.rows.quiet, None)
            row = self.rows.row_of(index)
        if row is None:
            return False
        self._move_cursor(row)
        return True

    def search(self, needle: str, *, backwards: bool = False) -> bool:
        """Move the cursor to the next row matching `needle` (wrapping); False when none does.

        Sets `match` to (n, of): the cursor's match among all matching rows."""
        found = self.store.matches(needle) if needle else []
        if not found:
            self.match = None
            return False
        index = self.current_index() if self.cursor >= 0 else None
        here = -1 if index is None else index
        if backwards:
            pos = bisect.bisect_left(found, here if here >= 0 else len(self.store)) - 1
            pos = pos if pos >= 0 else len(found) - 1
        else:
            pos = bisect.bisect_right(found, here)
            pos = pos if pos < len(found) else 0
        self.match = (pos + 1, len(found))
        self._go_to_index(found[pos])
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
        height = self.size.height or self.row_count  # not laid out yet: the last row
        last_shown = min(int(self.scroll_y) + height, self.row_count) - 1
        start = self.cursor if self.cursor >= 0 else last_shown  # from the last row shown
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

    def action_open(self) -> None:
        """The highlighted row in full; on a folded run of heartbeats, show each of them."""
        if not self.row_count:
            return
        row = self.cursor if self.cursor >= 0 else self.row_count - 1
        entry = self.rows.entry(row)
        if entry.folded:
            self.set_quiet(False)
            self._go_to_index(entry.index)
            return
        self.post_message(self.OpenEvent(entry.index))

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
        width = self.scrollable_content_region.width
        base = self.rich_style
        if row >= self.row_count:
            return Strip.blank(width, base)
        if y == 0:  # read the visible rows' lines back in one go
            top = int(self.scroll_y)
            last = min(top + self.size.height, self.row_count)
            self.store.prefetch(self.store_index(r) for r in range(top, last))
        entry = self.rows.entry(row)
        item = self.store.row(entry.index)
        if entry.folded:
            span = self.store.ts_of(entry.last) - item.ts
            text = self._line_text(item.seq, item.ts, "heartbeat",
                                   f"… {entry.count} heartbeats, {duration(span)}")
        else:
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
        text = Text(no_wrap=True, end="", overflow="ellipsis")
        text.append(f"{seq:>7} ", style("history--seq"))
        text.append(f"{self.clock_format(ts)} ", style("history--time"))
        text.append(f"{kind[:16]:<16} ", style(cls))
        text.append(summary, style("history--text") if cls != "history--dim" else Style())
        return text
