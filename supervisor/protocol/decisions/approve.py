"""`approve`: the agent goes on with the call the supervisor stopped.

Answers an escalation only. The engine allows `approve_repeats` further repeats of the escalated
signature (an operator's pause has none: the agent just goes on). `resume` is the same line,
sent to an operator's pause.
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


class Approve(DecisionKind):
    name = "approve"
    title = "Approve"
    summary = ("the agent goes on with the call the supervisor stopped; that loop signature "
               "gets `approve_repeats` more repeats")
    answers = True
    command = False
    effect = "approve"
    approves = True
    key = "a"
    protection = "+y"
    confirm = "The agent goes on, with the call the supervisor stopped."
    cli = "supervisor answer SESSION --approve"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        if not ctx.answering:
            return Ignored("no pending escalation to approve")
        outcome = (f"approved: {effect.repeats} more repeat(s) of the escalated call allowed"
                   if effect.signature and effect.repeats else "approved: continue")
        return Result("allow", "The operator approved; you may continue.", outcome)


KIND = Approve()
