"""Events of one session -> finished spans and metric measures (pure: no SDK, no I/O).

`SessionTranslator.feed(event)` takes the session's events in log order and returns what that
event finished: spans whose end it is, and measures (metric increments) it causes. A span is
only ever returned whole, at its end, so an exporter that sends what `feed` returned and then
records how far it got can stop and restart anywhere: the restarted translator is fed the same
events from the start, rebuilds the same open spans with the same ids (`supervisor.otel.ids`),
and the exporter sends only what the events after its cursor finish.

The trace of a session (docs/otel.md has the table):

- `invoke_agent {agent}`: the session, from its first event to `session_end`;
- `execute_tool {tool}`: each tool call, from `tool_call` to its `tool_result` (or to the
  verdict that refused it, or to the session's end), child of the session span; what the
  supervisor said about the call (a detection, a verdict other than allow) is a span event on it;
- `supervisor.escalation`: the wait for a human, from `escalation` to the `decision_applied`
  that answered it (who, which decision, how long), child of the session span;
- rollbacks, operator commands and detections that fall between calls are span events of the
  session span.

Content is opt-in (`include_content`), decided by what a field *is*, not by what it looks like:
the arguments and result of a call, and every free text the engine or the agent composed (the
engine's messages and reasons quote the call: a looping `curl -H 'Authorization: …'` was in
`supervisor.escalation.reason`; a tool's error; a decision's outcome; a session's end reason)
are sent only with it. Without it, what is sent is made of ids, numbers, names from the
supervisor's own vocabularies (actions, detectors, kinds, statuses) and the tool's name; a
detection's signature, which can hold a path, is sent as a hash (`_hidden`), so repeats of one
loop still correlate.

Memory stays bounded whatever the session's length: open calls, span events and attribute text
have caps (`MAX_OPEN_CALLS`, `MAX_SPAN_EVENTS`, `MAX_TEXT`); what a cap drops is counted on the
span (`supervisor.dropped_events`), never silently.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from supervisor.otel.ids import span_id, trace_id
from supervisor.protocol.models import (
    DecisionApplied,
    Detection,
    Escalation,
    Event,
    GenericEvent,
    Rollback,
    SessionEnd,
    SessionStart,
    ToolCall,
    ToolResult,
    Usage,
    VerdictEvent,
)
from supervisor.protocol.names import MEMORY
from supervisor.safetext import clean, is_clean

SEMCONV_VERSION = "1.44.0"
"""The OpenTelemetry semantic conventions whose GenAI names are used (as shipped by
opentelemetry-semantic-conventions 0.66b2; the GenAI conventions are still "development")."""

# GenAI semantic conventions (a test checks them against the semconv package).
OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
CACHE_WRITE_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
ERROR_TYPE = "error.type"

MAX_OPEN_CALLS = 4096
"""Tool calls waiting for their result; beyond it the oldest is ended as `no result`."""
MAX_SPAN_EVENTS = 64
"""Span events kept on one span; more are counted in `supervisor.dropped_events`."""
MAX_TEXT = 1024
"""Characters of one text attribute (reasons, messages, outcomes)."""
MAX_CONTENT = 4096
"""Characters of a tool call's arguments or result, when content is exported."""

REFUSING = frozenset({"skip", "block", "stop"})
"""Verdict actions that refuse the call: its span ends there (a `pause` waits, then the call
either runs or is refused)."""


@dataclass(slots=True)
class SpanEvent:
    name: str
    ts: float
    attributes: dict[str, Any]


@dataclass(slots=True)
class SpanRecord:
    """One finished span, in the terms of the OpenTelemetry data model."""

    name: str
    trace_id: int
    span_id: int
    parent_id: int | None
    start_ts: float
    end_ts: float
    attributes: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    error: str | None = None
    """Set for a span whose status is ERROR: the status description."""
    kind: str = "internal"
    """`internal` or `client` (the SDK's SpanKind names)."""


