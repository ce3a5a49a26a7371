"""`skip`: the agent drops its current task (or the current step of its plan).

The task ends `skipped`; the engine starts the next task clean. The deadline's default
fallback.
"""

from collections.abc import Mapping
from typing import Any

from supervisor.protocol.decisions.base import (
    Context,
    DecisionKind,
    Desk,
    EffectFacts,
    Ignored,
    Result,
)


class Skip(DecisionKind):
    name = "skip"
    title = "Skip task"
    summary = "the agent drops its current task (or step of its plan) and moves on"
    answers = True
    effect = "skip"
    key = "s"
    protection = "+y"
    confirm = "The agent drops its current task."
    cli = "supervisor answer SESSION --skip"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        if not ctx.answering:
            if desk.open_task() is None:
                return Ignored("no task is open to skip")
            task_id, following = desk.skip_task()
            text = (f"The operator skipped this step of the plan.\n{following}" if following
                    else "The operator skipped this task. Stop working on it and move on to "
                    "your next task.")
            return Result("skip", text, f"task {task_id} skipped", reason="skipped")
        task_id, following = desk.skip_task()
        outcome = (f"task {task_id} skipped" if task_id is not None
                   else "skipped: no task was open; the agent moves on")
        who = ("No operator answered before the deadline, so" if ctx.fallback
               else "The operator skipped this task:")
        text = (f"{who} stop working on this step of the plan.\n{following}" if following
                else f"{who} stop working on this task and move on to your next task.")
        return Result("skip", text, outcome)


KIND = Skip()
