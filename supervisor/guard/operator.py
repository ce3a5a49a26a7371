"""Write an operator's decision to a session's control channel (`control.jsonl`).

Used by `supervisor answer`, `supervisor reset` and the dashboard alike, so every decision line
is built and checked in one place:

    decision_id = send_decision(root, "s1", "guidance", escalation_id="esc-2",
                                text="Read the file before editing it again", operator="ana")

The line is validated with the one validator of decision lines the agent side and every reader
apply (`protocol.decisions.decision_problem`) before it is written, so a decision the guard would
reject as malformed never reaches the file.
"""

from __future__ import annotations

import getpass
import os
import time
import uuid
from pathlib import Path
from typing import Any

from supervisor.protocol.bounded import loads
from supervisor.protocol.decisions import decision_problem
from supervisor.protocol.names import CONTROL_FILE, DECISION, DECISION_ACTIONS, EVENTS_FILE
from supervisor.store.paths import existing_session_dir
from supervisor.store.writer import LineWriter


class DecisionError(ValueError):
    """A decision that cannot be written; the message says why."""


def default_operator() -> str:
    """The operator's name when none is given: the login name."""
    try:
        return getpass.getuser() or "operator"
    except Exception:  # no login name in some containers
        return "operator"


def new_decision_id() -> str:
    return "d-" + uuid.uuid4().hex[:12]


def send_decision(
    root: Path,
    session: str,
    action: str,
    escalation_id: str | None = None,
    text: str | None = None,
    checkpoint_id: str | None = None,
    operator: str | None = None,
    decision_id: str | None = None,
) -> str:
    """Append one decision to the session's control file; return its `decision_id`.

    The session must exist. Raises `DecisionError` for an invalid decision (unknown action,
    guidance without text, rollback without checkpoint)."""
    if action not in DECISION_ACTIONS:
        raise DecisionError(f"unknown action '{action}' (one of {', '.join(DECISION_ACTIONS)})")
    line = {
        "type": DECISION,
        "decision_id": decision_id or new_decision_id(),
        "escalation_id": escalation_id,
        "action": action,
        "text": text,
        "checkpoint_id": checkpoint_id,
        "operator": operator or default_operator(),
    }
    problem = decision_problem({**line, "v": 1, "seq": 1, "ts": 0.0})
    if problem:
        raise DecisionError(problem)
    directory = existing_session_dir(root, session)
    with LineWriter(directory / CONTROL_FILE) as writer:
        writer.append(line)
    return line["decision_id"]


def events_size(root: Path, session: str) -> int:
    """Current size of the session's event log (where to look for a decision's outcome)."""
    try:
        return os.stat(existing_session_dir(root, session) / EVENTS_FILE).st_size
    except OSError:
        return 0


def wait_for_outcome(
    root: Path, session: str, decision_id: str, offset: int, timeout: float,
) -> dict[str, Any] | None:
    """Wait up to `timeout` seconds for the agent side to record `decision_applied` or
    `decision_ignored` for `decision_id` after byte `offset` of the event log; return that
    event, or None when it did not come in time (the agent may pick it up later)."""
    path = existing_session_dir(root, session) / EVENTS_FILE
    end = time.monotonic() + timeout
    while True:
        found, offset = _scan_outcome(path, decision_id, offset)
        if found is not None or time.monotonic() >= end:
            return found
        time.sleep(0.05)


def _scan_outcome(path: Path, decision_id: str, offset: int) -> tuple[dict[str, Any] | None, int]:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except OSError:
        return None, offset
    complete = data.rfind(b"\n") + 1
    for raw in data[:complete].splitlines():
        try:
            event = loads(raw)
        except ValueError:  # a bad line (too deep included): not the outcome we wait for
            continue
        if (
            isinstance(event, dict)
            and event.get("type") in ("decision_applied", "decision_ignored")
            and event.get("decision_id") == decision_id
        ):
            return event, offset + complete
    return None, offset + complete
