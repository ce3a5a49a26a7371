"""Map one Claude Code hook payload to protocol events: pure functions, standard library only.

`read_payload` turns stdin bytes into a dict (or raises `PayloadError` with a one-line reason);
`map_payload` turns that dict into a `Step`: which supervisor session it belongs to, what kind of
step it is, the events to record and, for tool calls, the call the guard must judge.

Decisions documented in docs/claude-code.md:
- the session id is the sanitised `session_id`;
- a payload from inside a subagent (`agent_id`) belongs to a child session
  `<session>.sub-<agent_id>` whose `session_start` names its parent and agent type, so the
  subagent's calls neither mix with nor hide the main agent's loops;
- large texts are cut (head and tail kept) with the size and xxh3 hash of the whole; the full
  text stays available to the engine in memory (`Step.full_output`, `Step.call`).
"""

import json
from dataclasses import dataclass, field
from typing import Any

import xxhash

from supervisor.protocol import names
from supervisor.store.paths import sanitize_session_id

AGENT = "claude-code"
OUTPUT_HEAD_BYTES = 12 * 1024
OUTPUT_TAIL_BYTES = 4 * 1024
"""A tool output longer than head + tail is recorded as its first 12 KiB and last 4 KiB."""
TEXT_LIMIT_BYTES = 64 * 1024
"""Prompts, messages and single argument values longer than this are cut the same way."""
PAYLOAD_LIMIT_BYTES = 8 * 1024 * 1024
"""A payload larger than this is refused (and the call left alone) rather than parsed."""
HOOK_EVENT = "hook_event"
"""Event type (protocol extension) for a hook event this version does not map: recorded as-is."""

KNOWN_EVENTS = frozenset(
    {
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
        "Stop", "SubagentStop", "Notification", "SessionEnd",
    }
)
_COMMON_KEYS = frozenset(
    {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
     "agent_id", "agent_type"}
)


class PayloadError(ValueError):
    """The payload cannot be used; the message is one line, fit for stderr."""


@dataclass(slots=True)
class Step:
    """What one hook invocation means for the supervisor."""

    hook_event: str
    session_id: str
    events: list[dict[str, Any]]
    """Protocol events to record (without `v`, `seq`, `ts`)."""
    start: dict[str, Any]
    """The `session_start` event to record first if the session has no state yet."""
    parent_session_id: str | None = None
    subagent: dict[str, str] | None = None
    call: dict[str, Any] | None = None
    """PreToolUse: `{"call_id", "tool", "args"}` with the full arguments, for the guard."""
    full_output: str | None = None
    """PostToolUse(Failure): the whole output, for the engine's outcome fingerprint."""
    start_replaces_events: bool = False
    """SessionStart: when the handler writes `start` (a new or a resumed, ended session), the
    step's own events (a system message) are left out as redundant."""
    extra: dict[str, Any] = field(default_factory=dict)


