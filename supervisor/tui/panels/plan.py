"""Plan: the session's task plan (an operator's `split`, docs/plans.md), one row per sub-task
with its state (done, current, waiting, skipped, failed, dropped), its steps (tool calls) and
errors. `E` edits the sub-tasks after the current one (a `replan` decision), `D` drops them
(`drop_plan`, confirmed); both are refused like every operator command when they cannot apply."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.binding import Binding, BindingType

from supervisor.tui.format import safe
from supervisor.tui.messages import DecisionRequested
from supervisor.tui.panels.table import Row, TablePanel
from supervisor.tui.screens.modals import ConfirmScreen
from supervisor.tui.screens.plan_input import PlanScreen

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState

_STYLES = {"done": "green", "current": "bold reverse", "waiting": "dim", "skipped": "yellow",
           "failed": "red", "dropped": "dim strike"}


class PlanPanel(TablePanel):
    ID = "plan"
    TITLE = "Plan"
    KEY = "l"
    HELP = "The task plan: each sub-task's state, steps and errors"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("E", "change('replan')", "Edit plan", show=True),
        Binding("D", "change('drop_plan')", "Drop plan", show=True),
    ]
    COLUMNS = ("#", "state", "sub-task", "steps", "errors")
    EMPTY = ("No plan: answer an escalation with split (p), or run "
             "`supervisor split SESSION STEP...`.")

    @classmethod
    def title(cls, state: "SessionState") -> str:
        steps = state.plan.steps
        if not steps:
            return cls.TITLE
        finished = sum(s.status in ("done", "skipped", "failed", "dropped") for s in steps)
        return f"{cls.TITLE} ({finished}/{len(steps)})"

    def rows(self, state: "SessionState") -> list[Row]:
        return [Row((str(number), Text(step.status, _STYLES.get(step.status, "")),
                     safe(step.title, 300) if step.title is not None else Text("…", "dim"),
                     str(step.steps), str(step.errors)))
                for number, step in enumerate(state.plan.steps, 1)]

    @work(exclusive=True, group="plan-change")
    async def action_change(self, action: str) -> None:
        """`replan` (edit the waiting sub-tasks) or `drop_plan` (confirmed)."""
        state = self.state
        if not state.plan.active:
            self.notify("there is no plan to change: split the task first (p in the "
                        "escalation prompt)", severity="warning")
            return
        refused = self.view.refusal(self.session_id, action, None)
        if refused:
            self.notify(f"not sent: {refused}", severity="warning", markup=False)
            return
        tasks = None
        if action == "replan":
            waiting = [s.title or "" for s in state.plan.steps if s.status == "waiting"]
            tasks = await self.app.push_screen_wait(PlanScreen(self.session_id, initial=waiting))
            if tasks is None:
                return
        else:
            question = Text("Drop the rest of the plan of ", style="bold")
            question.append_text(safe(self.session_id, 60, "bold"))
            question.append("? The agent finishes its current sub-task and gets no more.")
            if not await self.app.push_screen_wait(ConfirmScreen(question)):
                return
        self.post_message(DecisionRequested(self.session_id, action, tasks=tasks))