@dataclass(frozen=True, slots=True)
class Measure:
    """One metric data point to record: an instrument (see `sdk.INSTRUMENTS`), a value, and
    its attributes."""

    instrument: str
    value: float
    attributes: tuple[tuple[str, str | int], ...] = ()


@dataclass(slots=True)
class Output:
    """What one event finished."""

    spans: list[SpanRecord] = field(default_factory=list)
    measures: list[Measure] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.spans or self.measures)


@dataclass(slots=True)
class _Open:
    """A span that has started and not ended."""

    name: str
    span_id: int
    start_ts: float
    attributes: dict[str, Any]
    events: list[SpanEvent] = field(default_factory=list)
    dropped: int = 0

    def add_event(self, event: SpanEvent) -> None:
        if len(self.events) < MAX_SPAN_EVENTS:
            self.events.append(event)
        else:
            self.dropped += 1


def _text(value: object, limit: int = MAX_TEXT) -> str:
    """Agent and engine text made safe for a backend's screen: no control sequences, bounded."""
    text = str(value)
    if len(text) <= limit and is_clean(text):  # the common case, without the regex work
        return text
    return clean(text, limit=limit)


def _hidden(value: object) -> str:
    """A stable stand-in for a text that may quote an argument: its hash, not its words."""
    return "sha256:" + hashlib.sha256(str(value).encode("utf-8", "replace")).hexdigest()[:16]


