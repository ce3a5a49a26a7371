"""What one hook call means for the supervisor, whatever the agent: the `HookStep` a target reads a
payload into, and the payload helpers every target shares (parse, cut long texts, name
sessions).

A target's reader (`Target.read`) turns the agent's JSON payload into a `HookStep`: which supervisor
session it belongs to, what kind of step it is and what to record; the runtime hands that to the
guard, which writes the events, and asks the target to phrase the answer. A step is a value: a
reader or the runtime that knows more (the kind of event, the run a resumed session continues
in) makes a new one with `dataclasses.replace`, so a step seen once never changes under another.
"""

import json
import re
from dataclasses import dataclass, fields
from typing import Any, NotRequired, TypedDict

import xxhash

from supervisor.engine.fingerprint import output_hash
from supervisor.protocol.bounded import escape_text, loads, shrink, too_deep, writable
from supervisor.protocol.names import MAX_JSON_DEPTH, MAX_NUMBER
from supervisor.store.paths import sanitize_session_id

TEXT_LIMIT_BYTES = 64 * 1024
"""Prompts, messages and argument values longer than this are recorded cut (head and tail)."""
PAYLOAD_LIMIT_BYTES = 8 * 1024 * 1024
"""A payload larger than this is not parsed: the call is recorded from what its bytes show
(`rescue`), so it is still supervised (hard limits, repeats)."""
PAYLOAD_DEPTH = 400
"""Payloads nested up to this deep are parsed (and their deepest parts kept as text); deeper
ones are rescued like unparsable ones."""
CUT_KEYS = 64
"""Arguments with more keys than this are cut as a whole (`cut_args`)."""
HOOK_EVENT = "hook_event"
"""Event type (protocol extension) for a hook event a target does not map: recorded as-is."""

KINDS = ("start", "prompt", "call", "result", "batch", "stop", "notification", "end", "display",
         "other")


class PayloadError(ValueError):
    """The payload cannot be used; the message is one line, fit for stderr."""


class Call(TypedDict):
    """A tool call about to run: recorded as `tool_call`, checked by the engine."""

    call_id: str
    tool: str
    args: dict[str, Any]


class Result(TypedDict):
    """A tool's outcome: the whole output (the guard records it cut, with size and hash)."""

    call_id: str
    tool: str
    output: str
    ok: bool
    error: str | None
    duration_ms: float | None


class BatchCall(TypedDict):
    """One call of a batch the agent reports after the fact (Claude Code's PostToolBatch)."""

    call: Call
    result: Result
    refused: NotRequired[bool]
    """The agent's own permission check refused the call after PreToolUse let it through: no
    other hook reports its result, so the batch's is recorded for it."""


class Display(TypedDict):
    """One flush of the assistant's text as it streams (Claude Code's MessageDisplay)."""

    message_id: str
    delta: str
    final: bool


class HookMessage(TypedDict):
    role: str
    """`user`, `assistant` or `system` (a prompt no person wrote, e.g. a task notification)."""
    text: str
    extra: NotRequired[dict[str, Any]]
    """More fields for the `message` event (e.g. the agent's turn id and model)."""


class End(TypedDict):
    status: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class HookStep:
    """What one hook invocation means for the supervisor.

    `kind` is one of `KINDS`; the field of that kind says what to record.
    """

    kind: str
    hook_event: str
    session_id: str
    start: dict[str, Any]
    """The `session_start` event to record first if the session has no state yet."""
    parent_session_id: str | None = None
    subagent: dict[str, str] | None = None
    call: Call | None = None
    result: Result | None = None
    batch: tuple[BatchCall, ...] = ()
    message: HookMessage | None = None
    """prompt, stop, notification, start: a `message` to record."""
    end: End | None = None
    """end, and stop of a subagent: the `session_end` to record."""
    record: dict[str, Any] | None = None
    """other: the event to record as it is."""
    transcript: str | None = None
    """The agent's own transcript of this session (JSONL), where the runtime reads the
    assistant's text between tool calls (hooks are not given it); None: not available."""
    display: Display | None = None
    """display: a piece of the assistant's text; the runtime keeps the pieces of a message
    until its final one and records the whole as an assistant message."""
    no_result: bool = False
    """call: the agent reports no outcome of this call (Claude Code's PreSkillShellCommand, a
    skill's shell command run outside any tool call): when it runs, its result is recorded at
    once as unknown. Only a target whose `pre_tool` answer takes `event=` sets it (the answer
    names the event)."""
    pair: str | None = None
    """call, result: the agent gives no call id (Gemini CLI), so the runtime pairs a call and
    its result by order under this key (`stable_call_id` of the tool and its arguments) and
    sets `call_id`."""


