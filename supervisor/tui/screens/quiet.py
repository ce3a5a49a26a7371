"""Quiet one detector of a session, or lift its quiet: a list of exactly what will be written.

The palette offers one entry per detector that fired ("Quiet exact_repeat…"); it opens this
list, where each option is one decision, written by its id when `enter` is pressed on it
(never from a burst of keys: `supervisor.tui.deliberate`). What is highlighted is what is
written: a list that is re-ranked while the operator types (the palette's) never chooses.
"""

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from supervisor.tui.format import safe
from supervisor.tui.screens.modals import _MODAL_CSS

QUIET_CALLS = 20
"""The short quiet offered (the other lasts until the session ends)."""

CHOICES: dict[str, tuple[str, int | None, bool]] = {
    "short": (f"quiet it for the next {QUIET_CALLS} tool calls", QUIET_CALLS, False),
    "session": ("quiet it until the session ends", None, False),
    "lift": ("lift its quiet: its findings count again, now", None, True),
}
"""Option id: (what it says, `calls`, `lift`)."""


class QuietScreen(ModalScreen[tuple[int | None, bool] | None]):
    """Pick one quiet decision for a detector; dismissed with (`calls`, `lift`) or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=True)]
    DELIBERATE_KEYS = frozenset({"enter"})
    """`enter` writes the highlighted option: never from a burst of keys."""
    DEFAULT_CSS = _MODAL_CSS.format(name="QuietScreen") + """
    QuietScreen OptionList { height: auto; }
    """

    def __init__(self, session_id: str, detector: str, active: list[str]) -> None:
        super().__init__()
        self.session_id = session_id
        self.detector = detector
        self.active = active
        """The quiets the guard applied in this session (as recorded), for the operator."""

    def compose(self) -> ComposeResult:
        title = Text("Quiet ", style="bold")
        title.append_text(safe(self.detector, 60, "bold"))
        title.append(" in session ", style="bold")
        title.append_text(safe(self.session_id, 60, "bold"))
        title.append("\nThis session only; hard limits still apply. enter writes the "
                     "highlighted choice.", style="dim")
        if self.active:
            title.append("\nquiets applied so far: ", style="dim")
            title.append_text(safe("; ".join(self.active[-3:]), 300, "dim"))
        with Vertical():
            yield Static(title)
            yield OptionList(*(Option(label, id=key) for key, (label, _, _) in CHOICES.items()),
                             id="quiet-options")
        yield Footer()

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        options.highlighted = 0

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        _, calls, lift = CHOICES[str(message.option.id)]
        self.dismiss((calls, lift))

    def action_cancel(self) -> None:
        self.dismiss(None)
