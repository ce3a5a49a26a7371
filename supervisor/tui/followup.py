"""What became of a decision this dashboard sent: the escalation prompt's box and the operator
commands' notifications say the same thing, from the same function.

`sent` (waiting for the agent) → `applied` (`operator.outcome`: as every view says it) or
`ignored` (with the reason), or `ended` (the session ended before the agent read it); a
decision still `sent` after `RESPONSE_WAIT_S` is `late`: the agent is not responding, and the
text says why as far as the events tell (dead, or simply no tool call yet).
"""

from dataclasses import dataclass

from supervisor.guard.inspect import still_waiting, why_not_applied_yet
from supervisor.operator.outcome import applied_said
from supervisor.tui.model import SessionState

RESPONSE_WAIT_S = 10.0
"""Seconds without an outcome after which "waiting for the agent" becomes "not responding".
A waiting agent reads its control channel within a second; this leaves room for a busy machine."""


@dataclass(slots=True)
class FollowUp:
    """One decision sent from this dashboard, followed until the agent side records it."""

    session_id: str
    decision_id: str
    action: str
    sent_at: float
    agent_waits: bool
    """The agent waits on an escalation (reads it at once) rather than picking it up at its
    next tool call."""
    told: str = "sent"
    """The last state the operator was told about (commands notify on each change)."""


def follow_state(st: SessionState, follow: FollowUp, now: float) -> tuple[str, str]:
    """(`sent` | `late` | `applied` | `ignored` | `ended`, the text to show)."""
    outcome = st.outcomes.get(follow.decision_id)
    if outcome is not None and outcome.state == "applied":
        return "applied", applied_said(outcome.detail, outcome.answered,
                                       still_waiting(st.summary, st.session_id))
    if outcome is not None and outcome.state == "ignored":
        return "ignored", f"ignored: {outcome.detail}"
    summary = st.summary
    if summary.end_status is not None:
        return "ended", (f"the session ended ({summary.end_status}) before the agent read "
                         f"your {follow.action}")
    waited = now - follow.sent_at
    if waited >= RESPONSE_WAIT_S:
        why = why_not_applied_yet(summary, now, agent_waits=follow.agent_waits)
        subject = "agent not responding" if follow.agent_waits else "not picked up yet"
        return "late", f"{subject}: {follow.action} not applied after {waited:.0f} s; {why}"
    return "sent", (f"sent {follow.action} ({follow.decision_id}); waiting for the agent to "
                    "apply it…" if follow.agent_waits else
                    f"sent {follow.action} ({follow.decision_id}); the agent applies it at its "
                    "next tool call…")