_STEP_FIELDS = tuple(f.name for f in fields(HookStep))


def replace(step: HookStep, **changes: Any) -> HookStep:
    """`dataclasses.replace` for a `HookStep`: a payload's mapping and the runtime make a few
    copies of each step, and the generic one looks the fields up and checks them again at
    every call (about 10 us a copy, a tenth of a step's mapping)."""
    copy = object.__new__(HookStep)
    for name in _STEP_FIELDS:
        object.__setattr__(copy, name, changes.pop(name) if name in changes
                           else getattr(step, name))
    if changes:
        raise TypeError(f"HookStep has no field {next(iter(changes))!r}")
    return copy


def read_payload(data: bytes) -> dict[str, Any]:
    """Parse the hook's stdin into a payload every later step can use: lone surrogates (an
    undecodable file name) escaped, `NaN` as text, anything nested deeper than a protocol line
    may hold turned into text (`protocol.bounded`).

    A payload that cannot be parsed (too big, not JSON, nested too deeply to parse) is not
    given up on when its session can still be found: it becomes a `rescued` payload with the
    fields that can be read from its bytes (session, hook event, tool, call id, cwd) and
    arguments that say why and how big it was, so the call is still recorded and the hard
    limits still apply. `PayloadError` only when there is no session to record it in."""
    if not data.strip():
        raise PayloadError("empty payload on stdin")
    if len(data) > PAYLOAD_LIMIT_BYTES:
        return rescue(data, f"payload of {len(data)} bytes exceeds {PAYLOAD_LIMIT_BYTES}")
    try:
        try:  # (a lone surrogate comes only from bytes not UTF-8 or a `\uD800`-`\uDFFF`)
            text = data.decode("utf-8")
            checked = b"\\ud" not in data and b"\\uD" not in data
        except UnicodeDecodeError:
            # bytes that are not UTF-8 (a raw file name) are kept as escapes, not refused
            text, checked = data.decode("utf-8", "surrogateescape"), False
        value = loads(text, max_depth=PAYLOAD_DEPTH, finite=True)
    except ValueError as exc:  # not JSON, or nested past what can be parsed
        return rescue(data, f"payload is not valid JSON ({exc})")
    if not isinstance(value, dict):
        raise PayloadError(f"payload is a JSON {type(value).__name__}, not an object")
    if too_deep(data, MAX_JSON_DEPTH - 8):  # the event adds a few levels around the arguments
        value = shrink(value, 1 << 62, max_depth=MAX_JSON_DEPTH - 8)
    if not checked:  # what `writable` mends can be in it: walked (the numbers are already)
        value = writable(value)
    if "session_id" not in value and isinstance(value.get("sessionId"), str):
        value["session_id"] = value["sessionId"]  # GitHub Copilot CLI's camelCase payloads
    if not isinstance(value.get("session_id"), str) or not value["session_id"].strip():
        raise PayloadError("payload has no session_id")
    return value


_FIELD = re.compile(rb'"(session_id|sessionId|hook_event_name|tool_name|toolName|tool_use_id|'
                    rb'cwd|transcript_path|agent_id|agent_type)"\s*:\s*"((?:[^"\\]|\\.){0,4096})"')


def rescue(data: bytes, reason: str) -> dict[str, Any]:
    """The payload as far as it can be read from its bytes (see `read_payload`); raises
    `PayloadError(reason)` when no `session_id` is found in them."""
    found: dict[str, Any] = {}
    for match in _FIELD.finditer(data):
        name = match.group(1).decode()
        if name not in found:
            raw = match.group(2).decode("utf-8", "surrogateescape")
            try:
                found[name] = escape_text(json.loads(f'"{raw}"'))
            except ValueError:
                found[name] = escape_text(raw)
    found.setdefault("session_id", found.pop("sessionId", None))
    if "toolName" in found:
        found.setdefault("tool_name", found.pop("toolName"))
    if not str(found.get("session_id") or "").strip():
        raise PayloadError(reason)
    found["tool_input"] = {"unreadable_payload": reason, "payload_bytes": len(data),
                           "payload_hash": xxhash.xxh3_64_hexdigest(data)}
    found["supervisor_rescued"] = reason
    return found


