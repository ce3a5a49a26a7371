"""Plan: the session's task plan (an operator's `split`, docs/plans.md), one row per sub-task
with its state (done, current, waiting, skipped, failed), its steps (tool calls) and errors."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from supervisor.tui.format import safe
from supervisor.tui.panels.base import Panel

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState

_STYLES = {"done": "green", "current": "bold reverse", "waiting": "dim", "skipped": "yellow",
           "failed": "red"}


class PlanPanel(Panel):
    ID = "plan"
    TITLE = "Plan"
    KEY = "l"
    HELP = "The task plan: each sub-task's state, steps and errors"
    DEFAULT_CSS: ClassVar[str] = """
    PlanPanel DataTable { height: 1fr; }
    PlanPanel #plan-none { height: auto; color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        yield Static("No plan: answer an escalation with split (p), or run "
                     "`supervisor split SESSION STEP...`.", id="plan-none")
        yield DataTable(id="plan-table", cursor_type="row")

    def on_mount(self) -> None:
        self.query_one(DataTable).add_columns("#", "state", "sub-task", "steps", "errors")

    def focus_target(self) -> DataTable:
        return self.query_one(DataTable)

    def title(self, state: "SessionState") -> str:
        steps = state.plan.steps
        if not steps:
            return self.TITLE
        finished = sum(s.status in ("done", "skipped", "failed") for s in steps)
        return f"{self.TITLE} ({finished}/{len(steps)})"

    def update(self, state: "SessionState", now: float) -> None:
        steps = state.plan.steps
        self.query_one("#plan-none", Static).display = not steps
        table = self.query_one(DataTable)
        table.clear()
        for number, step in enumerate(steps, 1):
            title = safe(step.title, 300) if step.title is not None else Text("…", "dim")
            table.add_row(str(number), Text(step.status, _STYLES.get(step.status, "")), title,
                          str(step.steps), str(step.errors))
