"""Write an operator's decision to a session's control channel (`control.jsonl`).

The dashboard only appends `decision` lines; the agent side applies the first valid one for an
escalation and answers with `decision_applied` / `decision_ignored`, which come back through the
events and are matched by `decision_id`.
"""

import getpass
import os
import uuid
from pathlib import Path
from typing import Any

from supervisor.store.writer import control_writer

ACTIONS = ("approve", "guidance", "rollback", "skip", "abort", "pause", "reset")


def operator_name() -> str:
    """Who is deciding: `$SUPERVISOR_OPERATOR`, else the login name."""
    name = os.environ.get("SUPERVISOR_OPERATOR")
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # no login name in some containers
        return "operator"


def new_decision_id() -> str:
    return "d-" + uuid.uuid4().hex[:16]


def build_decision(
    action: str,
    *,
    escalation_id: str | None = None,
    text: str | None = None,
    checkpoint_id: str | None = None,
    operator: str | None = None,
    decision_id: str | None = None,
) -> dict[str, Any]:
    """A `decision` line as protocol.md defines it (validated action)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown decision action {action!r}")
    if action == "guidance" and not (text or "").strip():
        raise ValueError("guidance needs a text")
    if action == "rollback" and not checkpoint_id:
        raise ValueError("rollback needs a checkpoint")
    return {
        "type": "decision",
        "decision_id": decision_id or new_decision_id(),
        "escalation_id": escalation_id,
        "action": action,
        "text": text if action == "guidance" else None,
        "checkpoint_id": checkpoint_id if action == "rollback" else None,
        "operator": operator or operator_name(),
    }


def send_decision(root: Path, session_id: str, decision: dict[str, Any]) -> dict[str, Any]:
    """Append `decision` to the session's control file; return the line as written."""
    writer = control_writer(root, session_id)
    try:
        return writer.append(decision)
    finally:
        writer.close()
