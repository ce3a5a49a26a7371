"""`pause`: the agent stops at its next tool call until an operator resumes it or decides.

The guard raises an escalation of kind `pause` (no loop behind it, no deadline unless the
guard's `pause_deadline_s` sets one); `resume` (an `approve` of it) lets the agent go on.
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


class Pause(DecisionKind):
    name = "pause"
    title = "Pause"
    summary = "the agent stops at its next tool call until an operator resumes it or decides"
    cli = "supervisor pause SESSION"
    command_key = "P"
    command_shown = True
    waits_for_pending = True
    holds = True

    def pending_refusal(self, pending: Mapping[str, Any]) -> str:
        if pending.get("kind") == self.name:
            return f"already paused ({pending.get('escalation_id')}): resume it or decide"
        return f"{pending.get('escalation_id')} already waits for an answer: answer it instead"

    def answer_refusal(self, escalation_id: str, options: Iterable[str]) -> str | None:
        return f"{escalation_id} is already pausing the agent"

    def command_refusal(self, view: SessionView, unread: Iterable[Unread]) -> str | None:
        refused = super().command_refusal(view, unread)
        if refused:
            return refused
        for other in unread:
            if other.action == self.name:
                return (f"already paused by {other.operator or 'an operator'} (the agent "
                        "pauses at its next tool call)")
        return None

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        return Result(None, None, "agent paused at its next tool call",
                      then=lambda: desk.hold(self.name, f"paused by {ctx.by}", ctx.call_id))


KIND = Pause()
