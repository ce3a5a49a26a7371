"""One answer for several escalations (`space` marks them in the queue, `A` opens this).

The screen lists the marked escalations and offers the answers every one of them offers that
need nothing per escalation: approve, guidance (one text for all), skip, abort — not a rollback
(each session has its own checkpoints) nor a split (each task its own plan). Its keys are the
escalation prompt's, deliberate as there (`supervisor.tui.deliberate`); the answer chosen is
then confirmed as a single one is (`y`, or the guidance box's `ctrl+s`) and written once per
escalation, each a decision of its own (`supervisor.tui.screens.sessions.SessionsScreen`).
"""

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from supervisor.protocol.decisions import KINDS, escalation_options
from supervisor.tui.decision_keys import RegistryKeys
from supervisor.tui.format import safe
from supervisor.tui.screens.modals import _MODAL_CSS

BATCH_NEEDS = (None, "text")
"""What an answer given to several escalations at once may need: nothing, or one text."""


def common_answers(escalations: list[dict[str, Any]]) -> list[str]:
    """The answers every escalation offers that need nothing per escalation, in the
    registry's order."""
    offered = [set(esc.get("options") or escalation_options()) for esc in escalations]
    return [name for name in escalation_options()
            if KINDS[name].needs in BATCH_NEEDS and all(name in o for o in offered)]


def _answer_label(name: str) -> str:
    """`a approve (+y)`: the key, the answer, its second step."""
    kind = KINDS[name]
    step = f" ({kind.protection})" if kind.protection else ""
    return f"{kind.key} {kind.title.lower()}{step}"


class BatchScreen(RegistryKeys, ModalScreen[str | None]):
    """Choose one answer for the marked escalations; dismissed with it, or None. The answers'
    keys, as on the escalation prompt, are bound as it is built (`RegistryKeys`)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=True),
    ]
    KEYS_WHERE = "the batch answer"

    @classmethod
    def decision_bindings(cls) -> list[Binding]:
        return [Binding(str(KINDS[name].key), f"choose('{name}')", KINDS[name].title, show=True)
                for name in escalation_options() if KINDS[name].needs in BATCH_NEEDS]
    DEFAULT_CSS = _MODAL_CSS.format(name="BatchScreen") + """
    BatchScreen VerticalScroll { height: auto; max-height: 12; }
    """

    def __init__(self, entries: list[tuple[str, dict[str, Any]]]) -> None:
        super().__init__()
        self.entries = entries
        self.answers = common_answers([esc for _, esc in entries])

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Answer {len(self.entries)} escalations at once", style="bold"))
            listing = Text()
            for sid, esc in self.entries:
                listing.append_text(safe(sid, 40, "bold"))
                listing.append("  ")
                listing.append_text(safe(esc.get("escalation_id"), 30))
                listing.append("  ")
                listing.append_text(safe(esc.get("reason"), 120))
                listing.append("\n")
            with VerticalScroll():
                yield Static(listing)
            offered = Text("Answers all of them offer: ", style="bold")
            offered.append("   ".join(_answer_label(n) for n in self.answers)
                           or "none (answer them one by one)")
            yield Static(offered)
            yield Static("Each escalation gets a decision of its own; esc cancels.",
                         classes="hint")
        yield Footer()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only the answers every marked escalation offers are keys here."""
        if action == "choose":
            return parameters[0] in self.answers
        return True

    def action_choose(self, action: str) -> None:
        self.dismiss(action)

    def action_cancel(self) -> None:
        self.dismiss(None)
