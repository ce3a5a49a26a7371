"""`replan`: the plan's waiting sub-tasks are replaced (docs/plans.md)."""

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
from supervisor.protocol.decisions.plan import NO_PLAN, plan_problem


class Replan(DecisionKind):
    name = "replan"
    title = "Replan"
    summary = "the plan's waiting sub-tasks are replaced"
    needs = "tasks"
    cli = "supervisor split SESSION STEP... --remaining"

    def fields_problem(self, value: Mapping[str, Any]) -> str | None:
        return plan_problem(value.get("tasks"), self.name)

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        told = desk.replan([str(t) for t in decision.get("tasks") or []])
        if told is None:
            return Ignored(NO_PLAN)
        outcome = "remaining sub-tasks replaced"
        return Result("nudge", told, outcome, reason=outcome)


KIND = Replan()
