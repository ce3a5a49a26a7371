"""The one validator of operators' decision lines (`control.jsonl`), stdlib only.

The common fields are checked here; what each action needs besides is its kind's
(`DecisionKind.fields_problem`).

The guard applies a decision only if this says it is valid, and every reader (the codec behind
the dashboard, `tail`, `validate`) shows a line this refuses as a bad line with the same reason:
nothing is applied that a reader would reject, and nothing a reader shows as a decision is
silently dropped by the guard. It is plain Python because the hook, which reads decisions on
every tool call, must not import pydantic.
"""

import math
from typing import Any

from supervisor.protocol.bounded import loads
from supervisor.protocol.decisions.plan import plan_problem
from supervisor.protocol.decisions.quiet import quiet_fields_problem
from supervisor.protocol.decisions.registry import KINDS, actions
from supervisor.protocol.names import DECISION, MAX_INT, MAX_LINE_BYTES, MAX_TS


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
    if value["action"] not in actions():
        return f"unknown action {_show(value['action'])} (one of {', '.join(actions())})"
    for name in ("escalation_id", "text", "checkpoint_id"):
        if value.get(name) is not None and not isinstance(value[name], str):
            return f"field '{name}' must be a string or null"
    if value.get("tasks") is not None:  # whatever the action, a plan it carries is valid
        problem = plan_problem(value["tasks"], str(value["action"]))
        if problem:
            return problem
    return quiet_fields_problem(value) or KINDS[value["action"]].fields_problem(value)


def _show(value: Any) -> str:
    import json

    try:
        return json.dumps(value, default=str)[:40]
    except (ValueError, RecursionError):
        return type(value).__name__
