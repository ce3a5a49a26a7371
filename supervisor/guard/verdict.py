"""What the guard tells the agent about a tool call: the `Verdict`, and its few shapes on disk.

Its own module because the parts of the guard build verdicts (the call gate from the engine's
check, the operator desk from a decision) and the hooks translate them for each agent, none of
which should need the others to do so. Stdlib only (the engine's `LimitGauge` is named for typing
alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from supervisor.engine.types import LimitGauge

_SEVERITY = {"allow": 0, "nudge": 1, "skip": 2, "block": 3, "pause": 4, "stop": 5}


@dataclass(slots=True)
class Verdict:
    """What the agent must do with a tool call, and what it must be told.

    `action`: `allow` (run it), `nudge` (run it, show `message`), `skip` (do not run it; use
    `cached_output` if given, else move on), `block` (do not run it; re-plan with `message`),
    `pause` (only from `Guard.pre_call`: an escalation is pending, call `Guard.wait`), `stop`
    (the session is over). `decision` names the operator's decision that produced it, if any."""

    action: str
    level: int = 0
    message: str | None = None
    reason: str | None = None
    call_id: str | None = None
    escalation_id: str | None = None
    decision: str | None = None
    cached_output: str | None = None
    changed_files: list[str] = field(default_factory=list)
    news: bool = False
    """An operator's words the agent must hear even between tool calls (`Result.news`, or a
    kind that is always news): an agent CLI's start and stop hooks pass them on."""

    @property
    def proceed(self) -> bool:
        """True when the call should run (`allow` or `nudge`)."""
        return self.action in ("allow", "nudge")


def stopped(ended: str | None, call_id: str | None) -> Verdict:
    """The verdict for any call once the session has ended (`ended`: its status)."""
    return Verdict("stop", 4, f"the session has ended ({ended})",
                   f"The session has ended ({ended}). Stop working.", call_id)


def pause_verdict(pending: dict[str, Any] | None, call_id: str | None) -> Verdict:
    """The verdict for a call while the escalation `pending` waits for an operator."""
    pending = pending or {}
    return Verdict(
        "pause", 3, "Waiting for the operator's decision.", pending.get("reason"), call_id,
        escalation_id=pending.get("escalation_id"),
    )


def _merge(notes: list[Verdict], verdict: Verdict) -> Verdict:
    """Fold operator notes into a verdict: the most severe action wins, messages add up."""
    if not notes:
        return verdict
    messages = [n.message for n in [*notes, verdict] if n.message]
    strongest = verdict
    for note in notes:
        if _SEVERITY.get(note.action, 0) > _SEVERITY.get(strongest.action, 0):
            strongest = note
    out = Verdict(
        strongest.action, max(n.level for n in [*notes, verdict]),
        strongest.message, strongest.reason, verdict.call_id or strongest.call_id,
        escalation_id=strongest.escalation_id or verdict.escalation_id,
        decision=strongest.decision or next((n.decision for n in notes if n.decision), None),
        cached_output=verdict.cached_output if strongest is verdict else None,
        changed_files=list(dict.fromkeys(f for n in [*notes, verdict] for f in n.changed_files)),
        news=any(n.news for n in [*notes, verdict]),
    )
    out.message = "\n".join(dict.fromkeys(messages)) or None
    return out


def _verdict_event(v: Verdict, call_id: str, gauges: Sequence[LimitGauge] = ()) -> dict[str, Any]:
    """The `verdict` event; `gauges` (extension) carries every limit's current value, so the
    dashboard shows usage against each limit without running an engine of its own."""
    event = {"type": "verdict", "call_id": call_id, "action": v.action, "level": v.level,
             "reason": v.reason, "message": v.message}
    if gauges:
        event["gauges"] = {g.name: round(g.value, 6) for g in gauges}
    return event


def _verdict_dict(v: Verdict) -> dict[str, Any]:
    """A verdict as kept in the guard's state (`GuardState.resolutions`)."""
    return {"action": v.action, "level": v.level, "message": v.message, "reason": v.reason,
            "call_id": v.call_id, "escalation_id": v.escalation_id, "decision": v.decision,
            "changed_files": v.changed_files}


def _verdict_from(d: dict[str, Any]) -> Verdict:
    """The verdict `_verdict_dict` kept."""
    return Verdict(d["action"], d.get("level", 0), d.get("message"), d.get("reason"),
                   d.get("call_id"), escalation_id=d.get("escalation_id"),
                   decision=d.get("decision"), changed_files=list(d.get("changed_files") or []))
