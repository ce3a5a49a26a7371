"""`drop_plan`: the plan's waiting sub-tasks are dropped; the current one is the last
(docs/plans.md)."""

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
from supervisor.protocol.decisions.plan import NO_PLAN


class DropPlan(DecisionKind):
    name = "drop_plan"
    title = "Drop plan"
    summary = "the plan's waiting sub-tasks are dropped; the current one is its last"
    cli = "supervisor split SESSION --drop"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        told = desk.drop_plan()
        if told is None:
            return Ignored(NO_PLAN)
        outcome = "the rest of the plan dropped"
        return Result("nudge", told, outcome, reason=outcome)


KIND = DropPlan()
