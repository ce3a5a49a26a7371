"""Fold a session's events into the one-row summary that `supervisor sessions` and the
dashboard's sessions table show: who, what, status, level, counts, last activity.

Pure: events in, summary out, with `now` passed in for the time-dependent statuses.
"""

from dataclasses import dataclass, field
from typing import Any

from supervisor.protocol.models import Event

IDLE_AFTER_S = 60.0
"""No activity (heartbeats aside) for this long: the session is idle."""
DEAD_AFTER_HEARTBEATS = 3
"""Missing this many promised heartbeats in a row: the agent is presumed dead."""
DEAD_AFTER_MIN_S = 15.0

STATUSES = ("running", "waiting", "paused", "idle", "ended", "dead")
"""`waiting` means waiting for you: an escalation is pending."""


@dataclass(slots=True)
class SessionSummary:
    """What is known of one session after folding its events so far."""

    session_id: str
    agent: str | None = None
    task: str | None = None
    cwd: str | None = None
    pid: int | None = None
    heartbeat_s: float | None = None
    started_ts: float | None = None
    last_ts: float | None = None
    """Time of the latest event of any kind."""
    last_activity_ts: float | None = None
    """Time of the latest event other than a heartbeat."""
    events: int = 0
    tool_calls: int = 0
    errors: int = 0
    bad_lines: int = 0
    level: int = 0
    end_status: str | None = None
    end_reason: str | None = None
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Pending escalations by id: the escalation event as a dict, in arrival order."""

    def apply(self, event: Event) -> None:
        """Fold one event in."""
        self.events += 1
        kind = event.type
        ts = event.ts
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if kind != "heartbeat":
            self.last_activity_ts = (
                ts if self.last_activity_ts is None else max(self.last_activity_ts, ts)
            )
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    def status(self, now: float) -> str:
        """One of `STATUSES` at time `now`."""
        if self.end_status is not None:
            return "ended"
        if self.heartbeat_s and self.last_ts is not None:
            silent = now - self.last_ts
            if silent > max(DEAD_AFTER_HEARTBEATS * self.heartbeat_s, DEAD_AFTER_MIN_S):
                return "dead"
        if self.pending:
            first = next(iter(self.pending.values()))
            return "paused" if first.get("kind") == "pause" else "waiting"
        if self.last_activity_ts is not None and now - self.last_activity_ts > IDLE_AFTER_S:
            return "idle"
        return "running"


def _session_start(s: SessionSummary, e: Any) -> None:
    s.agent, s.task, s.cwd, s.pid = e.agent, e.task, e.cwd, e.pid
    s.heartbeat_s = e.heartbeat_s
    s.started_ts = e.ts


def _task_start(s: SessionSummary, e: Any) -> None:
    s.task = e.title


def _tool_call(s: SessionSummary, e: Any) -> None:
    s.tool_calls += 1


def _tool_result(s: SessionSummary, e: Any) -> None:
    if not e.ok:
        s.errors += 1


def _level(s: SessionSummary, e: Any) -> None:
    s.level = e.level


def _escalation(s: SessionSummary, e: Any) -> None:
    s.level = e.level
    s.pending[e.escalation_id] = e.model_dump(mode="json")


def _decision_applied(s: SessionSummary, e: Any) -> None:
    if e.escalation_id:
        s.pending.pop(e.escalation_id, None)
    if e.level is not None:  # the engine's level right after the decision
        s.level = e.level


def _session_end(s: SessionSummary, e: Any) -> None:
    s.end_status, s.end_reason = e.status, e.reason
    s.pending.clear()
    if e.status in ("aborted", "terminated"):
        s.level = 4


_HANDLERS = {
    "session_start": _session_start,
    "task_start": _task_start,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "verdict": _level,
    "detection": _level,
    "escalation": _escalation,
    "decision_applied": _decision_applied,
    "session_end": _session_end,
}
