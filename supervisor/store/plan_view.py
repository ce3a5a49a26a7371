"""A session's task plan as every reader rebuilds it from the event log (docs/plans.md).

The agent side keeps the plan in its state; readers (the dashboard's Plan panel, after any
restart) fold the events instead, so what they show never depends on the agent's files:

- `decision_applied` with action `split` carries the plan's sub-tasks (`tasks`);
- each sub-task's `task_start` carries `plan` (`decision_id`, `step`, `of`): it is current;
- its `task_end` gives its status (`done`, `skipped`, `failed`);
- the tool calls and failed results in between are its steps and errors.

The guard writes a split's first `task_start` before its `decision_applied`, so a step may be
seen before the titles of the others: they are filled in when the decision arrives. A later
split replaces the plan; `replan` replaces its waiting steps, `drop_plan` marks them `dropped`.
"""

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class PlanStep:
    title: str | None
    """None until the plan's `decision_applied` is read."""
    status: str = "waiting"
    """`waiting`, `current`, `done`, `skipped`, `failed` or `dropped`."""
    task_id: str | None = None
    steps: int = 0
    """Tool calls made while it was current (not those an operator command refused)."""
    errors: int = 0
    """Failed tool results while it was current."""


@dataclass(slots=True)
class PlanView:
    """The latest plan of a session, folded event by event (`apply`)."""

    decision_id: str | None = None
    steps: list[PlanStep] = field(default_factory=list)

    @property
    def active(self) -> bool:
        """A step of the plan is current or waiting: there is a plan to change."""
        return any(s.status in ("current", "waiting") for s in self.steps)

    @property
    def current(self) -> PlanStep | None:
        return next((s for s in self.steps if s.status == "current"), None)

    def apply(self, event: Any) -> None:
        """Fold one event (a protocol model or anything with its fields as attributes)."""
        kind = event.type
        if kind == "tool_call" or kind == "tool_result":
            step = self.current
            if step is not None:
                if kind == "tool_call":
                    # a call an operator command refused before it ran (the one that met
                    # the split itself) is no step of the agent's work
                    step.steps += 0 if getattr(event, "refused_by", None) else 1
                elif getattr(event, "ok", True) is False:
                    step.errors += 1
        elif kind == "task_start":
            plan = getattr(event, "plan", None)
            if isinstance(plan, dict):
                self._started(plan, getattr(event, "task_id", None))
        elif kind == "task_end":
            task_id = getattr(event, "task_id", None)
            for step in self.steps:
                if step.task_id == task_id and step.status == "current":
                    step.status = str(getattr(event, "status", "done"))
        elif kind == "decision_applied":
            action, tasks = getattr(event, "action", None), getattr(event, "tasks", None)
            if action == "split" and isinstance(tasks, list):
                self._titled(str(getattr(event, "decision_id", "")), tasks)
            elif action == "replan" and isinstance(tasks, list):
                self.steps = [s for s in self.steps if s.status != "waiting"] + [
                    PlanStep(str(t)) for t in tasks]
            elif action == "drop_plan":
                for step in self.steps:
                    if step.status == "waiting":
                        step.status = "dropped"

    def _started(self, plan: dict[str, Any], task_id: Any) -> None:
        decision_id, number, of = plan.get("decision_id"), plan.get("step"), plan.get("of")
        if not (isinstance(number, int) and isinstance(of, int) and 1 <= number <= of <= 1000):
            return
        if decision_id != self.decision_id or len(self.steps) != of:
            self.decision_id = str(decision_id)
            self.steps = [PlanStep(None) for _ in range(of)]
        step = self.steps[number - 1]
        step.status, step.task_id = "current", str(task_id)

    def _titled(self, decision_id: str, tasks: list[Any]) -> None:
        if decision_id != self.decision_id or len(self.steps) != len(tasks):
            self.decision_id = decision_id
            self.steps = [PlanStep(None) for _ in tasks]
        for step, title in zip(self.steps, tasks, strict=True):
            step.title = str(title)