def read_payload(data: bytes) -> dict[str, Any]:
    """Parse the hook's stdin; raise `PayloadError` when it is not one JSON object."""
    if len(data) > PAYLOAD_LIMIT_BYTES:
        raise PayloadError(f"payload of {len(data)} bytes exceeds {PAYLOAD_LIMIT_BYTES}")
    if not data.strip():
        raise PayloadError("empty payload on stdin")
    try:
        value = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadError(f"payload is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise PayloadError(f"payload is a JSON {type(value).__name__}, not an object")
    if not isinstance(value.get("session_id"), str) or not value["session_id"].strip():
        raise PayloadError("payload has no session_id")
    return value


def map_payload(payload: dict[str, Any]) -> Step:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = payload.get("hook_event_name")
    event = event if isinstance(event, str) and event else "unknown"
    parent = sanitize_session_id(payload["session_id"])
    agent_id = _text_or_none(payload.get("agent_id"))
    subagent = None
    session_id = parent
    if agent_id:
        subagent = {"agent_id": agent_id, "agent_type": _text_or_none(payload.get("agent_type"))
                    or "subagent"}
        session_id = sanitize_session_id(f"{parent}.sub-{agent_id}")
    step = Step(
        hook_event=event,
        session_id=session_id,
        events=[],
        start=_session_start(payload, parent if subagent else None, subagent),
        parent_session_id=parent if subagent else None,
        subagent=subagent,
    )
    _MAPPERS.get(event, _other)(payload, step)
    return step


def cut_text(text: str, head: int = OUTPUT_HEAD_BYTES, tail: int = OUTPUT_TAIL_BYTES) -> str:
    """`text` if it fits in head + tail bytes, else its head and tail around a marker."""
    data = text.encode("utf-8", "replace")
    if len(data) <= head + tail:
        return text
    omitted = len(data) - head - tail
    first = data[:head].decode("utf-8", "ignore")
    last = data[-tail:].decode("utf-8", "ignore") if tail else ""
    return f"{first}\n[… {omitted} bytes omitted by the supervisor …]\n{last}"


def output_hash(text: str) -> str:
    """The hash recorded as `output_hash`: xxh3-64 of the UTF-8 bytes, hex."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "replace"))


def output_text(response: Any) -> str:
    """The text a tool response stands for, as the model saw it (best effort per tool)."""
    if response is None:
        return ""
    if isinstance(response, str):
        return response
    if isinstance(response, dict):
        if "stdout" in response or "stderr" in response:
            parts = [str(response.get("stdout") or ""), str(response.get("stderr") or "")]
            return "\n".join(p for p in parts if p)
        file = response.get("file")
        if isinstance(file, dict) and isinstance(file.get("content"), str):
            return file["content"]
        content = response.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return _blocks_text(content)
    if isinstance(response, list):
        return _blocks_text(response)
    return json.dumps(response, ensure_ascii=False, sort_keys=True, default=str)


def _blocks_text(blocks: list[Any]) -> str:
    texts = []
    for block in blocks:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            texts.append(block["text"])
        else:
            texts.append(json.dumps(block, ensure_ascii=False, sort_keys=True, default=str))
    return "\n".join(texts)


def _session_start(
    payload: dict[str, Any], parent: str | None, subagent: dict[str, str] | None
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": names.SESSION_START,
        "agent": f"{AGENT}:{subagent['agent_type']}" if subagent else AGENT,
        "task": None,
        "cwd": _text_or_none(payload.get("cwd")),
        "pid": None,
        "policy": None,
        "heartbeat_s": None,
        "claude_session_id": payload["session_id"],
        "transcript_path": _text_or_none(payload.get("transcript_path")),
        "permission_mode": _text_or_none(payload.get("permission_mode")),
    }
    if subagent:
        event["parent_session"] = parent
        event["subagent"] = subagent
    else:
        source = _text_or_none(payload.get("source"))
        if source:
            event["source"] = source
    return event


def _session_start_event(payload: dict[str, Any], step: Step) -> None:
    """SessionStart: a `session_start` when the session is new (the handler decides); a
    resumed, cleared or compacted session gets a system message saying so."""
    source = _text_or_none(payload.get("source")) or "startup"
    step.extra["source"] = source
    step.start_replaces_events = True
    step.events.append(
        {"type": names.MESSAGE, "role": "system",
         "text": f"Claude Code session start ({source})", "hook_event": "SessionStart"}
    )


def _user_prompt(payload: dict[str, Any], step: Step) -> None:
    prompt = payload.get("prompt")
    text = prompt if isinstance(prompt, str) else _json(prompt)
    step.events.append({"type": names.MESSAGE, "role": "user", "text": _cut(text)})


def _pre_tool(payload: dict[str, Any], step: Step) -> None:
    tool = _text_or_none(payload.get("tool_name")) or "unknown"
    args = payload.get("tool_input")
    if not isinstance(args, dict):
        args = {} if args is None else {"input": args}
    call_id = _call_id(payload, tool, args)
    step.call = {"call_id": call_id, "tool": tool, "args": args}
    step.events.append(
        {"type": names.TOOL_CALL, "call_id": call_id, "tool": tool, "args": _cut_args(args)}
    )


def _post_tool(payload: dict[str, Any], step: Step) -> None:
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    tool = _text_or_none(payload.get("tool_name")) or "unknown"
    args = payload.get("tool_input")
    args = args if isinstance(args, dict) else ({} if args is None else {"input": args})
    response = payload.get("tool_response")
    error = None
    if failed:
        error = payload.get("error")
        error = error if isinstance(error, str) else (_json(error) if error else None)
        if payload.get("is_interrupt") is True:
            error = f"interrupted by the user{': ' + error if error else ''}"
        error = error or "the tool call failed"
        full = output_text(response) if response is not None else error
    else:
        full = output_text(response)
        if isinstance(response, dict) and (response.get("is_error") or response.get("interrupted")):
            failed = True
            error = "interrupted" if response.get("interrupted") else _first_line(full)
    step.full_output = full
    result: dict[str, Any] = {
        "type": names.TOOL_RESULT,
        "call_id": _call_id(payload, tool, args),
        "ok": not failed,
        "output": cut_text(full),
        "output_bytes": len(full.encode("utf-8", "replace")),
        "output_hash": output_hash(full),
        "error": _cut(error, 2048, 0) if error else None,
        "duration_ms": _number_or_none(payload.get("duration_ms")),
        "tool": tool,
    }
    if len(result["output"]) != len(full):
        result["truncated"] = True
    step.events.append(result)


def _stop(payload: dict[str, Any], step: Step) -> None:
    text = payload.get("last_assistant_message")
    step.extra["stop_hook_active"] = payload.get("stop_hook_active") is True
    if isinstance(text, str) and text:
        step.events.append({"type": names.MESSAGE, "role": "assistant", "text": _cut(text)})
    else:
        _other(payload, step)
    if step.hook_event == "SubagentStop" and step.subagent:
        step.events.append(
            {"type": names.SESSION_END, "status": "completed", "reason": "subagent finished"}
        )


def _notification(payload: dict[str, Any], step: Step) -> None:
    message = payload.get("message")
    event: dict[str, Any] = {
        "type": names.MESSAGE,
        "role": "system",
        "text": _cut(message if isinstance(message, str) else _json(message)),
        "hook_event": "Notification",
    }
    kind = _text_or_none(payload.get("notification_type"))
    if kind:
        event["notification_type"] = kind
    step.events.append(event)


def _session_end(payload: dict[str, Any], step: Step) -> None:
    reason = _text_or_none(payload.get("reason")) or "other"
    step.events.append(
        {"type": names.SESSION_END, "status": "completed",
         "reason": f"Claude Code session ended ({reason})"}
    )


def _other(payload: dict[str, Any], step: Step) -> None:
    """Anything else: recorded as it is (without the fields every payload carries)."""
    rest = {k: v for k, v in payload.items() if k not in _COMMON_KEYS}
    encoded = _json(rest)
    if len(encoded.encode("utf-8", "replace")) > TEXT_LIMIT_BYTES:
        rest = {"truncated": True, "bytes": len(encoded), "preview": _cut(encoded, 4096, 0)}
    step.events.append({"type": HOOK_EVENT, "event": step.hook_event, "payload": rest})


_MAPPERS = {
    "SessionStart": _session_start_event,
    "UserPromptSubmit": _user_prompt,
    "PreToolUse": _pre_tool,
    "PostToolUse": _post_tool,
    "PostToolUseFailure": _post_tool,
    "Stop": _stop,
    "SubagentStop": _stop,
    "Notification": _notification,
    "SessionEnd": _session_end,
}


def _call_id(payload: dict[str, Any], tool: str, args: dict[str, Any]) -> str:
    """`tool_use_id`, or (older releases) a stable id from the tool and its arguments, so the
    PreToolUse and PostToolUse of one call still pair up."""
    given = _text_or_none(payload.get("tool_use_id"))
    if given:
        return given
    return "call-" + xxhash.xxh3_64_hexdigest(_json({"tool": tool, "args": args}).encode())


def _cut_args(args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as recorded: long string values (a whole file for Write) cut, with size and
    hash, so one event line stays far below the protocol's line limit."""
    if len(_json(args).encode("utf-8", "replace")) <= TEXT_LIMIT_BYTES:
        return args
    budget = TEXT_LIMIT_BYTES // max(len(args), 1)
    out: dict[str, Any] = {}
    for key, value in args.items():
        text = value if isinstance(value, str) else _json(value)
        if len(text.encode("utf-8", "replace")) <= budget:
            out[key] = value
        else:
            out[key] = _cut(text, budget * 3 // 4, budget // 4)
            out[f"{key}_bytes"] = len(text.encode("utf-8", "replace"))
            out[f"{key}_hash"] = output_hash(text)
    return out


def _cut(
    text: str, head: int = TEXT_LIMIT_BYTES * 3 // 4, tail: int = TEXT_LIMIT_BYTES // 4
) -> str:
    return cut_text(text, head, tail)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:500]


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if value == value and abs(value) != float("inf") else None