class SessionTranslator:
    """Translates one session's events (see the module docstring)."""

    def __init__(self, session_id: str, *, include_content: bool = False) -> None:
        self.session_id = session_id
        self.include_content = include_content
        self.trace: int | None = None
        self.session: _Open | None = None
        self.calls: dict[str, _Open] = {}
        """Open tool spans by call id, oldest first."""
        self.escalations: dict[str, _Open] = {}
        self.last_call: str | None = None
        self.level = 0
        """The engine's degradation level as the last verdict or decision left it: calls and
        cost while it is 1 or more are "spent inside a loop"."""
        self.ended = False
        self.tokens = [0, 0]
        """Input (cached included, as the conventions count it) and output tokens."""
        self.cached = [0, 0]
        """Input tokens read from and written to the provider's cache."""
        self.cost = 0.0

    # -- the one entry point ----------------------------------------------------------------

    def feed(self, event: Event) -> Output:
        """What `event` finished (see the module docstring). Events after `session_end` open
        nothing: the session's trace is closed."""
        out = Output()
        if self.ended:
            return out
        if self.session is None:
            self._start(event)
        handle = _HANDLERS.get(type(event))
        if handle is not None:
            handle(self, event, out)
        return out

    # -- the session span ---------------------------------------------------------------------

    def _start(self, event: Event) -> None:
        self.trace = trace_id(self.session_id, event.ts)
        agent = event.agent if isinstance(event, SessionStart) else "agent"
        attributes: dict[str, Any] = {
            OPERATION: "invoke_agent",
            AGENT_NAME: _text(agent, 200),
            CONVERSATION_ID: self.session_id,
            "supervisor.session.id": self.session_id,
        }
        if isinstance(event, SessionStart):
            if event.task:
                attributes["supervisor.task"] = _text(event.task)
            if event.cwd:
                attributes["supervisor.session.cwd"] = _text(event.cwd)
        self.session = _Open(f"invoke_agent {attributes[AGENT_NAME]}",
                             span_id(self.trace, "session", ""), event.ts, attributes)

    def _content(self, attributes: dict[str, Any], name: str, value: object,
                 limit: int = MAX_TEXT) -> None:
        """Set `name` to free text that may quote an argument or an output, only when content
        is exported (see the module docstring)."""
        if self.include_content and value:
            attributes[name] = _text(value, limit)

    def _session_event(self, name: str, ts: float, attributes: dict[str, Any]) -> None:
        assert self.session is not None
        self.session.add_event(SpanEvent(name, ts, attributes))

    def _end(self, ts: float, status: str, reason: str | None, out: Output) -> None:
        for call_id in list(self.calls):
            self._finish_call(call_id, ts, out, result="none: the session ended first")
        for escalation_id in list(self.escalations):
            self._finish_escalation(escalation_id, ts, out, {
                "supervisor.decision.action": "none",
                "supervisor.decision.outcome": "the session ended before an answer",
            })
        session = self.session
        assert session is not None
        session.attributes["supervisor.session.status"] = status
        self._content(session.attributes, "supervisor.session.reason", reason)
        session.attributes[INPUT_TOKENS], session.attributes[OUTPUT_TOKENS] = self.tokens
        if any(self.cached):
            session.attributes[CACHE_READ_TOKENS], session.attributes[CACHE_WRITE_TOKENS] = (
                self.cached)
        if self.cost:
            session.attributes["supervisor.cost_usd"] = round(self.cost, 6)
        error = f"session {status}" if status in ("failed", "aborted") else None
        out.spans.append(self._record(session, None, ts, error=error, kind="client"))
        out.measures.append(Measure("sessions_ended", 1, (("supervisor.session.status", status),)))
        self.ended = True
        self.session = None  # nothing more is kept for an ended session

    # -- tool spans -----------------------------------------------------------------------------

    def _tool_call(self, event: ToolCall, out: Output) -> None:
        assert self.trace is not None
        attributes: dict[str, Any] = {
            OPERATION: "execute_tool",
            TOOL_NAME: _text(event.tool, 200),
            TOOL_CALL_ID: _text(event.call_id, 200),
            "supervisor.seq": event.seq,
        }
        if self.include_content:
            attributes[TOOL_ARGUMENTS] = _text(
                json.dumps(event.args, ensure_ascii=False, default=str), MAX_CONTENT)
        if self.level:
            attributes["supervisor.level"] = self.level
        span = _Open(f"execute_tool {attributes[TOOL_NAME]}",
                     span_id(self.trace, "tool", str(event.seq)), event.ts, attributes)
        if event.call_id in self.calls:  # the same id again: the first one never got a result
            self._finish_call(event.call_id, event.ts, out, result="none: its id was reused")
        self.calls[event.call_id] = span
        self.last_call = event.call_id
        tool = attributes[TOOL_NAME]
        if event.refused_by:
            span.attributes["supervisor.refused_by"] = _text(event.refused_by, 100)
            self._finish_call(event.call_id, event.ts, out,
                              refused=f"refused by {event.refused_by}")
        elif len(self.calls) > MAX_OPEN_CALLS:
            oldest = next(iter(self.calls))
            self._finish_call(oldest, event.ts, out, result="none: too many calls open")
        out.measures.append(Measure("tool_calls", 1, ((TOOL_NAME, tool),)))
        if self.level:
            out.measures.append(Measure("loop_tool_calls", 1, ((TOOL_NAME, tool),)))

    def _tool_result(self, event: ToolResult, out: Output) -> None:
        span = self.calls.get(event.call_id)
        if span is None:
            return
        if event.duration_ms is not None:
            span.attributes["supervisor.tool.duration_ms"] = float(event.duration_ms)
        if self.include_content:
            span.attributes[TOOL_RESULT] = _text(event.output, MAX_CONTENT)
        error = None if event.ok else "the tool reported a failure"
        if error and self.include_content and event.error:
            error = _text(event.error, 200)
        if error:
            span.attributes[ERROR_TYPE] = "tool_error"
        self._finish_call(event.call_id, event.ts, out, error=error)
        outcome = "ok" if event.ok else "error"
        out.measures.append(Measure("tool_results", 1, (
            (TOOL_NAME, span.attributes[TOOL_NAME]), ("supervisor.outcome", outcome))))

    def _finish_call(self, call_id: str, ts: float, out: Output, *, error: str | None = None,
                     refused: str | None = None, result: str | None = None) -> None:
        span = self.calls.pop(call_id)
        if refused:
            span.attributes[ERROR_TYPE] = "supervisor.refused"
            error = refused
        if result:
            span.attributes["supervisor.tool.result"] = result
        out.spans.append(self._record(span, self._session_id(), ts, error=error))
        if self.last_call == call_id:
            self.last_call = None

    def _session_id(self) -> int:
        assert self.session is not None
        return self.session.span_id

    # -- what the supervisor said ---------------------------------------------------------------

    def _verdict(self, event: VerdictEvent, out: Output) -> None:
        self.level = event.level
        if event.action == "allow":
            return
        attributes: dict[str, Any] = {
            "supervisor.verdict.action": event.action,
            "supervisor.level": event.level,
        }
        self._content(attributes, "supervisor.verdict.reason", event.reason, 200)
        self._content(attributes, "supervisor.verdict.message", event.message)
        span = self.calls.get(event.call_id)
        if span is None:
            self._session_event("supervisor.verdict", event.ts, attributes)
        else:
            span.attributes["supervisor.verdict.action"] = event.action
            span.add_event(SpanEvent("supervisor.verdict", event.ts, attributes))
        out.measures.append(Measure("verdicts", 1, (
            ("supervisor.verdict.action", event.action), ("supervisor.level", event.level))))
        if event.action in REFUSING and span is not None:
            self._finish_call(event.call_id, event.ts, out,
                              refused=f"refused by the supervisor ({event.action})")

    def _detection(self, event: Detection, out: Output) -> None:
        attributes: dict[str, Any] = {
            "supervisor.detector": _text(event.detector, 100),
            "supervisor.level": event.level,
            "supervisor.signature": _text(event.signature, 200) if self.include_content
            else _hidden(event.signature),
            "supervisor.evidence": [int(seq) for seq in event.evidence[:64]],
        }
        self._content(attributes, "supervisor.message", event.message)
        confidence = (event.model_extra or {}).get("confidence")
        if isinstance(confidence, str | int | float) and not isinstance(confidence, bool):
            attributes["supervisor.confidence"] = confidence
        span = self.calls.get(self.last_call) if self.last_call else None
        if span is None:
            self._session_event("supervisor.detection", event.ts, attributes)
        else:
            span.add_event(SpanEvent("supervisor.detection", event.ts, attributes))
        out.measures.append(Measure("loops", 1, (
            ("supervisor.detector", attributes["supervisor.detector"]),
            ("supervisor.level", event.level))))

    def _escalation(self, event: Escalation, out: Output) -> None:
        assert self.trace is not None
        attributes: dict[str, Any] = {
            "supervisor.escalation.id": _text(event.escalation_id, 200),
            "supervisor.level": event.level,
            "supervisor.escalation.kind": event.kind or "detection",
            "supervisor.escalation.fallback": event.fallback,
            "supervisor.evidence": [int(seq) for seq in event.evidence[:64]],
        }
        self._content(attributes, "supervisor.escalation.reason", event.reason)
        if event.deadline_ts is not None:
            attributes["supervisor.escalation.deadline_s"] = round(event.deadline_ts - event.ts, 3)
        if event.escalation_id in self.escalations:  # raised again: the first one is over
            self._finish_escalation(event.escalation_id, event.ts, out,
                                    {"supervisor.decision.action": "none"})
        self.escalations[event.escalation_id] = _Open(
            "supervisor.escalation", span_id(self.trace, "escalation", str(event.seq)),
            event.ts, attributes)
        out.measures.append(Measure("escalations", 1, (
            ("supervisor.escalation.kind", attributes["supervisor.escalation.kind"]),)))

    def _decision(self, event: DecisionApplied, out: Output) -> None:
        if event.level is not None:
            self.level = event.level
        operator = (event.model_extra or {}).get("operator")
        by = "deadline" if event.decision_id == "fallback" else "operator"
        attributes: dict[str, Any] = {
            "supervisor.decision.action": _text(event.action, 100),
            "supervisor.decision.id": _text(event.decision_id, 200),
            "supervisor.decision.by": by,
        }
        self._content(attributes, "supervisor.decision.outcome", event.outcome)
        if isinstance(operator, str) and operator:
            attributes["supervisor.decision.operator"] = _text(operator, 200)
        escalation = event.escalation_id
        if escalation is None or escalation not in self.escalations:
            self._session_event("supervisor.decision", event.ts, attributes)
            return
        waited = self._finish_escalation(escalation, event.ts, out, attributes)
        out.measures.append(Measure("escalation_wait", waited, (
            ("supervisor.decision.action", attributes["supervisor.decision.action"]),
            ("supervisor.decision.by", by))))

    def _finish_escalation(self, escalation_id: str, ts: float, out: Output,
                           attributes: dict[str, Any]) -> float:
        span = self.escalations.pop(escalation_id)
        waited = max(ts - span.start_ts, 0.0)
        span.attributes.update(attributes)
        span.attributes["supervisor.escalation.wait_s"] = round(waited, 3)
        out.spans.append(self._record(span, self._session_id(), ts))
        return waited

    def _extension(self, event: GenericEvent, out: Output) -> None:
        """Extension events: the failure memory's `memory` (docs/memory.md), as a span event
        on the call it was about (the session span for the pitfalls at the start). Its
        message quotes the agent's calls and errors: sent only with content."""
        if event.type != MEMORY:
            return
        extra = event.model_extra or {}
        kind = _text(extra.get("kind"), 40)
        entries = extra.get("entries")
        attributes: dict[str, Any] = {
            "supervisor.memory.kind": kind,
            "supervisor.memory.entries": [_text(e, 40) for e in entries[:16]]
            if isinstance(entries, list) else [],
        }
        if self.include_content and extra.get("message"):
            attributes["supervisor.memory.message"] = _text(extra.get("message"))
        call_id = extra.get("call_id")
        span = self.calls.get(call_id) if isinstance(call_id, str) else None
        if span is None:
            self._session_event("supervisor.memory", event.ts, attributes)
        else:
            span.add_event(SpanEvent("supervisor.memory", event.ts, attributes))
        out.measures.append(Measure("memory", 1, (("supervisor.memory.kind", kind),)))

    def _rollback(self, event: Rollback, out: Output) -> None:
        self._session_event("supervisor.rollback", event.ts, {
            "supervisor.checkpoint.id": _text(event.checkpoint_id),
            "supervisor.rollback.restored_files": event.restored_files,
            "supervisor.rollback.safety_checkpoint.id": _text(event.safety_checkpoint_id),
        })
        out.measures.append(Measure("rollbacks", 1))

    def _session_end(self, event: SessionEnd, out: Output) -> None:
        self._end(event.ts, event.status, event.reason, out)

    def _usage(self, event: Usage, out: Output) -> None:
        read, written = event.cache_read_tokens or 0, event.cache_write_tokens or 0
        self.tokens[0] += event.input_tokens + read + written
        self.tokens[1] += event.output_tokens
        self.cached[0] += read
        self.cached[1] += written
        cost = float(event.cost_usd or 0.0)
        self.cost += cost
        if cost:
            out.measures.append(Measure("cost", cost))
            if self.level:
                out.measures.append(Measure("loop_cost", cost))

    # -- records --------------------------------------------------------------------------------

    def _record(self, span: _Open, parent: int | None, end_ts: float, *,
                error: str | None = None, kind: str = "internal") -> SpanRecord:
        assert self.trace is not None
        if span.dropped:
            span.attributes["supervisor.dropped_events"] = span.dropped
        return SpanRecord(span.name, self.trace, span.span_id, parent, span.start_ts,
                          max(end_ts, span.start_ts), span.attributes, span.events, error, kind)


_HANDLERS: dict[type[Event], Callable[[SessionTranslator, Any, Output], None]] = {
    # event type -> what it does to the trace (one dict look-up per event: this runs for every
    # line of every session)
    ToolCall: SessionTranslator._tool_call,
    ToolResult: SessionTranslator._tool_result,
    VerdictEvent: SessionTranslator._verdict,
    Detection: SessionTranslator._detection,
    Escalation: SessionTranslator._escalation,
    DecisionApplied: SessionTranslator._decision,
    Rollback: SessionTranslator._rollback,
    Usage: SessionTranslator._usage,
    SessionEnd: SessionTranslator._session_end,
    GenericEvent: SessionTranslator._extension,
}
