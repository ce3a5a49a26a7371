"""Which ended sessions to prune: one option per age, each with how many sessions it removes.

`C` on the sessions screen opens it (`supervisor.tui.prune`); `enter` picks the highlighted age
and the next step, the confirmation, lists the sessions and asks for `y`. What is highlighted is
what is asked about (a list that never re-ranks).
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

AGES_DAYS: tuple[float, ...] = (30.0, 7.0, 1.0, 0.0)
"""The ages offered: ended sessions whose last event is at least this many days old (0: any)."""


def age_label(days: float) -> str:
    """`ended 7 days ago or more`, `ended at any time`."""
    if not days:
        return "ended at any time"
    return f"ended {days:g} day{'s' if days != 1 else ''} ago or more"


class PruneScreen(ModalScreen[float | None]):
    """Pick an age; dismissed with its days, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel", show=True)]
    DEFAULT_CSS = _MODAL_CSS.format(name="PruneScreen") + """
    PruneScreen OptionList { height: auto; }
    """

    def __init__(self, root: str, counts: dict[float, int]) -> None:
        super().__init__()
        self.root = root
        self.counts = counts
        """How many sessions each age would remove, by days."""

    def compose(self) -> ComposeResult:
        title = Text("Prune ended sessions from ", style="bold")
        title.append_text(safe(self.root, 120, "bold"))
        title.append("\nOnly sessions that ended (never a running, waiting, paused or dead one, "
                     "nor a run still to stop, merge or discard). enter: list them and ask.",
                     style="dim")
        with Vertical():
            yield Static(title)
            yield OptionList(*(Option(f"{age_label(days)}: {count} session"
                                      f"{'s' if count != 1 else ''}", id=str(days))
                               for days, count in self.counts.items()), id="prune-ages")
        yield Footer()

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        options.highlighted = 0

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.dismiss(float(str(message.option.id)))

    def action_cancel(self) -> None:
        self.dismiss(None)
