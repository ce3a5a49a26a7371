"""A full screen of long text with a search: the base of the event detail and the diff views.

A header line, a `TextPager`, a status line (what the text is, "match 2/5" or "no match") and
a search box (`/`, then `n`/`N`); `esc` closes the box, then the screen. Subclasses fill the
pager (from a worker when reading is slow) and add their own keys and status.
"""

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static

from supervisor.safetext import clean
from supervisor.store.units import count
from supervisor.tui.widgets.text_pager import TextPager


class PagerScreen(Screen[None]):
    """Long text to read and search."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", show=True),
        Binding("slash", "search", "Search", show=True),
        Binding("n", "next_match", "Next match", show=True),
        Binding("N", "previous_match", "Prev match", show=False),
    ]
    DEFAULT_CSS = """
    PagerScreen { layout: vertical; }
    PagerScreen #pager-head { height: 1; padding: 0 1; background: $panel; text-style: bold; }
    PagerScreen #pager-body { height: 1fr; padding: 0 1; }
    PagerScreen #pager-state { height: 1; padding: 0 1; color: $text-muted; }
    PagerScreen #pager-find { dock: bottom; display: none; }
    PagerScreen #pager-find.-shown { display: block; }
    """
    HINTS = "/ search  esc back"
    """What the status line reminds of (subclasses add their keys)."""

    def __init__(self) -> None:
        super().__init__()
        self._needle = ""

    @property
    def pager(self) -> TextPager:
        return self.query_one(TextPager)

    def compose(self) -> ComposeResult:
        yield Static(id="pager-head")
        yield TextPager(id="pager-body")
        yield Label("", id="pager-state")
        yield Input(id="pager-find", placeholder="search (enter: next match)…")
        yield Footer()

    def on_mount(self) -> None:
        self.pager.focus()

    def set_head(self, head: Text) -> None:
        head.no_wrap, head.overflow = True, "ellipsis"
        self.query_one("#pager-head", Static).update(head)

    def set_text(self, lines: list[Text]) -> None:
        """Show `lines` (keeping the current search)."""
        self.pager.set_lines(lines)
        if self._needle:
            self.pager.search(self._needle)
        self.show_state()

    def state_parts(self) -> list[str]:
        """What the status line says before the search and the hints."""
        return [f"{count(len(self.pager.lines))} lines"]

    def show_state(self, message: str | None = None) -> None:
        parts = [message] if message else self.state_parts()
        match = self.pager.match
        if match is not None:
            shown = clean(self._needle, keep_newlines=False, limit=40)
            parts.append(f'"{shown}": ' + (f"match {match[0]}/{match[1]}" if match[1]
                                            else "no match"))
        parts.append(self.HINTS)
        self.query_one("#pager-state", Label).update(Text("  ·  ".join(parts), no_wrap=True,
                                                          overflow="ellipsis"))

    # -- keys --------------------------------------------------------------------------------

    def action_back(self) -> None:
        box = self.query_one("#pager-find", Input)
        if box.has_class("-shown"):
            box.remove_class("-shown")
            self.pager.focus()
            return
        self.app.pop_screen()

    def action_search(self) -> None:
        box = self.query_one("#pager-find", Input)
        box.value = self._needle
        box.add_class("-shown")
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        message.input.remove_class("-shown")
        self.pager.focus()
        self._needle = message.value
        self.pager.search(message.value)
        self.show_state()

    def action_next_match(self) -> None:
        if self._needle:
            self.pager.search(self._needle)
            self.show_state()

    def action_previous_match(self) -> None:
        if self._needle:
            self.pager.search(self._needle, backwards=True)
            self.show_state()
