"""Names of the protocol: event types, actions, statuses and degradation levels.

Plain constants, stdlib only, so the hook path can use them without importing pydantic.
"""

from typing import Final

PROTOCOL_VERSION: Final = 1
MAX_LINE_BYTES: Final = 1024 * 1024
"""Default maximum size of one line, newline included; longer lines are bad lines."""
MAX_JSON_DEPTH: Final = 64
"""Deepest nesting of arrays and objects in one line (the line itself is level 1); deeper lines
are bad lines, refused before parsing, and writers flatten deeper values into text."""
MAX_INT: Final = 2**53 - 1
"""Largest integer a protocol field holds (exact in a double, so in every JSON reader)."""
MAX_NUMBER: Final = 1e15
"""Largest magnitude of a protocol float (costs, limits, durations)."""
MAX_TS: Final = 253402300799.0
"""Latest time stamp a line may carry: the end of year 9999, in Unix seconds (a time in
milliseconds or nanoseconds is far above it, so it is refused rather than misread)."""

SESSIONS_DIR: Final = "sessions"
"""A store root's folder of session folders (beside it: the store's own files, not runs)."""
EVENTS_FILE: Final = "events.jsonl"
CONTROL_FILE: Final = "control.jsonl"
CHECKPOINTS_DIR: Final = "checkpoints.git"
READS_DIR: Final = "reads"
CHANGED_FILES_KEPT: Final = 200
"""Paths a `checkpoint` event lists in `changed_files` at most (its `diffstat` counts them all).
Here, not beside the checkpoints, so that a reader (the dashboard) need not load git's side."""

# Event types written by the agent side (events.jsonl).
SESSION_START: Final = "session_start"
TASK_START: Final = "task_start"
TASK_END: Final = "task_end"
TOOL_CALL: Final = "tool_call"
TOOL_RESULT: Final = "tool_result"
MESSAGE: Final = "message"
USAGE: Final = "usage"
DETECTION: Final = "detection"
VERDICT: Final = "verdict"
LIMIT: Final = "limit"
LIMIT_WARNING_KEY: Final = "warn-"
"""A `limit` warning is notified as `warn-<its seq>` (where an escalation has its id): the key
the notifier claims, so it goes out once (docs/notify.md)."""
CHECKPOINT: Final = "checkpoint"
ESCALATION: Final = "escalation"
DECISION_APPLIED: Final = "decision_applied"
DECISION_IGNORED: Final = "decision_ignored"
ROLLBACK: Final = "rollback"
HEARTBEAT: Final = "heartbeat"
SESSION_END: Final = "session_end"
NOTIFICATION: Final = "notification"
"""Written by the notifier (`supervisor.notify`), not the agent: what became of one attempt to
tell the operator about an escalation (`outcome` sent, failed or retrying)."""
HINT: Final = "hint"
"""Extension: what the agent was told about a tool's outcome besides the engine's findings (a
failed edit's closest match)."""
DISOBEYED: Final = "disobeyed"
"""Extension: the agent ran a call the supervisor had refused (its result arrived anyway)."""
MEMORY: Final = "memory"
"""Extension: the project's failure memory in this session (docs/memory.md): what it told the
agent (`warned` before a call, `pitfalls` at the start) and what it learned (`learned`)."""

# Line types written by operators (control.jsonl).
DECISION: Final = "decision"

AGENT_EVENT_TYPES: Final = frozenset(
    {
        SESSION_START, TASK_START, TASK_END, TOOL_CALL, TOOL_RESULT, MESSAGE, USAGE,
        DETECTION, VERDICT, LIMIT, CHECKPOINT, ESCALATION, DECISION_APPLIED,
        DECISION_IGNORED, ROLLBACK, HEARTBEAT, SESSION_END, NOTIFICATION,
    }
)
CONTROL_TYPES: Final = frozenset({DECISION})

# Degradation levels.
LEVEL_NORMAL: Final = 0
LEVEL_NUDGE: Final = 1
LEVEL_BLOCK: Final = 2
LEVEL_ESCALATE: Final = 3
LEVEL_STOP: Final = 4
LEVEL_NAMES: Final = ("normal", "nudge", "block", "escalate", "stop")

VERDICT_ACTIONS: Final = ("allow", "nudge", "skip", "block", "pause", "stop")
# The decision actions are the registry's (`supervisor.protocol.decisions.actions()`).
PLAN_TASK_MAX_CHARS: Final = 2000
"""The longest sub-task of a `split` decision, in characters (the agent reads each as its
instruction; a longer one is refused, not cut)."""
PLAN_MAX_TASKS: Final = 50
"""The most sub-tasks one `split` may carry."""
MAX_QUIET_CALLS: Final = 1_000_000
"""Largest `calls` of a `quiet` decision (omitted: until the session ends)."""
TASK_STATUSES: Final = ("done", "skipped", "failed")
SESSION_END_STATUSES: Final = ("completed", "terminated", "aborted", "failed")
MESSAGE_ROLES: Final = ("assistant", "user", "system")
NOTIFICATION_OUTCOMES: Final = ("sent", "failed", "retrying")
