"""`reset`: the loop counters are cleared (bounded by `resets_per_conversation`).

What a reset clears and keeps is the engine's (`engine/decisions.py`, `RESET_CLEARS`); the
agent's next call runs with a nudge saying so.
"""

from collections.abc import Iterable, Mapping
from typing import Any

from supervisor.protocol.decisions.base import (
    Context,
    DecisionKind,
    Desk,
    EffectFacts,
    Ignored,
    Result,
    SessionView,
    Unread,
)

MESSAGE = "The operator reset the loop counters; continue."


class Reset(DecisionKind):
    name = "reset"
    title = "Reset"
    summary = ("the loop detectors' memory, the level and the per-cycle counters are cleared "
               "(at most `resets_per_conversation` times)")
    effect = "reset"
    cli = "supervisor reset SESSION"
    command_key = "R"
    confirm = "Its loop counters are cleared."
    waits_for_pending = True

    def pending_refusal(self, pending: Mapping[str, Any]) -> str:
        return (f"{pending.get('escalation_id')} is pending: answer it first (a reset cannot "
                "apply while the agent waits)")

    def command_refusal(self, view: SessionView, unread: Iterable[Unread]) -> str | None:
        refused = super().command_refusal(view, unread)
        if refused:
            return refused
        if view.reset_limit is not None and view.resets >= view.reset_limit:
            return (f"already {view.resets} reset(s): the limit "
                    f"(resets_per_conversation) is {view.reset_limit:g}")
        return None

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        if not desk.can_reset():
            return Ignored(desk.reset_refused())
        outcome = desk.count_reset()
        return Result("nudge", MESSAGE, outcome, reason=outcome)


KIND = Reset()
