"""The one validator of operators' decision lines (`control.jsonl`), stdlib only.

The guard applies a decision only if this says it is valid, and every reader (the codec behind
the dashboard, `tail`, `validate`) shows a line this refuses as a bad line with the same reason:
nothing is applied that a reader would reject, and nothing a reader shows as a decision is
silently dropped by the guard. It is plain Python because the hook, which reads decisions on
every tool call, must not import pydantic.
"""

import math
from typing import Any

from supervisor.protocol.bounded import loads
from supervisor.protocol.names import (
    DECISION,
    DECISION_ACTIONS,
    MAX_INT,
    MAX_LINE_BYTES,
    MAX_QUIET_CALLS,
    MAX_TS,
    PLAN_MAX_TASKS,
    PLAN_TASK_MAX_CHARS,
)


def read_decision(raw: bytes) -> tuple[Any, str | None]:
    """Parse one control line: (the parsed value, None) for a valid decision, else (the parsed
    value or None, why it is not one). Never raises."""
    if len(raw) > MAX_LINE_BYTES:
        return None, f"line exceeds {MAX_LINE_BYTES} bytes"
    try:
        value = loads(raw)
    except UnicodeDecodeError as exc:
        return None, f"invalid UTF-8 at byte {exc.start}"
    except ValueError as exc:  # not JSON, nested too deeply, NaN
        return None, f"invalid JSON: {getattr(exc, 'msg', None) or exc}"
    return value, decision_problem(value)


def common_problem(value: dict[str, Any]) -> str | None:
    """Why the common fields `v`, `seq`, `ts` of a line are not valid, or None (the same bounds
    as the pydantic models)."""
    for name in ("v", "seq", "ts"):
        if name not in value:
            return f"missing field '{name}'"
    for name, low in (("v", 0), ("seq", 1)):
        number = value[name]
        if not isinstance(number, int) or isinstance(number, bool):
            return f"field '{name}' must be an integer"
        if not low <= number <= MAX_INT:
            return f"field '{name}' must be between {low} and {MAX_INT}"
    ts = value["ts"]
    if not isinstance(ts, int | float) or isinstance(ts, bool):
        return "field 'ts' must be a number"
    if not (math.isfinite(ts) and 0 <= ts <= MAX_TS):
        return f"field 'ts' must be Unix seconds between 0 and {MAX_TS:.0f}"
    return None


def decision_problem(value: Any) -> str | None:
    """Why `value` (a parsed line) is not a valid decision, or None when it is one."""
    if not isinstance(value, dict):
        return "not a JSON object"
    if value.get("type") != DECISION:
        return f"type must be 'decision', not {_show(value.get('type'))}"
    problem = common_problem(value)
    if problem:
        return problem
    for name in ("decision_id", "action", "operator"):
        if name not in value:
            return f"missing field '{name}'"
        if not isinstance(value[name], str) or not value[name]:
            return f"field '{name}' must be a non-empty string"
    if value["action"] not in DECISION_ACTIONS:
        return f"unknown action {_show(value['action'])} (one of {', '.join(DECISION_ACTIONS)})"
    for name in ("escalation_id", "text", "checkpoint_id"):
        if value.get(name) is not None and not isinstance(value[name], str):
            return f"field '{name}' must be a string or null"
    if value["action"] == "guidance" and not (value.get("text") or "").strip():
        return "guidance needs a non-empty 'text'"
    if value["action"] == "rollback" and not value.get("checkpoint_id"):
        return "rollback needs a 'checkpoint_id'"
    if value["action"] in ("split", "replan") or value.get("tasks") is not None:
        return plan_problem(value.get("tasks"), str(value["action"]))
    return quiet_problem(value)


def plan_problem(tasks: Any, action: str = "split") -> str | None:
    """Why `tasks` is not a valid plan for a `split` or `replan` (a non-empty list of at most
    `PLAN_MAX_TASKS` non-empty texts, each at most `PLAN_TASK_MAX_CHARS`), or None."""
    if not isinstance(tasks, list) or not tasks:
        return f"{action} needs 'tasks': a non-empty list of sub-tasks"
    if len(tasks) > PLAN_MAX_TASKS:
        return f"{action} has {len(tasks)} sub-tasks; at most {PLAN_MAX_TASKS}"
    for number, task in enumerate(tasks, 1):
        if not isinstance(task, str) or not task.strip():
            return f"sub-task {number} must be a non-empty text"
        if len(task) > PLAN_TASK_MAX_CHARS:
            return (f"sub-task {number} has {len(task)} characters; at most "
                    f"{PLAN_TASK_MAX_CHARS}")
    return None


def quiet_problem(value: dict[str, Any]) -> str | None:
    """Why the `quiet` fields (`detector`, `signature`, `calls`) of a decision are not valid, or
    None: a quiet names a detector, maybe one of its signatures, maybe a number of calls."""
    for name in ("detector", "signature"):
        if value.get(name) is not None and (not isinstance(value[name], str)
                                            or not value[name] or len(value[name]) > 200):
            return f"field '{name}' must be a non-empty string of at most 200 characters or null"
    calls = value.get("calls")
    if calls is not None and (not isinstance(calls, int) or isinstance(calls, bool)
                              or not 1 <= calls <= MAX_QUIET_CALLS):
        return f"field 'calls' must be an integer between 1 and {MAX_QUIET_CALLS} or null"
    if value["action"] == "quiet" and not value.get("detector"):
        return "quiet needs a 'detector'"
    return None


def _show(value: Any) -> str:
    import json

    try:
        return json.dumps(value, default=str)[:40]
    except (ValueError, RecursionError):
        return type(value).__name__
