"""Why an operator's decision cannot apply, said before anything is written.

The agent side ignores a decision that cannot apply (`decision_ignored`, see
`supervisor.guard.core`), but by then the operator has been told "sent" and is left waiting.
These checks run first, on what the session's events say now, in the dashboard's escalation
prompt and operator commands and in the CLI (`answer`, `pause`, `resume`, `guide`, `abort`,
`reset`) alike, so both refuse with the same words:

    reason = answer_refusal(summary, "esc-2", "skip", now, unread)
    if reason:                       # "already answered by alice: skip", "session ended: aborted",
        refuse(reason)               # "the agent is not running (no heartbeat for 40 s)", ...

`unread` are decisions already in the control channel that the agent side has not applied or
ignored yet (another operator's answer on its way); `unread_decisions` reads them from a store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from supervisor.protocol import decisions
from supervisor.store import provenance
from supervisor.store.local import LocalStore
from supervisor.store.summary import SessionSummary

if TYPE_CHECKING:
    from supervisor.store.base import Store


@dataclass(frozen=True, slots=True)
class UnreadDecision:
    """A decision in the control channel that the agent side has not handled yet."""

    decision_id: str
    action: str
    escalation_id: str | None
    operator: str | None


def unread_decisions(store: Store, session_id: str, summary: SessionSummary
                     ) -> list[UnreadDecision]:
    """The session's decisions not yet applied or ignored by its agent (`summary` is the
    session's summary, which knows the handled ones). In a local store only sealed lines
    count (`store.provenance`): the agent can append to `control.jsonl`, and an unsealed
    "approve by alice", which the guard will reject, must not refuse the real answer."""
    root = store.root if isinstance(store, LocalStore) else None
    unread = []
    for line in store.read_all(session_id, "control").events:
        decision_id = getattr(line, "decision_id", None)
        if root is not None and not provenance.is_sealed(
                root, session_id, {**line.model_dump(), **(line.model_extra or {})}):
            continue
        if isinstance(decision_id, str) and decision_id not in summary.handled:
            unread.append(UnreadDecision(decision_id, str(getattr(line, "action", "?")),
                                         getattr(line, "escalation_id", None),
                                         getattr(line, "operator", None)))
    return unread


def _not_running(summary: SessionSummary, now: float) -> str | None:
    if summary.end_status is not None:
        return f"session ended: {summary.end_status}"
    life = summary.liveness(now)
    if life.alive is False:
        return f"the agent is not running ({life.reason})"
    return None


def answer_refusal(summary: SessionSummary, escalation_id: str, action: str, now: float,
                   unread: Iterable[UnreadDecision] = ()) -> str | None:
    """Why answering `escalation_id` with `action` cannot apply now, or None when it can."""
    answer = summary.answers.get(escalation_id)
    if answer is not None:
        if answer.decision_id == "fallback":
            return f"the deadline passed: the fallback ({answer.action}) applied"
        return f"already answered by {answer.operator or 'an operator'}: {answer.action}"
    stopped = _not_running(summary, now)
    if stopped:
        return stopped
    esc = summary.pending.get(escalation_id)
    if esc is None:
        return f"{escalation_id} is not pending"
    for other in unread:
        if other.escalation_id == escalation_id:
            return (f"already answered by {other.operator or 'an operator'}: {other.action} "
                    "(the agent has not applied it yet)")
    deadline = esc.get("deadline_ts")
    if isinstance(deadline, int | float) and now >= deadline:
        return (f"the deadline passed {now - deadline:.0f} s ago: the fallback "
                f"({esc.get('fallback') or 'skip'}) applies")
    options = esc.get("options") or []
    if options and action not in options:
        return decisions.not_an_option(action, escalation_id, options)
    return None


def command_refusal(summary: SessionSummary, command: str, now: float,
                    unread: Iterable[UnreadDecision] = ()) -> str | None:
    """Why the operator command `command` (a decision kind's name) cannot apply now, or None:
    the session must be running, then the command's own rules (its kind's `command_refusal`);
    a command written as an answer (`resume`) is then checked as that answer."""
    stopped = _not_running(summary, now)
    if stopped:
        return stopped
    kind = decisions.KINDS[command]
    unread = list(unread)
    refused = kind.command_refusal(summary, unread)
    if refused or kind.wire is None:
        return refused
    pending = next(iter(summary.pending.values()))  # the kind's rule says there is one
    return answer_refusal(summary, str(pending.get("escalation_id")), kind.wire, now, unread)
