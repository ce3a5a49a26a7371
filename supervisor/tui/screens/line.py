"""A line for the agent's terminal: a modal with one input that takes every key from the moment
it opens.

The Terminal panel's `i` pushes this screen. Pushing changes the screen at once, so the keys
typed right after `i` reach this screen even before its input has the focus (focus lands a
frame later): those are put into the input here instead of being lost or, as with an input
that appeared inside the panel, read by the dashboard as its own keys (a theme, a tab, a
command). Enter sends, escape cancels.
"""

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from supervisor.tui.format import safe
from supervisor.tui.screens.modals import _MODAL_CSS


class LineScreen(ModalScreen[str | None]):
    """Ask for one line to type into the agent's terminal; dismissed with it, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=True)]
    DEFAULT_CSS = _MODAL_CSS.format(name="LineScreen")

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id

    def compose(self) -> ComposeResult:
        title = Text("A line for the terminal of ", style="bold")
        title.append_text(safe(self.session_id, 60, "bold"))
        title.append("\nenter sends it (with a newline), escape cancels", style="dim")
        with Vertical():
            yield Static(title)
            yield Input(id="line-input", placeholder="what the agent should read")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_key(self, event: events.Key) -> None:
        """A key that reached the screen, not the input (typed before the focus landed)."""
        if self.take_stray_key(event):
            event.stop()
            event.prevent_default()

    def take_stray_key(self, event: events.Key) -> bool:
        """Put a character typed before the input had the focus into it (True: taken). The
        app hands over the keys that were on their way to the screen below when this one
        opened; they bubble back up to it, past this screen."""
        field = self.query_one(Input)
        if event.character is None or not event.is_printable or event.key == "enter":
            return False
        field.insert_text_at_cursor(event.character)
        field.focus()
        return True

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self._send(message.value)

    def _send(self, value: str) -> None:
        self.dismiss(value or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
