"""`skip`: the agent drops its current task (or the current step of its plan: one step; the next
one starts, docs/plans.md).

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
    summary = "the agent drops its current task (or one step of its plan: the next one starts)"
    answers = True
    effect = "skip"
    key = "s"
    protection = "+y"
    confirm = "The agent drops its current task."
    cli = "supervisor answer SESSION --skip"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        if not ctx.answering and desk.open_task() is None:
            return Ignored("no task is open to skip")
        skipped = desk.skip_task()
        following = skipped.following
        outcome = skipped.line or (f"task {skipped.task_id} skipped"
                                   if skipped.task_id is not None
                                   else "skipped: no task was open; the agent moves on")
        # the next step's words are news: an agent about to stop must hear it, else its stop
        # would end that step too (docs/plans.md)
        news = following is not None
        if not ctx.answering:
            text = (f"The operator skipped this step of the plan.\n{following}" if following
                    else "The operator skipped this task. Stop working on it and move on to "
                    "your next task.")
            return Result("skip", text, outcome, reason="skipped", news=news)
        who = ("No operator answered before the deadline, so" if ctx.fallback
               else "The operator skipped this task:")
        text = (f"{who} stop working on this step of the plan.\n{following}" if following
                else f"{who} stop working on this task and move on to your next task.")
        return Result("skip", text, outcome, news=news)


KIND = Skip()
