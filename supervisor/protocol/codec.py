"""Parse one line of bytes into an event or a `BadLine`, and serialise events back.

Parsing never raises: whatever the bytes, the caller gets an event or a `BadLine` that says why
(file offsets are filled in by the tailer, which knows them). Validation runs in pydantic-core
straight from the bytes (`validate_json`), which keeps ingest close to a bare `json.loads` loop.
"""

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from supervisor.protocol.lines import as_dict, encode_line
from supervisor.protocol.models import AgentEvent, Decision, Event, GenericEvent
from supervisor.protocol.names import AGENT_EVENT_TYPES, CONTROL_TYPES, MAX_LINE_BYTES

LineKind = Literal["events", "control"]

_REQUIRED_COMMON = ("v", "seq", "ts")
_RAW_KEEP = 64 * 1024
"""How much of an oversized line a `BadLine` keeps for inspection."""

_agent_adapter: TypeAdapter[Any] = TypeAdapter(AgentEvent)
_control_adapter: TypeAdapter[Any] = TypeAdapter(Decision)
_generic_adapter: TypeAdapter[Any] = TypeAdapter(GenericEvent)


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that is not a valid event: kept with its reason and raw bytes, never raised."""

    reason: str
    raw: bytes
    offset: int | None = None
    """Byte offset of the line's start in its file, when read from a file."""
    size: int | None = None
    """Size of the whole line when `raw` holds only its start (an oversized line)."""

    def preview(self, limit: int = 200) -> str:
        """The start of the raw bytes as text, undecodable bytes replaced."""
        text = self.raw[:limit].decode("utf-8", "replace")
        return text + ("…" if len(self.raw) > limit or self.size else "")


def parse_line(
    raw: bytes, kind: LineKind = "events", *, max_bytes: int = MAX_LINE_BYTES
) -> Event | BadLine:
    """Parse one line (with or without its trailing newline) into an event or a `BadLine`.

    Unknown event types become `GenericEvent`; unknown fields are kept on any event.
    """
    try:
        if len(raw) > max_bytes:
            return BadLine(f"line exceeds {max_bytes} bytes", raw[:_RAW_KEEP], size=len(raw))
        adapter = _agent_adapter if kind == "events" else _control_adapter
        try:
            event = adapter.validate_json(raw)
        except ValidationError as exc:
            if not _unknown_type(exc, kind):
                return BadLine(_describe(raw, exc), raw)
            event = _generic_adapter.validate_json(raw)
        missing = [name for name in _REQUIRED_COMMON if name not in event.model_fields_set]
        if missing:
            return BadLine(f"missing field '{missing[0]}'", raw)
        if event.seq < 1:
            return BadLine("field 'seq' must be >= 1", raw)
        return event
    except ValidationError as exc:
        return BadLine(_describe(raw, exc), raw)
    except Exception as exc:  # parsing must never raise, whatever the bytes
        return BadLine(f"unreadable line: {type(exc).__name__}: {exc}", raw)


def dump_event(event: Event | dict[str, Any]) -> bytes:
    """Serialise an event (model or dict) as one line, newline included."""
    return encode_line(as_dict(event))


def _unknown_type(exc: ValidationError, kind: LineKind) -> bool:
    """True when the only problem is a `type` this version does not know (not a missing one)."""
    errors = exc.errors(include_url=False, include_input=False)
    if kind == "events":
        return len(errors) == 1 and errors[0]["type"] == "union_tag_invalid"
    return any(e["type"] == "literal_error" and tuple(e["loc"]) == ("type",) for e in errors)


def _describe(raw: bytes, exc: ValidationError) -> str:
    """One short sentence saying why a line is bad."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"invalid UTF-8 at byte {err.start}"
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        return f"invalid JSON: {getattr(err, 'msg', err)}"
    if not isinstance(value, dict):
        return f"not a JSON object but {type(value).__name__}"
    err = exc.errors(include_url=False, include_input=False)[0]
    loc = ".".join(str(part) for part in err["loc"] if not str(part).startswith(("function-",)))
    if err["type"] == "union_tag_not_found" or (err["type"] == "missing" and loc == "type"):
        return "missing field 'type'"
    if err["type"] == "missing":
        return f"missing field '{_field_name(err['loc'])}'"
    return f"field '{_field_name(err['loc'])}': {err['msg']}"


def _field_name(loc: tuple[Any, ...]) -> str:
    """The field path of a validation error, without the union tag pydantic puts first."""
    parts = [str(p) for p in loc]
    if len(parts) > 1 and parts[0] in _TAGS:
        parts = parts[1:]
    return ".".join(parts) or "?"


_TAGS = AGENT_EVENT_TYPES | CONTROL_TYPES
