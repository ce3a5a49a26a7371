"""The split prompt: the operator writes the plan's sub-tasks, one per line (docs/plans.md).

ctrl+s sends, escape cancels. The plan is checked with the protocol's own rule
(`protocol.decisions.plan_problem`) before the screen closes, so a bad plan is said at once and
nothing is written.
"""

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static, TextArea

from supervisor.protocol.decisions import plan_problem
from supervisor.tui.format import safe


def plan_lines(text: str) -> list[str]:
    """The sub-tasks of the prompt's text: one per non-blank line, in order."""
    return [line.strip() for line in text.splitlines() if line.strip()]


class PlanScreen(ModalScreen[list[str] | None]):
    """A text box for a split's sub-tasks; dismissed with the list, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "send", "Send", show=True),
        Binding("escape", "cancel", "Cancel", show=True),
    ]
    DELIBERATE_KEYS = frozenset({"ctrl+s"})
    """`ctrl+s` in a burst of keys never sends a plan (`supervisor.tui.deliberate`)."""
    DEFAULT_CSS = """
    PlanScreen { align: center middle; }
    PlanScreen > Vertical { width: 80%; max-width: 100; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 1 2; }
    PlanScreen TextArea { height: 10; }
    """

    def __init__(self, session_id: str, why: str | None = None,
                 initial: list[str] | None = None) -> None:
        """`initial`: sub-tasks to start from (editing the remaining ones of a plan)."""
        super().__init__()
        self.session_id = session_id
        self.why = why
        self.initial = initial

    def compose(self) -> ComposeResult:
        with Vertical():
            editing = self.initial is not None
            title = Text("The sub-tasks after the current one, for " if editing
                         else "Split the task of ", style="bold")
            title.append_text(safe(self.session_id, 60, "bold"))
            title.append(": one per line, in order." if editing else
                         ": one sub-task per line, in order. The agent gets the first now, "
                         "the next each time it finishes one.")
            if self.why:
                title.append("\n")
                title.append_text(safe(self.why, 400, "dim"))
            yield Static(title)
            yield TextArea("\n".join(self.initial or []), id="plan-text", soft_wrap=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_send(self) -> None:
        tasks = plan_lines(self.query_one(TextArea).text)
        problem = plan_problem(tasks)
        if problem:
            self.notify("the plan is empty: write one sub-task per line" if not tasks
                        else problem, severity="warning", markup=False)
            return
        self.dismiss(tasks)

    def action_cancel(self) -> None:
        self.dismiss(None)
