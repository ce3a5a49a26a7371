"""The sessions table as a Line API `ScrollView`: a fixed header and one row per session.

Textual's `DataTable` re-renders every visible cell after any `update_cell` (its render caches
are keyed by a table-wide update count); with 50 busy sessions every row changes every second
and the redraw alone costs a large share of a core. This widget keeps one rendered `Strip` per
row and, on an update, compares the cells' text and style with what the row shows: only rows
that changed are rendered again and only their lines are refreshed. Cells are `rich.text.Text`
made by the caller (agent text already cleaned), so nothing here interprets markup.

Columns use the width they are given: each `Column` has a minimum, a share of the extra width
(`flex`) and a rank at which it gives way (`drop`) when even the minimums do not fit, so at 80
columns the least useful columns go first and on a wide screen a long task is not cut. A cell
wider than its column ends with `…`. A click on a header asks for a sort by that column
(`HeaderClicked`); the sort column's header carries ▼ (or ▲ reversed).
"""

from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class Column:
    """A column: its header, its minimum width, its share of extra width (0: as wide as its
    widest cell), and when it gives way on a narrow screen (0: never; higher: sooner)."""

    name: str
    min: int = 0
    flex: int = 0
    drop: int = 0


def fit(columns: tuple[Column, ...], natural: list[int], available: int) -> list[int | None]:
    """Each column's width in `available` cells (padding included), None when it gave way.

    Fixed columns get their natural width; flexible ones at least their minimum and then the
    extra width in proportion to `flex`, never more than their widest cell."""
    pad = 2 * PADDING
    low = [n if not c.flex else min(c.min, n) for c, n in zip(columns, natural, strict=True)]
    shown = list(range(len(columns)))

    def need() -> int:
        return sum(low[i] + pad for i in shown)

    while need() > available:
        droppable = [i for i in shown if columns[i].drop > 0]
        if not droppable:
            break  # the rest never gives way: the table scrolls sideways
        shown.remove(max(droppable, key=lambda i: columns[i].drop))
    widths: list[int | None] = [None] * len(columns)
    for i in shown:
        widths[i] = low[i]
    extra = available - need()
    growing = [i for i in shown if columns[i].flex and low[i] < natural[i]]
    while extra > 0 and growing:
        total = sum(columns[i].flex for i in growing)
        given = 0
        for i in growing:
            share = max(1, extra * columns[i].flex // total)
            add = min(share, natural[i] - widths[i], extra - given)  # type: ignore[operator]
            widths[i] += add  # type: ignore[operator]
            given += add
        extra -= given
        growing = [i for i in growing if widths[i] < natural[i]]  # type: ignore[operator]
        if given == 0:
            break
    return widths


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

    class HeaderClicked(Message):
        """The operator clicked the header of `column`."""

        def __init__(self, column: str) -> None:
            super().__init__()
            self.column = column

    cursor_row: reactive[int] = reactive(0)

    def __init__(self, columns: tuple[str | Column, ...], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.columns = tuple(c if isinstance(c, Column) else Column(c) for c in columns)
        self.sort: tuple[str, bool] | None = None
        """The sort column's name and whether it is reversed (for the header's arrow)."""
        self._keys: list[str] = []
        self._index: dict[str, int] = {}
        self._cells: dict[str, tuple[Text, ...]] = {}
        self._sigs: dict[str, Signature] = {}
        self._rendered: dict[str, tuple[tuple[int | None, ...], list[Segment]]] = {}
        """Each row's cells rendered (with the widths they were rendered at), without the
        row's own look: a row that only moves (sorting) is not rendered again."""
        self._strips: dict[str, tuple[tuple[object, ...], Strip]] = {}
        """Each row's line as drawn, with what it was drawn for (cursor, stripe, width, style)."""
        self._natural = [self._header_width(c) for c in self.columns]
        """The widest cell (or header) of each column."""
        self._widths: list[int | None] = list(self._natural)
        """Each column's width as fitted to the table's width (None: the column gave way)."""

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
        """Replace every row (rows left or moved); the cursor stays on its session if shown.
        Rows whose cells did not change keep their rendering (only their look is redone)."""
        keep = self.cursor_key
        self._keys = [key for key, _ in rows]
        self._index = {key: i for i, key in enumerate(self._keys)}
        sigs = {key: signature(cells) for key, cells in rows}
        self._rendered = {key: r for key, r in self._rendered.items()
                          if self._sigs.get(key) == sigs.get(key)}
        self._cells = dict(rows)
        self._sigs = sigs
        self._strips.clear()
        natural = list(self._natural)
        self._natural = [self._header_width(c) for c in self.columns]
        for cells in self._cells.values():
            self._widen(cells)
        if self._natural != natural or not self._widths:
            self._resized()
        else:
            self.virtual_size = Size(self._total_width(), len(self._keys) + 1)
        self.cursor_row = self._index.get(keep, 0) if keep is not None else 0
        self.refresh()

    def show(self, order: list[str] | None, cells: dict[str, tuple[Text, ...]]) -> None:
        """New `cells` for some rows, and when rows were added, left or moved, every row's key
        in its `order` (each row new to the table has its cells in `cells`). Only rows whose
        cells changed are rendered again; a row that only moved keeps its rendering; the
        cursor stays on its session. The cost follows the rows changed (a new order is one
        pass over the keys, no cell looked at)."""
        if order is None:
            for key, row in cells.items():
                self.update_row(key, row)
            return
        keep = self.cursor_key
        wider = False
        for key, row in cells.items():
            sig = signature(row)
            if self._sigs.get(key) != sig:
                self._sigs[key] = sig
                self._cells[key] = row
                self._rendered.pop(key, None)
                self._strips.pop(key, None)
                wider |= self._widen(row)
        index = {key: i for i, key in enumerate(order)}
        left = self._index.keys() - index.keys()
        if left:
            for key in left:
                for kept in (self._cells, self._sigs, self._rendered, self._strips):
                    kept.pop(key, None)
            natural = self._natural
            self._natural = [self._header_width(c) for c in self.columns]
            for row in self._cells.values():  # a column may narrow (rare: a row left)
                self._widen(row)
            wider |= self._natural != natural
        self._keys = list(order)
        self._index = index
        if wider:
            self._resized()
        else:
            self.virtual_size = Size(self._total_width(), len(self._keys) + 1)
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
        self._rendered.pop(key, None)
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
            if cell.cell_len > self._natural[i]:
                self._natural[i] = cell.cell_len
                wider = True
        return wider

    def _header_width(self, column: Column) -> int:
        return len(column.name) + 2  # room for the sort arrow

    def _total_width(self) -> int:
        return sum(w + 2 * PADDING for w in self._widths if w is not None)

    def _resized(self) -> None:
        """Fit the columns to the width again (the content or the table's width changed)."""
        available = self.scrollable_content_region.width or self.size.width
        fitted: list[int | None] = fit(self.columns, self._natural, available) if available \
            else [*self._natural]
        self._widths = fitted
        self._strips.clear()  # the renderings know their widths: they redo themselves
        self.virtual_size = Size(self._total_width(), len(self._keys) + 1)

    def on_resize(self) -> None:
        self._resized()
        self.refresh()

    def set_sort(self, column: str, reverse: bool) -> None:
        """Show the sort arrow on `column` (the caller orders the rows)."""
        if self.sort != (column, reverse):
            self.sort = (column, reverse)
            self.refresh_lines(0)

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
        if event.y == 0:
            column = self._column_at(event.x + int(self.scroll_x))
            if column is not None:
                self.post_message(self.HeaderClicked(column))
            return
        row = int(self.scroll_y) + event.y - 1
        if 0 <= row < len(self._keys):
            self.cursor_row = row
            self.post_message(self.RowSelected(self._keys[row]))

    def _column_at(self, x: int) -> str | None:
        left = 0
        for column, width in zip(self.columns, self._widths, strict=True):
            if width is None:
                continue
            left += width + 2 * PADDING
            if x < left:
                return column.name
        return None

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
            header = self._look(self._segments(self._header()), style, Style.null())
            return header.crop(scroll_x, scroll_x + width)
        row = int(self.scroll_y) + y - 1
        if row >= len(self._keys):
            return Strip.blank(width, base)
        key = self._keys[row]
        cursor = row == self.cursor_row
        widths = tuple(self._widths)
        state: tuple[object, ...] = (cursor, row % 2, base, width, widths)
        cached = self._strips.get(key)
        if cached is None or cached[0] != state:
            rendered = self._rendered.get(key)
            if rendered is None or rendered[0] != widths:
                rendered = (widths, self._render_row(key))
                self._rendered[key] = rendered
            cls = ("session-table--cursor" if cursor else
                   "session-table--odd-row" if row % 2 else "session-table--even-row")
            component = self.get_component_rich_style(cls)
            # the cursor's text colour wins over the cells' own; their backgrounds stay (as in
            # DataTable's defaults)
            post = Style.from_color(color=component.color) if cursor else Style.null()
            cached = (state, self._look(rendered[1], base + component, post))
            self._strips[key] = cached
        return cached[1].crop_extend(scroll_x, scroll_x + width, base)

    def _header(self) -> tuple[Text, ...]:
        cells = []
        for column in self.columns:
            name = column.name
            if self.sort is not None and self.sort[0] == name:
                name += " ▲" if self.sort[1] else " ▼"
            cells.append(Text(name))
        return tuple(cells)

    def _render_row(self, key: str) -> list[Segment]:
        """Render one row's cells (called only when the row's cells or the widths changed)."""
        return self._segments(self._cells[key])

    def _segments(self, cells: tuple[Text, ...]) -> list[Segment]:
        line = Text(no_wrap=True, end="")
        pad = " " * PADDING
        for cell, width in zip(cells, self._widths, strict=True):
            if width is None:
                continue  # the column gave way to the others
            shown = cell.copy()
            if shown.cell_len > width:
                shown.truncate(width, overflow="ellipsis")
            shown.align("right" if cell.justify == "right" else "left", width)
            line.append(pad)
            line.append_text(shown)
            line.append(pad)
        return [seg for seg in line.render(self.app.console) if seg.text != "\n"]

    def _look(self, segments: list[Segment], style: Style, post: Style) -> Strip:
        """A row's line: its cells under the row's look (stripe or cursor)."""
        line = [Segment(seg.text, (style + seg.style if seg.style else style) + post)
                for seg in segments]
        length = sum(seg.cell_length for seg in line)
        # the row's look runs to the right edge, as DataTable's
        return Strip(line, length).extend_cell_length(self.size.width, style)
