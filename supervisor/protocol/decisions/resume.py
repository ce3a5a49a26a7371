"""`resume`: a paused agent goes on (it writes `approve`, answering the operator's pause)."""

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


class Resume(DecisionKind):
    name = "resume"
    title = "Resume"
    summary = "a paused agent goes on from where it paused"
    wire = "approve"
    cli = "supervisor resume SESSION"
    protection = "at once"

    def command_refusal(self, view: SessionView, unread: Iterable[Unread]) -> str | None:
        from supervisor.protocol.decisions.registry import is_hold  # the registry lists us

        pending = next(iter(view.pending.values()), None)
        if pending is None or not is_hold(pending):
            return "nothing to resume: the session is not paused"
        return None  # the sender then checks it as an answer to that pause

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        raise AssertionError("resume is written as approve")  # never a line of its own


KIND = Resume()
