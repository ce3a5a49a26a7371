"""`split`: the task is replaced by a plan of sub-tasks, worked one at a time (docs/plans.md).

The open task ends (`skipped`, with `split_into`) and the first sub-task starts; each sub-task
is a task of its own for the engine's per-task limits.
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
from supervisor.protocol.decisions.plan import plan_problem


class Split(DecisionKind):
    name = "split"
    title = "Split"
    summary = "the task is replaced by a plan of sub-tasks, worked one at a time"
    needs = "tasks"
    answers = True
    effect = "split"
    key = "p"
    protection = "+ctrl+s"
    cli = "supervisor split SESSION STEP..."
    waits_for_pending = True

    def fields_problem(self, value: Mapping[str, Any]) -> str | None:
        return plan_problem(value.get("tasks"), self.name)

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        # why: the loop's evidence (an operator's pause has none)
        why = (ctx.escalation_reason if ctx.answering and ctx.escalation_kind != "pause"
               else None)
        text = desk.start_plan(decision, why)
        outcome = f"task split into {len(decision.get('tasks') or [])} sub-tasks"
        return Result("block", text, outcome, reason=None if ctx.answering else "split")


KIND = Split()