def session_ids(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(the supervisor session, its parent or None): a payload from inside a subagent
    (`agent_id`) belongs to a child session of the agent's session."""
    parent = sanitize_session_id(payload["session_id"])
    agent_id = text_or_none(payload.get("agent_id"))
    if agent_id:
        return child_session_id(parent, agent_id), parent
    return parent, None


def tool_args(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(`tool_name`, `tool_input` as an object) of a tool payload, whatever it holds."""
    tool = text_or_none(payload.get("tool_name")) or "unknown"
    args = payload.get("tool_input")
    return tool, args if isinstance(args, dict) else ({} if args is None else {"input": args})


def as_start(step: HookStep, agent_label: str, source: Any) -> HookStep:
    """A session-start event: `start`, with a system message naming how it started."""
    how = text_or_none(source) or "startup"
    return replace(step, kind="start",
                   message={"role": "system", "text": f"{agent_label} session start ({how})"})


def as_prompt(step: HookStep, prompt: Any) -> HookStep:
    """A person's prompt."""
    return replace(step, kind="prompt", message={
        "role": "user", "text": cut_text(prompt if isinstance(prompt, str) else to_json(prompt))})


def as_notification(step: HookStep, message: Any, kind: Any) -> HookStep:
    """A notification: a system message, prefixed with its kind."""
    text = message if isinstance(message, str) else to_json(message)
    kind = text_or_none(kind)
    text = cut_text(f"[{kind}] {text}" if kind else text)
    return replace(step, kind="notification", message={"role": "system", "text": text})


def as_said(step: HookStep, text: Any) -> HookStep:
    """The assistant's text an in-process plugin sent (`message.text`: OpenCode, Kilo, Cline,
    Pi): recorded as its message, nothing answered."""
    said = text.strip() if isinstance(text, str) else ""
    return replace(step, kind="notification",
                   message={"role": "assistant", "text": said} if said else None)


def as_end(step: HookStep, agent_label: str, reason: Any) -> HookStep:
    """The agent's session ended."""
    return replace(step, kind="end", end={
        "status": "completed",
        "reason": f"{agent_label} session ended ({text_or_none(reason) or 'other'})"})


def as_stop(step: HookStep, last_message: Any) -> HookStep:
    """The agent's turn stopped (Stop, SubagentStop): its last text as an assistant message; a
    subagent's stop ends the subagent's child session."""
    message = step.message
    if isinstance(last_message, str) and last_message:
        message = {"role": "assistant", "text": cut_text(last_message)}
    end = step.end
    if step.hook_event == "SubagentStop" and step.subagent:
        end = {"status": "completed", "reason": "subagent finished"}
    return replace(step, kind="stop", message=message, end=end)


def result_of(call_id: str, tool: str, output: str, error: str | None) -> Result:
    """A call's outcome as recorded when the agent gives only an error text (or none): failed
    exactly when there is an error, which is kept to its first 2 KiB."""
    return {"call_id": call_id, "tool": tool, "output": output,
            "ok": error is None, "error": cut_text(error, 2048, 0) if error else None,
            "duration_ms": None}


def child_session_id(parent: str, agent_id: str) -> str:
    """The session of a subagent: `<parent>.sub-<agent_id>`, always distinct from the parent
    (a long parent id is shortened first, so the 128-character limit cannot cut the suffix)."""
    return sanitize_session_id(f"{parent[:80]}.sub-{agent_id[:40]}")


def cut_text(
    text: str, head: int = TEXT_LIMIT_BYTES * 3 // 4, tail: int = TEXT_LIMIT_BYTES // 4
) -> str:
    """`text` if it fits in head + tail bytes, else its head and tail around a marker."""
    data = text.encode("utf-8", "replace")
    if len(data) <= head + tail:
        return text
    omitted = len(data) - head - tail
    first = data[:head].decode("utf-8", "ignore")
    last = data[-tail:].decode("utf-8", "ignore") if tail else ""
    return f"{first}\n[… {omitted} bytes omitted by the supervisor …]\n{last}"


def cut_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as recorded: long string values (a whole file for Write) cut, with size and
    hash, so one event line stays far below the protocol's line limit. Arguments with more keys
    than `CUT_KEYS` are cut as a whole (`protocol.bounded.shrink`): a size and a hash per key
    would inflate 150,000 small keys to megabytes."""
    if len(to_json(args).encode("utf-8", "replace")) <= TEXT_LIMIT_BYTES:
        return args
    if len(args) > CUT_KEYS:
        cut = shrink(args, TEXT_LIMIT_BYTES)
        return cut if isinstance(cut, dict) else {"args": cut}
    budget = TEXT_LIMIT_BYTES // max(len(args), 1)
    out: dict[str, Any] = {}
    for key, value in args.items():
        text = value if isinstance(value, str) else to_json(value)
        if len(text.encode("utf-8", "replace")) <= budget:
            out[key] = value
        else:
            out[key] = cut_text(text, budget * 3 // 4, budget // 4)
            out[f"{key}_bytes"] = len(text.encode("utf-8", "replace"))
            out[f"{key}_hash"] = output_hash(text)
    return out



def stable_call_id(tool: str, args: dict[str, Any]) -> str:
    """An id for a call the agent gave none: stable from the tool and its arguments, so the
    call and its result still pair up."""
    return "call-" + xxhash.xxh3_64_hexdigest(to_json({"tool": tool, "args": args}).encode())


def as_unnamed_call(step: HookStep, tool: str, args: dict[str, Any]) -> HookStep:
    """A tool call the agent gave no id (Gemini CLI, Copilot): named by `stable_call_id`, so
    its result pairs up with it."""
    pair = stable_call_id(tool, args)
    return replace(step, kind="call", pair=pair,
                   call={"call_id": pair, "tool": tool, "args": cut_args(args)})


def as_unnamed_result(step: HookStep, tool: str, args: dict[str, Any], output: str,
                      error: str | None) -> HookStep:
    """The result of a call `as_unnamed_call` recorded (the same tool and arguments)."""
    pair = stable_call_id(tool, args)
    return replace(step, kind="result", pair=pair,
                   result=result_of(pair, tool, output, error))


def other_event(payload: dict[str, Any], step: HookStep, common: frozenset[str]) -> HookStep:
    """`step` recording a hook event nobody maps as it is (without the fields every payload
    of this agent carries, `common`); over `TEXT_LIMIT_BYTES`, a preview."""
    rest = {k: v for k, v in payload.items() if k not in common}
    encoded = to_json(rest)
    if len(encoded.encode("utf-8", "replace")) > TEXT_LIMIT_BYTES:
        rest = {"truncated": True, "bytes": len(encoded), "preview": cut_text(encoded, 4096, 0)}
    return replace(step, kind="other",
                   record={"type": HOOK_EVENT, "event": step.hook_event, "payload": rest})


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def first_line(text: str, limit: int = 500) -> str:
    return (text.strip().splitlines() or [""])[0][:limit]


FIELD_LIMIT_CHARS = 4096
"""The longest name, id or path a payload field is kept at (`text_or_none`): a longer one is
no real file path (PATH_MAX) nor tool name, and each is repeated in events and the state."""


def text_or_none(value: Any) -> str | None:
    """A payload's short text field (a tool name, a call id, a path), or None when it is no
    text. One longer than `FIELD_LIMIT_CHARS` keeps its head and a hash of the whole, so two
    different ids stay different and the event line stays small."""
    if not isinstance(value, str) or not value:
        return None
    if len(value) <= FIELD_LIMIT_CHARS:
        return value
    digest = xxhash.xxh3_64_hexdigest(value.encode("utf-8", "surrogateescape"))
    return f"{value[:FIELD_LIMIT_CHARS - 64]}…[{len(value)} chars, xxh3 {digest}]"


def number_or_none(value: Any) -> float | None:
    """A number a protocol line can hold (finite, within `MAX_NUMBER`), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value == value and abs(value) <= MAX_NUMBER else None
