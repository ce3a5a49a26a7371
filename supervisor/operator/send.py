"""Write an operator's decision to a session's control channel, through the store.

Used by `supervisor answer`, `supervisor reset` and the dashboard alike, so every decision line
is built and checked in one place:

    decision_id = send_decision(store, "s1", "guidance", escalation_id="esc-2",
                                text="Read the file before editing it again", operator="ana")

The line is validated with the one validator of decision lines the agent side and every reader
apply (`protocol.decisions.decision_problem`) before it is written, so a decision the guard would
reject as malformed never reaches the channel. `store` is any `supervisor.store.base.Store` (a
local root's path is taken as its local store); what became of the decision is
`store.wait_outcome(...)`.
"""

from __future__ import annotations

import getpass
import os
import uuid
from typing import TYPE_CHECKING, Any

from supervisor.protocol.decisions import KINDS, DecisionKind, actions, decision_problem
from supervisor.protocol.names import DECISION
from supervisor.store.open import as_store

if TYPE_CHECKING:
    from supervisor.store.base import Store


class DecisionError(ValueError):
    """A decision that cannot be written; the message says why."""


def default_operator() -> str:
    """The operator's name when none is given: `$SUPERVISOR_OPERATOR`, else the login name
    (one rule for the dashboard and every command)."""
    named = os.environ.get("SUPERVISOR_OPERATOR", "").strip()
    if named:
        return named
    try:
        return getpass.getuser() or "operator"
    except Exception:  # no login name in some containers
        return "operator"


def new_decision_id() -> str:
    return "d-" + uuid.uuid4().hex[:12]


def send_decision(
    store: Store | str | os.PathLike[str],
    session: str,
    action: str,
    escalation_id: str | None = None,
    text: str | None = None,
    checkpoint_id: str | None = None,
    operator: str | None = None,
    decision_id: str | None = None,
    tasks: list[str] | None = None,
    detector: str | None = None,
    signature: str | None = None,
    calls: int | None = None,
    lift: bool = False,
) -> str:
    """Append one decision to the session's control channel; return its `decision_id`.

    The session must exist. Raises `DecisionError` for an invalid decision (unknown action,
    guidance without text, rollback without checkpoint, a split without a valid plan, quiet
    without detector). `tasks`: a `split`'s sub-tasks, in order; `detector`, `signature` and
    `calls` are a `quiet`'s; `lift` makes it end the quiet of that detector instead."""
    if action not in actions():
        raise DecisionError(f"unknown action '{action}' (one of {', '.join(actions())})")
    line: dict[str, Any] = {
        "type": DECISION,
        "decision_id": decision_id or new_decision_id(),
        "escalation_id": escalation_id,
        "action": action,
        "text": text,
        "checkpoint_id": checkpoint_id,
        "operator": operator or default_operator(),
    }
    if tasks is not None:
        line["tasks"] = list(tasks)
    if KINDS[action].needs == "detector":  # a quiet's fields
        line.update(detector=detector, signature=signature, calls=calls)
        if lift:
            line["lift"] = True
    problem = decision_problem({**line, "v": 1, "seq": 1, "ts": 0.0})
    if problem:
        raise DecisionError(problem)
    target = as_store(store)
    target.require(session)
    target.append_decision(session, line)
    return str(line["decision_id"])


def effect_text(kind: DecisionKind, policy: dict[str, Any] | None) -> str | None:
    """What `kind`'s engine effect does under a session's recorded policy, in the engine's words
    (`effect_description`: what a reset clears and keeps), or None when the engine has no more
    to say than the kind's own `confirm`: the dashboard's confirmation and the CLI say it."""
    from supervisor.engine.decisions import effect_description
    from supervisor.engine.policy import Policy

    try:
        return effect_description(kind.effect, Policy.from_dict(policy or {}))
    except (ValueError, TypeError, KeyError):
        if effect_description(kind.effect, Policy.from_dict({})) is None:
            return None  # nothing to say, whatever the policy
        said = (kind.confirm or "It applies").rstrip(".")
        return f"{said} as its policy says (the policy it recorded could not be read)."
