"""The sessions table as a Line API `ScrollView`: a fixed header and one row per session.

Textual's `DataTable` re-renders every visible cell after any `update_cell` (its render caches
are keyed by a table-wide update count); with 50 busy sessions every row changes every second
and the redraw alone costs a large share of a core. This widget keeps one rendered `Strip` per
row and, on an update, compares the cells' text and style with what the row shows: only rows
that changed are rendered again and only their lines are refreshed. Cells are `rich.text.Text`
made by the caller (agent text already cleaned), so nothing here interprets markup.
"""

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

PADDING = 1
"""Blank cells on each side of a column (as `DataTable`'s default)."""

Signature = tuple[tuple[str, str], ...]


def signature(cells: tuple[Text, ...]) -> Signature:
    """What a row shows: (text, style) per cell; equal signatures render equal lines."""
    return tuple((c.plain, str(c.style)) for c in cells)


class SessionTable(ScrollView, can_focus=True):
    """Rows of `Text` cells keyed by session id, with a row cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-table--header", "session-table--cursor", "session-table--even-row",
        "session-table--odd-row",
    }
    DEFAULT_CSS = """
    SessionTable { background: $surface; color: $foreground; }
    SessionTable:focus { background-tint: $foreground 5%; }
    SessionTable > .session-table--header {
        text-style: bold; background: $panel; color: $foreground;
    }
    SessionTable:ansi > .session-table--header {
        background: ansi_bright_blue; color: ansi_default;
    }
    SessionTable:focus > .session-table--header { background-tint: $foreground 5%; }
    SessionTable > .session-table--even-row { background: $surface-lighten-1 50%; }
    SessionTable:dark > .session-table--even-row { background: $surface-darken-1 40%; }
    SessionTable > .session-table--cursor {
        background: $block-cursor-blurred-background;
        color: $block-cursor-blurred-foreground;
        text-style: $block-cursor-blurred-text-style;
    }
    SessionTable:focus > .session-table--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
        text-style: $block-cursor-text-style;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select", "Open the session", show=False),
        Binding("up", "cursor(-1)", "Cursor up", show=False),
        Binding("down", "cursor(1)", "Cursor down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,ctrl+home", "first", "First row", show=False),
        Binding("end,ctrl+end", "last", "Last row", show=False),
        Binding("left", "scroll_left", "Scroll left", show=False),
        Binding("right", "scroll_right", "Scroll right", show=False),
    ]

    class RowSelected(Message):
        """The operator chose a row (enter or a click)."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    cursor_row: reactive[int] = reactive(0)

    def __init__(self, columns: tuple[str, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = columns
        self._keys: list[str] = []
        self._index: dict[str, int] = {}
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._sigs: dict[str, Signature] = {}
        self._strips: dict[str, tuple[tuple[object, ...], Strip]] = {}
        """Rendered line per row, with what it was rendered for (cursor, stripe, width, style)."""
        self._widths = [len(name) for name in columns]

    # -- data --------------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def keys(self) -> list[str]:
        """Row keys in display order."""
        return list(self._keys)

    def get_row_at(self, row: int) -> tuple[Text, ...]:
        return self._cells[self._keys[row]]

    @property
    def cursor_key(self) -> str | None:
        """The session under the cursor (None when the table is empty)."""
        if 0 <= self.cursor_row < len(self._keys):
            return self._keys[self.cursor_row]
        return None

    def set_rows(self, rows: list[tuple[str, tuple[Text, ...]]]) -> None:
        """Replace every row (rows left or moved); the cursor stays on its session if shown."""
        keep = self.cursor_key
        self._keys = [key for key, _ in rows]
        self._index = {key: i for i, key in enumerate(self._keys)}
        self._cells = dict(rows)
        self._sigs = {key: signature(cells) for key, cells in rows}
        self._strips.clear()
        self._widths = [len(name) for name in self.columns]
        for cells in self._cells.values():
            self._widen(cells)
        self._resized()
        self.cursor_row = self._index.get(keep, 0) if keep is not None else 0
        self.refresh()

    def update_row(self, key: str, cells: tuple[Text, ...]) -> bool:
        """Show `cells` on the row `key` (appended when new); False when nothing changed.

        Only a row whose cells' text or style changed is rendered again and refreshed.
        """
        sig = signature(cells)
        if self._sigs.get(key) == sig:
            return False
        self._sigs[key] = sig
        self._cells[key] = cells
        self._strips.pop(key, None)
        row = self._index.get(key)
        if row is None:
            row = self._index[key] = len(self._keys)
            self._keys.append(key)
            self.virtual_size = Size(self._total_width(), len(self._keys) + 1)
        if self._widen(cells):
            self._resized()
            self.refresh()
        else:
            self.refresh_lines(row + 1)
        return True

    def _widen(self, cells: tuple[Text, ...]) -> bool:
        wider = False
        for i, cell in enumerate(cells):
            if cell.cell_len > self._widths[i]:
                self._widths[i] = cell.cell_len
                wider = True
        return wider

    def _total_width(self) -> int:
        return sum(self._widths) + 2 * PADDING * len(self._widths)

    def _resized(self) -> None:
        self._strips.clear()
        self.virtual_size = Size(self._total_width(), len(self._keys) + 1)

    # -- cursor ------------------------------------------------------------------------------

    def validate_cursor_row(self, row: int) -> int:
        return max(0, min(row, len(self._keys) - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        self.refresh_lines(old + 1)
        self.refresh_lines(new + 1)
        self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        shown = max(1, self.scrollable_content_region.height - 1)
        if self.cursor_row < self.scroll_y:
            self.scroll_to(y=self.cursor_row, animate=False, immediate=True)
        elif self.cursor_row >= self.scroll_y + shown:
            self.scroll_to(y=self.cursor_row - shown + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self.cursor_row += delta

    def action_page(self, direction: int) -> None:
        self.cursor_row += direction * max(1, self.scrollable_content_region.height - 1)

    def action_first(self) -> None:
        self.cursor_row = 0

    def action_last(self) -> None:
        self.cursor_row = len(self._keys) - 1

    def action_select(self) -> None:
        if self.cursor_key is not None:
            self.post_message(self.RowSelected(self.cursor_key))

    def on_click(self, event: events.Click) -> None:
        row = int(self.scroll_y) + event.y - 1
        if event.y >= 1 and 0 <= row < len(self._keys):
            self.cursor_row = row
            self.post_message(self.RowSelected(self._keys[row]))

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()

    # -- rendering ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.rich_style
        scroll_x = int(self.scroll_x)
        if y == 0:
            style = base + self.get_component_rich_style("session-table--header")
            header = tuple(Text(name) for name in self.columns)
            return self._line(header, style, Style.null()).crop(scroll_x, scroll_x + width)
        row = int(self.scroll_y) + y - 1
        if row >= len(self._keys):
            return Strip.blank(width, base)
        key = self._keys[row]
        cursor = row == self.cursor_row
        state: tuple[object, ...] = (cursor, row % 2, base, width, tuple(self._widths))
        cached = self._strips.get(key)
        if cached is None or cached[0] != state:
            cls = ("session-table--cursor" if cursor else
                   "session-table--odd-row" if row % 2 else "session-table--even-row")
            component = self.get_component_rich_style(cls)
            # the cursor's text colour wins over the cells' own; their backgrounds stay (as in
            # DataTable's defaults)
            post = Style.from_color(color=component.color) if cursor else Style.null()
            cached = (state, self._render_row(key, base + component, post))
            self._strips[key] = cached
        return cached[1].crop_extend(scroll_x, scroll_x + width, base)

    def _render_row(self, key: str, style: Style, post: Style) -> Strip:
        """Render one row's full line (called only when the row or its look changed)."""
        return self._line(self._cells[key], style, post)

    def _line(self, cells: tuple[Text, ...], style: Style, post: Style) -> Strip:
        line = Text(no_wrap=True, end="")
        pad = " " * PADDING
        for cell, width in zip(cells, self._widths, strict=True):
            shown = cell.copy()
            shown.align("right" if cell.justify == "right" else "left", width)
            line.append(pad)
            line.append_text(shown)
            line.append(pad)
        segments = []
        for seg in line.render(self.app.console):
            if seg.text == "\n":
                continue
            seg_style = style + seg.style if seg.style else style
            segments.append(Segment(seg.text, seg_style + post))
        # the row's look runs to the right edge, as DataTable's
        return Strip(segments, line.cell_len).extend_cell_length(self.size.width, style)
