"""Map one Claude Code hook payload to protocol events: pure functions (stdlib, xxhash and the

`read_payload` turns stdin bytes into a dict (or raises `PayloadError` with a one-line reason);
`map_payload` turns that dict into a `Step`: which supervisor session it belongs to, what kind of
step it is and what to record (the handler hands it to the guard, which writes the events).

Decisions documented in docs/claude-code.md:
- the session id is the sanitised `session_id`;
- a payload from inside a subagent (`agent_id`) belongs to a child session
  `<session>.sub-<agent_id>` whose `session_start` names its parent and agent type, so the
  subagent's calls neither mix with nor hide the main agent's loops;
- long texts (prompts, messages, argument values such as a whole file for Write) are cut, head
  and tail kept, with the size and xxh3 hash of the whole; a tool's output is passed whole to
  the guard, which records it cut with the size and hash of the whole.
"""

import json
import re
from dataclasses import dataclass
from typing import Any

import xxhash

from supervisor.engine.fingerprint import output_hash
from supervisor.store.paths import sanitize_session_id

AGENT = "claude-code"
TEXT_LIMIT_BYTES = 64 * 1024
"""Prompts, messages and argument values longer than this are recorded cut (head and tail)."""
PAYLOAD_LIMIT_BYTES = 8 * 1024 * 1024
"""A payload larger than this is refused (and the call left alone) rather than parsed."""
HOOK_EVENT = "hook_event"
"""Event type (protocol extension) for a hook event this version does not map: recorded as-is."""

_COMMON_KEYS = frozenset(
    {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
     "agent_id", "agent_type"}
)


class PayloadError(ValueError):
    """The payload cannot be used; the message is one line, fit for stderr."""


@dataclass(slots=True)
class Step:
    """What one hook invocation means for the supervisor.

    `kind` is one of `start`, `prompt`, `call`, `result`, `stop`, `notification`, `end`,
    `other`; the field of that kind says what to record (the handler passes it to the guard).
    """

    kind: str
    hook_event: str
    session_id: str
    start: dict[str, Any]
    """The `session_start` event to record first if the session has no state yet."""
    parent_session_id: str | None = None
    subagent: dict[str, str] | None = None
    call: dict[str, Any] | None = None
    """call: `{"call_id", "tool", "args"}`, long argument values cut (with size and hash)."""
    result: dict[str, Any] | None = None
    """result: `{"call_id", "tool", "output", "ok", "error", "duration_ms"}`, the whole output
    (the guard records it cut, with the size and hash of the whole)."""
    message: dict[str, Any] | None = None
    """prompt, stop, notification, start: `{"role", "text"}` to record as a `message`."""
    end: dict[str, Any] | None = None
    """end, and stop of a subagent: `{"status", "reason"}` of the `session_end`."""
    record: dict[str, Any] | None = None
    """other: the event to record as it is."""


