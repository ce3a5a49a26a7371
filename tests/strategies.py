"""Hypothesis strategies for valid protocol events of every type (shared by several tests)."""

from typing import Any

from hypothesis import strategies as st

from supervisor.protocol.decisions import actions
from supervisor.protocol.names import (
    AGENT_EVENT_TYPES,
    MAX_INT,
    MAX_NUMBER,
    MAX_TS,
    MESSAGE_ROLES,
    NOTIFICATION_OUTCOMES,
    SESSION_END_STATUSES,
    TASK_STATUSES,
    VERDICT_ACTIONS,
)

text = st.text(max_size=30)
opt_text = st.none() | text
ints = st.integers(min_value=0, max_value=MAX_INT)
numbers = st.floats(min_value=-MAX_NUMBER, max_value=MAX_NUMBER, width=64)
opt_numbers = st.none() | numbers
timestamps = st.floats(min_value=0, max_value=MAX_TS)
pids = st.integers(min_value=0, max_value=2**31 - 1)
level = st.integers(min_value=0, max_value=4)
seqs = st.lists(st.integers(min_value=1, max_value=10**9), max_size=5)
json_values = st.recursive(
    st.none() | st.booleans() | ints | numbers | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(text, json_values, max_size=4)
decision_action = st.sampled_from(actions())

FIELDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "session_start": {"agent": text, "task": opt_text, "cwd": opt_text,
                      "pid": st.none() | pids, "policy": st.none() | json_objects,
                      "heartbeat_s": opt_numbers},
    "task_start": {"task_id": text, "title": text},
    "task_end": {"task_id": text, "status": st.sampled_from(TASK_STATUSES)},
    "tool_call": {"call_id": text, "tool": text, "args": json_objects},
    "tool_result": {"call_id": text, "ok": st.booleans(), "output": text, "output_bytes": ints,
                    "output_hash": text, "error": opt_text, "duration_ms": opt_numbers},
    "message": {"role": st.sampled_from(MESSAGE_ROLES), "text": text},
    "usage": {"input_tokens": ints, "output_tokens": ints, "cost_usd": opt_numbers},
    "detection": {"detector": text, "level": level, "signature": text, "evidence": seqs,
                  "message": text},
    "verdict": {"call_id": text, "action": st.sampled_from(VERDICT_ACTIONS), "level": level,
                "reason": opt_text, "message": opt_text},
    "limit": {"name": text, "value": numbers, "limit": numbers, "action": text},
    "checkpoint": {"checkpoint_id": text, "label": text, "commit": text, "at_seq": ints,
                   "files": ints},
    "escalation": {"escalation_id": text, "level": level, "reason": text, "evidence": seqs,
                   "options": st.lists(decision_action, max_size=4),
                   "deadline_ts": st.none() | timestamps, "fallback": decision_action,
                   "kind": st.none() | st.sampled_from(["detection", "limit", "cycle", "pause"])},
    "decision_applied": {"escalation_id": opt_text, "decision_id": text, "action": text,
                         "outcome": text},
    "decision_ignored": {"decision_id": text, "reason": text},
    "rollback": {"checkpoint_id": text, "restored_files": ints, "safety_checkpoint_id": text},
    "heartbeat": {},
    "notification": {"escalation_id": text, "outcome": st.sampled_from(NOTIFICATION_OUTCOMES),
                     "service": text, "attempt": st.integers(min_value=1, max_value=MAX_INT),
                     "reason": opt_text, "link": opt_text},
    "session_end": {"status": st.sampled_from(SESSION_END_STATUSES), "reason": opt_text},
}
name = st.text(min_size=1, max_size=30)
CONTROL_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "decision_id": name, "escalation_id": opt_text, "action": decision_action, "text": opt_text,
    "checkpoint_id": opt_text, "operator": name,
}
"""A decision line's fields; `control_events` adds what its action needs (the guard's rules)."""
assert set(FIELDS) == AGENT_EVENT_TYPES, "a new event type needs a strategy here"


def common() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "v": st.just(1),
        "seq": st.integers(min_value=1, max_value=MAX_INT),
        "ts": st.floats(min_value=0, max_value=4e9),
    })


@st.composite
def agent_events(draw: st.DrawFn, event_type: str | None = None) -> dict[str, Any]:
    """A valid agent-side event as a dict (type drawn when not given)."""
    kind = event_type or draw(st.sampled_from(sorted(FIELDS)))
    event = draw(common())
    event["type"] = kind
    event.update(draw(st.fixed_dictionaries(FIELDS[kind])))
    return event


@st.composite
def control_events(draw: st.DrawFn) -> dict[str, Any]:
    event = draw(common())
    event["type"] = "decision"
    event.update(draw(st.fixed_dictionaries(CONTROL_FIELDS)))
    if event["action"] == "guidance" and not (event["text"] or "").strip():
        event["text"] = "read the file first"
    if event["action"] == "rollback" and not event["checkpoint_id"]:
        event["checkpoint_id"] = "cp-1"
    if event["action"] in ("split", "replan"):
        event["tasks"] = draw(st.lists(text.filter(str.strip), min_size=1, max_size=3))
    if event["action"] == "quiet":
        event.update(detector="exact_repeat", signature=None, calls=draw(
            st.none() | st.integers(min_value=1, max_value=1000)))
    return event
