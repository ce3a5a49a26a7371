"""Parse one line of bytes into an event or a `BadLine`, and serialise events back.

Parsing never raises: whatever the bytes, the caller gets an event or a `BadLine` that says why
(file offsets are filled in by the tailer, which knows them). Validation runs in pydantic-core
straight from the bytes (`validate_json`, strict: a number must be a JSON number, a boolean a
JSON boolean), which keeps ingest close to a bare `json.loads` loop. Only lines that fail take
the slower paths that explain why, or that rescue what pydantic-core's parser refuses but the
protocol allows (a lone UTF-16 surrogate escape such as `"\\udcff"`, which Python's own
`json.dumps` writes for undecodable tool output: it becomes U+FFFD).
"""

from typing import Any

from pydantic import TypeAdapter, ValidationError

from supervisor.protocol import bounded
from supervisor.protocol.bad_line import BadLine, LineKind
from supervisor.protocol.decisions import common_problem, read_decision
from supervisor.protocol.lines import as_dict, encode_line
from supervisor.protocol.models import AgentEvent, Decision, Event, GenericEvent
from supervisor.protocol.names import (
    AGENT_EVENT_TYPES,
    CONTROL_TYPES,
    MAX_JSON_DEPTH,
    MAX_LINE_BYTES,
)

_REQUIRED_COMMON = ("v", "seq", "ts")
_RAW_KEEP = 64 * 1024
"""How much of an oversized line a `BadLine` keeps for inspection."""

_agent_adapter: TypeAdapter[Any] = TypeAdapter(AgentEvent)
_control_adapter: TypeAdapter[Any] = TypeAdapter(Decision)
_generic_adapter: TypeAdapter[Any] = TypeAdapter(GenericEvent)
_agent_fast = _agent_adapter.validator.validate_json
_REQUIRED_SET = frozenset(_REQUIRED_COMMON)
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number",
               bool: "boolean", type(None): "null"}


class _Refused(Exception):
    """A line the slow path refuses, with the reason."""


def parse_line(
    raw: bytes, kind: LineKind = "events", *, max_bytes: int = MAX_LINE_BYTES
) -> Event | BadLine:
    """Parse one line (with or without its trailing newline) into an event or a `BadLine`.

    Unknown event types become `GenericEvent`; unknown fields are kept on any event.
    """
    try:
        if len(raw) > max_bytes:
            return BadLine(f"line exceeds {max_bytes} bytes", raw[:_RAW_KEEP], size=len(raw))
        if kind == "control":
            return _parse_control(raw)
        if bounded.too_deep(raw, MAX_JSON_DEPTH):
            return BadLine(f"nested deeper than {MAX_JSON_DEPTH} levels", raw)
        if b"NaN" in raw or b"Infinity" in raw:
            # pydantic-core's parser takes these non-JSON constants; the slow path refuses them
            # (a string that merely contains the word is fine there).
            event = _validate(_loads(raw), kind, from_json=False)
        else:
            try:
                # The fast path: straight into pydantic-core's validator (no Python wrapper).
                event = _agent_fast(raw, strict=True)
            except ValidationError as exc:
                if _is_json_error(exc):
                    event = _validate(_loads(raw), kind, from_json=False)
                elif _unknown_type(exc, kind):
                    event = _generic_adapter.validate_json(raw, strict=True)
                else:
                    return BadLine(_explain(exc), raw)
        if not event.__pydantic_fields_set__ >= _REQUIRED_SET:
            missing = [n for n in _REQUIRED_COMMON if n not in event.__pydantic_fields_set__]
            return BadLine(f"missing field '{missing[0]}'", raw)
        if event.seq < 1:
            return BadLine("field 'seq' must be >= 1", raw)
        return event
    except _Refused as exc:
        return BadLine(str(exc), raw)
    except ValidationError as exc:
        return BadLine(_explain(exc), raw)
    except Exception as exc:  # parsing must never raise, whatever the bytes
        return BadLine(f"unreadable line: {type(exc).__name__}", raw)


def _parse_control(raw: bytes) -> Event | BadLine:
    """A line of `control.jsonl`: a decision is checked by the one validator the guard applies
    too (`protocol.decisions`), so a reader shows as a decision exactly what the guard would
    apply, and refuses the rest with the guard's reason. Other types are shown as they are."""
    value, problem = read_decision(raw)
    if isinstance(value, dict) and isinstance(value.get("type"), str) \
            and value["type"] not in CONTROL_TYPES:
        problem = common_problem(value)
        if problem:
            return BadLine(problem, raw)
        return _generic_adapter.validate_python(_scrub(value), strict=True)
    if problem:
        return BadLine(problem, raw)
    return _control_adapter.validate_python(_scrub(value), strict=True)


def dump_event(event: Event | dict[str, Any]) -> bytes:
    """Serialise an event (model or dict) as one line, newline included."""
    return encode_line(as_dict(event))


def _validate(data: Any, kind: LineKind, *, from_json: bool) -> Event:
    """Validate bytes (`from_json`) or a parsed value; unknown types become `GenericEvent`."""
    adapter = _agent_adapter if kind == "events" else _control_adapter
    try:
        if from_json:
            return adapter.validate_json(data, strict=True)
        return adapter.validate_python(data, strict=True)
    except ValidationError as exc:
        if not _unknown_type(exc, kind):
            raise
    if from_json:
        return _generic_adapter.validate_json(data, strict=True)
    return _generic_adapter.validate_python(data, strict=True)


def _is_json_error(exc: ValidationError) -> bool:
    return exc.errors(include_url=False, include_input=False)[0]["type"] == "json_invalid"


def _loads(raw: bytes) -> dict[str, Any]:
    """The slow, explaining parse of a line pydantic-core's JSON parser refused."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _Refused(f"invalid UTF-8 at byte {err.start}") from None
    try:
        value = bounded.loads(text)
    except ValueError as err:
        raise _Refused(f"invalid JSON: {getattr(err, 'msg', None) or err}") from None
    if not isinstance(value, dict):
        raise _Refused(f"not a JSON object but {_JSON_TYPES.get(type(value), 'a value')}")
    return _scrub(value)


def _scrub(value: Any) -> Any:
    """Replace lone surrogates (not encodable as UTF-8) by U+FFFD, recursively."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def _unknown_type(exc: ValidationError, kind: LineKind) -> bool:
    """True when the only problem is a `type` this version does not know (not a missing one)."""
    errors = exc.errors(include_url=False, include_input=False)
    if kind == "events":
        return len(errors) == 1 and errors[0]["type"] == "union_tag_invalid"
    return any(e["type"] == "literal_error" and tuple(e["loc"]) == ("type",) for e in errors)


def _explain(exc: ValidationError) -> str:
    """One short sentence saying why a well-formed JSON line is not a valid event."""
    err = exc.errors(include_url=False, include_input=False)[0]
    kind, loc = err["type"], tuple(err["loc"])
    if kind in ("model_type", "model_attributes_type", "dict_type") and len(loc) <= 1:
        return "not a JSON object"
    if kind == "union_tag_not_found" or (kind == "missing" and loc[-1:] == ("type",)):
        return "missing field 'type'"
    if kind == "json_invalid":
        return f"invalid JSON: {err['msg']}"
    if kind == "missing":
        return f"missing field '{_field_name(loc)}'"
    return f"field '{_field_name(loc)}': {err['msg']}"


def _field_name(loc: tuple[Any, ...]) -> str:
    """The field path of a validation error, without the union tag pydantic puts first."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in _TAGS:
        parts = parts[1:]
    return ".".join(parts) or "?"


_TAGS = AGENT_EVENT_TYPES | CONTROL_TYPES
