"""`abort`: the session ends (`aborted`); every later call is refused."""

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


class Abort(DecisionKind):
    name = "abort"
    title = "Abort"
    summary = "the session ends (`aborted`); the agent is told to stop"
    answers = True
    effect = "stop"
    key = "x"
    protection = "+y"
    confirm = "The agent stops for good."
    cli = "supervisor abort SESSION"
    command_key = "X"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        why = ("no operator decision before the deadline" if ctx.fallback
               else f"aborted by {ctx.by}")

        def end() -> None:
            desk.end_session("aborted", why)

        if not ctx.answering:
            return Result("stop", "The operator aborted the session. Stop now.",
                          "session aborted", reason="aborted", then=end)
        text = ("No operator answered before the deadline; the session is aborted. Stop now."
                if ctx.fallback else "The operator aborted the session. Stop now.")
        return Result("stop", text, "session aborted", then=end)


KIND = Abort()
