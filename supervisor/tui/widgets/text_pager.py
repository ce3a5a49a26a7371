"""A pager for long text (an event in full): wrapped to the width, drawn line by line, searchable.

The text is a list of `rich.text.Text` lines (agent text already cleaned by the caller). Lines
are wrapped at the pane's width by character, as `less` does, so a megabyte of output without a
newline is shown whole, not cut; only the visible lines are rendered (Line API), and wrapping
stores offsets, not copies. `search` finds a text in any case, moves to it and highlights every
match; `match` says which of how many the view is on.
"""

import bisect
from typing import ClassVar

from rich.cells import get_character_cell_size
from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip


class TextPager(ScrollView, can_focus=True):
    """Read-only wrapped text with a search."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"text-pager--match", "text-pager--current"}
    DEFAULT_CSS = """
    TextPager { background: $surface; scrollbar-gutter: stable; }
    TextPager > .text-pager--match { background: $warning 40%; }
    TextPager > .text-pager--current { background: $warning; color: $background; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_lines(-1)", "Up", show=False),
        Binding("down", "scroll_lines(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home", "top", "Top", show=False),
        Binding("end", "bottom", "Bottom", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Text] = []
        self._wrapped: list[tuple[int, int, int]] = []
        """(line, start, end) of each display row, for the current width."""
        self._line_rows: list[int] = []
        """The first display row of each line."""
        self._width = 0
        self._matches: list[tuple[int, int, int]] = []
        """(line, start, end) of every match of the current search, in order."""
        self._current = -1
        self._needle = ""

    # -- content -----------------------------------------------------------------------------

    def set_lines(self, lines: list[Text]) -> None:
        self.lines = lines
        self._matches, self._current, self._needle = [], -1, ""
        self._wrap(force=True)
        self.scroll_to(y=0, animate=False, immediate=True)

    @property
    def match(self) -> tuple[int, int] | None:
        """(n, of) of the current search; (0, 0) when it found nothing; None: no search."""
        if not self._needle:
            return None
        return (self._current + 1, len(self._matches)) if self._matches else (0, 0)

    def plain_text(self) -> str:
        return "\n".join(line.plain for line in self.lines)

    def _wrap(self, *, force: bool = False) -> None:
        width = max(1, self.scrollable_content_region.width or self.size.width or 80)
        if width == self._width and not force:
            return
        self._width = width
        wrapped: list[tuple[int, int, int]] = []
        starts: list[int] = []
        for number, line in enumerate(self.lines):
            starts.append(len(wrapped))
            wrapped.extend((number, a, b) for a, b in _breaks(line.plain, width))
        self._wrapped, self._line_rows = wrapped, starts
        self.virtual_size = Size(width, len(wrapped))
        self.refresh()

    def on_resize(self) -> None:
        self._wrap()

    # -- search ------------------------------------------------------------------------------

    def search(self, needle: str, *, backwards: bool = False) -> bool:
        """Go to the next (or previous) match of `needle`, any case; False when none."""
        needle = needle.lower()
        if needle != self._needle:
            self._needle = needle
            self._matches = []
            self._current = -1
            if needle:
                for number, line in enumerate(self.lines):
                    low = line.plain.lower()
                    pos = low.find(needle)
                    while pos >= 0:
                        self._matches.append((number, pos, pos + len(needle)))
                        pos = low.find(needle, pos + max(1, len(needle)))
        if not self._matches:
            self.refresh()
            return False
        if self._current < 0:
            top = self._row_of(self._first_visible())
            rows = [self._row_of(m) for m in self._matches]
            self._current = (bisect.bisect_left(rows, top) if not backwards
                             else bisect.bisect_right(rows, top) - 1) % len(self._matches)
        else:
            self._current = (self._current + (-1 if backwards else 1)) % len(self._matches)
        row = self._row_of(self._matches[self._current])
        if not (self.scroll_y <= row < self.scroll_y + self.size.height):
            self.scroll_to(y=max(0, row - self.size.height // 3), animate=False,
                           immediate=True)
        self.refresh()
        return True

    def _first_visible(self) -> tuple[int, int, int]:
        if not self._wrapped:
            return (0, 0, 0)
        return self._wrapped[min(int(self.scroll_y), len(self._wrapped) - 1)]

    def _row_of(self, where: tuple[int, int, int]) -> int:
        """The display row holding offset `where[1]` of line `where[0]`."""
        number, offset = where[0], where[1]
        first = self._line_rows[number]
        last = self._line_rows[number + 1] if number + 1 < len(self._line_rows) else len(
            self._wrapped)
        row = bisect.bisect_right(self._wrapped, (number, offset, float("inf")), first, last)
        return max(first, row - 1)

    # -- keys --------------------------------------------------------------------------------

    def action_scroll_lines(self, delta: int) -> None:
        self.scroll_to(y=self.scroll_y + delta, animate=False, immediate=True)

    def action_page(self, direction: int) -> None:
        self.scroll_to(y=self.scroll_y + direction * max(1, self.size.height - 1),
                       animate=False, immediate=True)

    def action_top(self) -> None:
        self.scroll_to(y=0, animate=False, immediate=True)

    def action_bottom(self) -> None:
        self.scroll_end(animate=False, immediate=True)

    # -- rendering ---------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if width != self._width:  # the scrollbar came or went: wrap to what is visible
            self.call_after_refresh(self._wrap)
        base = self.rich_style
        row = int(self.scroll_y) + y
        if row >= len(self._wrapped):
            return Strip.blank(width, base)
        number, start, end = self._wrapped[row]
        part = self.lines[number][start:end]
        if self._matches:
            match_style = self.get_component_rich_style("text-pager--match")
            current_style = self.get_component_rich_style("text-pager--current")
            current = self._matches[self._current] if self._current >= 0 else None
            lo = bisect.bisect_left(self._matches, (number, start - len(self._needle), 0))
            for m in self._matches[lo:]:
                if m[0] != number or m[1] >= end:
                    break
                a, b = max(m[1], start) - start, min(m[2], end) - start
                if b > a:
                    part.stylize(current_style if m == current else match_style, a, b)
        segments = [
            Segment(seg.text, base + seg.style if seg.style else base)
            for seg in part.render(self.app.console) if seg.text != "\n"
        ]
        return Strip(segments).extend_cell_length(width, base).crop(0, width)


def _breaks(text: str, width: int) -> list[tuple[int, int]]:
    """(start, end) offsets of `text` cut every `width` cells (at least one row, even empty)."""
    if len(text) <= width and (text.isascii() or _cells(text) <= width):
        return [(0, len(text))]
    if text.isascii():
        return [(a, min(a + width, len(text))) for a in range(0, len(text), width)]
    out, start, used = [], 0, 0
    for i, ch in enumerate(text):
        size = get_character_cell_size(ch)
        if used + size > width and i > start:
            out.append((start, i))
            start, used = i, 0
        used += size
    out.append((start, len(text)))
    return out


def _cells(text: str) -> int:
    return sum(get_character_cell_size(ch) for ch in text)
