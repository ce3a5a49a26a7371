"""`rollback`: the work tree goes back to a checkpoint.

The guard takes a safety checkpoint, restores the chosen one and records `checkpoint` and
`rollback` events (`guard/desk.py`, `guard/checkpoints/`); the call is refused, since it was
planned on the old files. A rollback that fails is said as it is and changes nothing in the
engine.
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


class Rollback(DecisionKind):
    name = "rollback"
    title = "Rollback"
    summary = "the work tree goes back to a checkpoint; the call is refused"
    needs = "checkpoint"
    answers = True
    news = True
    effect = "rollback"
    key = "r"
    protection = "+pick"
    cli = "supervisor answer SESSION --rollback CHECKPOINT"
    command_key = "B"

    def fields_problem(self, value: Mapping[str, Any]) -> str | None:
        if not value.get("checkpoint_id"):
            return "rollback needs a 'checkpoint_id'"
        return None

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        if not ctx.answering and not desk.has_checkpoints():
            return Ignored("checkpoints are off in this session")
        return desk.rollback(str(decision.get("checkpoint_id") or ""))


KIND = Rollback()