def read_payload(data: bytes) -> dict[str, Any]:
    """Parse the hook's stdin; raise `PayloadError` when it is not one JSON object."""
    if len(data) > PAYLOAD_LIMIT_BYTES:
        raise PayloadError(f"payload of {len(data)} bytes exceeds {PAYLOAD_LIMIT_BYTES}")
    if not data.strip():
        raise PayloadError("empty payload on stdin")
    try:
        value = json.loads(data, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise PayloadError(f"payload is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise PayloadError(f"payload is a JSON {type(value).__name__}, not an object")
    if not isinstance(value.get("session_id"), str) or not value["session_id"].strip():
        raise PayloadError("payload has no session_id")
    return value


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


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
        session_id = child_session_id(parent, agent_id)
    step = Step(
        kind="other",
        hook_event=event,
        session_id=session_id,
        start=_session_start(payload, parent if subagent else None, subagent),
        parent_session_id=parent if subagent else None,
        subagent=subagent,
    )
    _MAPPERS.get(event, _other)(payload, step)
    return step


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
        response = {k: v for k, v in response.items() if not _NOISE_KEY.search(k)}
    if isinstance(response, list):
        return _blocks_text(response)
    return json.dumps(response, ensure_ascii=False, sort_keys=True, default=str)


_NOISE_KEY = re.compile(r"(?i)duration|^originalFile$")
"""Keys left out of a structured response's text: timings differ on every run (an unchanged
outcome would look new) and `originalFile` repeats a whole file Edit already had."""


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
        "type": "session_start",
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
    """SessionStart: `session_start` for a new session (the handler decides); a resumed,
    cleared or compacted session that already runs gets a system message saying so."""
    source = _text_or_none(payload.get("source")) or "startup"
    step.kind = "start"
    step.message = {"role": "system", "text": f"Claude Code session start ({source})"}


def _user_prompt(payload: dict[str, Any], step: Step) -> None:
    prompt = payload.get("prompt")
    text = prompt if isinstance(prompt, str) else _json(prompt)
    step.kind = "prompt"
    step.message = {"role": "user", "text": cut_text(text)}


def _pre_tool(payload: dict[str, Any], step: Step) -> None:
    tool = _text_or_none(payload.get("tool_name")) or "unknown"
    args = _args(payload)
    step.kind = "call"
    step.call = {"call_id": _call_id(payload, tool, args), "tool": tool, "args": _cut_args(args)}


def _post_tool(payload: dict[str, Any], step: Step) -> None:
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    tool = _text_or_none(payload.get("tool_name")) or "unknown"
    response = payload.get("tool_response")
    error = None
    if failed:
        error = payload.get("error")
        error = error if isinstance(error, str) else (_json(error) if error else None)
        if payload.get("is_interrupt") is True:
            error = f"interrupted by the user{': ' + error if error else ''}"
        error = error or "the tool call failed"
        output = output_text(response) if response is not None else error
    else:
        output = output_text(response)
        if isinstance(response, dict) and (response.get("is_error") or response.get("interrupted")):
            failed = True
            error = "interrupted" if response.get("interrupted") else _first_line(output)
    step.kind = "result"
    step.result = {
        "call_id": _call_id(payload, tool, _args(payload)),
        "tool": tool,
        "output": output,
        "ok": not failed,
        "error": cut_text(error, 2048, 0) if error else None,
        "duration_ms": _number_or_none(payload.get("duration_ms")),
    }


def _stop(payload: dict[str, Any], step: Step) -> None:
    step.kind = "stop"
    text = payload.get("last_assistant_message")
    if isinstance(text, str) and text:
        step.message = {"role": "assistant", "text": cut_text(text)}
    if step.hook_event == "SubagentStop" and step.subagent:
        step.end = {"status": "completed", "reason": "subagent finished"}


def _notification(payload: dict[str, Any], step: Step) -> None:
    message = payload.get("message")
    text = message if isinstance(message, str) else _json(message)
    kind = _text_or_none(payload.get("notification_type"))
    step.kind = "notification"
    step.message = {"role": "system", "text": cut_text(f"[{kind}] {text}" if kind else text)}


def _session_end(payload: dict[str, Any], step: Step) -> None:
    reason = _text_or_none(payload.get("reason")) or "other"
    step.kind = "end"
    step.end = {"status": "completed", "reason": f"Claude Code session ended ({reason})"}


def _other(payload: dict[str, Any], step: Step) -> None:
    """Anything else: recorded as it is (without the fields every payload carries)."""
    rest = {k: v for k, v in payload.items() if k not in _COMMON_KEYS}
    encoded = _json(rest)
    if len(encoded.encode("utf-8", "replace")) > TEXT_LIMIT_BYTES:
        rest = {"truncated": True, "bytes": len(encoded), "preview": cut_text(encoded, 4096, 0)}
    step.kind = "other"
    step.record = {"type": HOOK_EVENT, "event": step.hook_event, "payload": rest}


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


def _args(payload: dict[str, Any]) -> dict[str, Any]:
    args = payload.get("tool_input")
    if isinstance(args, dict):
        return args
    return {} if args is None else {"input": args}


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
            out[key] = cut_text(text, budget * 3 // 4, budget // 4)
            out[f"{key}_bytes"] = len(text.encode("utf-8", "replace"))
            out[f"{key}_hash"] = output_hash(text)
    return out


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
