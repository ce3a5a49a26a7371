"""`guidance`: the operator's text reaches the agent.

As an answer the stopped call is refused with the text (the agent re-plans); as a command the
next call runs and carries it. Either way the engine starts a new conversation cycle.
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


class Guidance(DecisionKind):
    name = "guidance"
    title = "Guidance"
    summary = "the operator's text reaches the agent; the engine starts a new conversation cycle"
    needs = "text"
    answers = True
    news = True
    effect = "guidance"
    answer_note = "the agent also resumes, with your guidance"
    key = "g"
    protection = "+ctrl+s"
    cli = "supervisor guide SESSION TEXT"
    command_key = "G"
    command_shown = True

    def fields_problem(self, value: Mapping[str, Any]) -> str | None:
        if not (value.get("text") or "").strip():
            return "guidance needs a non-empty 'text'"
        return None

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        message = f"Operator guidance: {decision.get('text') or ''}"
        outcome = "guidance delivered to the agent"
        if ctx.answering:
            return Result("block", message, outcome)
        return Result("nudge", message, outcome, reason="guidance")


KIND = Guidance()
