"""Map one Claude Code hook payload to a `HookStep`: pure functions (stdlib, xxhash).

Decisions documented in docs/claude-code.md:
- the session id is the sanitised `session_id`;
- a payload from inside a subagent (`agent_id`) belongs to a child session
  `<session>.sub-<agent_id>` whose `session_start` names its parent and agent type, so the
  subagent's calls neither mix with nor hide the main agent's loops;
- long texts (prompts, messages, argument values such as a whole file for Write) are cut, head
  and tail kept, with the size and xxh3 hash of the whole; a tool's output is passed whole to
  the guard, which records it cut with the size and hash of the whole;
- a prompt that starts with `<task-notification>` is Claude Code telling the model that a
  background task finished: a system message, not a person starting a new cycle;
- PostToolBatch carries every call of a model turn, including those Claude Code refused before
  PreToolUse (an Edit whose `old_string` is not in the file, a missing parameter, an unknown
  tool): the runtime records the ones it has not seen; and those its permission check refused
  after PreToolUse let them through (`Claude requested permissions to use X, but you haven't
  granted it yet.`), which get no other result: the runtime records the batch's for them;
- PreSkillShellCommand (2.1.332) is a shell command in a skill's text, run when the skill loads:
  a call the engine judges like any other, whose outcome no hook reports (`HookStep.no_result`);
- MessageDisplay (2.1.332) streams the assistant's text in flushes of whole lines: the
  runtime joins a message's flushes and records it at the final one.
"""

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervisor.hooks.step import (
    BatchCall,
    Call,
    HookStep,
    Result,
    as_end,
    as_notification,
    as_prompt,
    as_start,
    as_stop,
    cut_args,
    cut_text,
    first_line,
    number_or_none,
    other_event,
    replace,
    result_of,
    session_ids,
    stable_call_id,
    text_or_none,
    to_json,
    tool_args,
)

AGENT = "claude-code"
LABEL = "Claude Code"
TASK_NOTIFICATION = "<task-notification>"
_TOOL_ERROR = re.compile(r"^\s*<tool_use_error>(.*?)</tool_use_error>\s*$", re.DOTALL)
_PERMISSION_REFUSED = re.compile(
    r"^\s*(?:Claude requested permissions to .{1,2000}, but you haven't granted it yet\."
    r"|Permission to .{1,2000} has been denied)", re.DOTALL)

_COMMON_KEYS = frozenset(
    {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name",
     "agent_id", "agent_type"}
)


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = payload.get("hook_event_name")
    event = event if isinstance(event, str) and event else "unknown"
    session_id, parent = session_ids(payload)
    subagent = None
    if parent:
        subagent = {"agent_id": str(payload["agent_id"]),
                    "agent_type": text_or_none(payload.get("agent_type")) or "subagent"}
    step = HookStep(
        kind="other",
        hook_event=event,
        session_id=session_id,
        start=_session_start(payload, parent, subagent),
        parent_session_id=parent,
        subagent=subagent,
        transcript=_transcript(payload, subagent),
    )
    return _MAPPERS.get(event, _other)(payload, step)


def renamed(step: HookStep, agent: str, label: str, session_key: str, **changes: Any
            ) -> HookStep:
    """The step of a payload in Claude Code's shape sent by another agent (Factory Droid, Qwen
    Code): its name in `session_start` and in the start and end texts, and the agent's own
    session id under `session_key`; `changes`: more fields that agent's mapping changes (one
    copy of the step, not one per change: a copy is most of what a mapping costs)."""
    start = dict(step.start)
    start["agent"] = start["agent"].replace(AGENT, agent, 1)
    start[session_key] = start.pop("claude_session_id")
    message, end = step.message, step.end
    if message is not None and step.kind == "start":
        message = {**message, "text": message["text"].replace(LABEL, label, 1)}
    if step.kind == "end" and end is not None and end["reason"]:
        end = {**end, "reason": end["reason"].replace(LABEL, label, 1)}
    return replace(step, start=start, message=message, end=end, **changes)


def _transcript(payload: dict[str, Any], subagent: dict[str, str] | None) -> str | None:
    """The transcript of the agent this payload comes from: the session's, or for a subagent
    its own beside it (`<session>/subagents/agent-<agent_id>.jsonl`, as SubagentStop's
    `agent_transcript_path` shows)."""
    path = text_or_none(payload.get("agent_transcript_path") if subagent else None)
    if path:
        return path
    main = text_or_none(payload.get("transcript_path"))
    if not main or not subagent:
        return main
    base = Path(main)
    return str(base.with_suffix("") / "subagents" / f"agent-{subagent['agent_id']}.jsonl")


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
        "cwd": text_or_none(payload.get("cwd")),
        "pid": None,
        "policy": None,
        "heartbeat_s": None,
        "claude_session_id": payload["session_id"],
        "transcript_path": text_or_none(payload.get("transcript_path")),
        "permission_mode": text_or_none(payload.get("permission_mode")),
    }
    if subagent:
        event["parent_session"] = parent
        event["subagent"] = subagent
    else:
        source = text_or_none(payload.get("source"))
        if source:
            event["source"] = source
    return event


def _session_start_event(payload: dict[str, Any], step: HookStep) -> HookStep:
    """SessionStart: `session_start` for a new session (the handler decides); a resumed,
    cleared or compacted session that already runs gets a system message saying so."""
    return as_start(step, LABEL, payload.get("source"))


def _user_prompt(payload: dict[str, Any], step: HookStep) -> HookStep:
    step = as_prompt(step, payload.get("prompt"))
    if step.message is not None and step.message["text"].lstrip().startswith(TASK_NOTIFICATION):
        return replace(step, message={**step.message, "role": "system"})
    return step


def _pre_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    return replace(step, kind="call", call=_call(payload))


def _call(payload: dict[str, Any]) -> Call:
    tool, args = tool_args(payload)
    return {"call_id": _call_id(payload, tool, args), "tool": tool, "args": cut_args(args)}


def _post_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    failed = payload.get("hook_event_name") == "PostToolUseFailure"
    tool, args = tool_args(payload)
    response = payload.get("tool_response")
    error = None
    if failed:
        error = payload.get("error")
        error = error if isinstance(error, str) else (to_json(error) if error else None)
        if payload.get("is_interrupt") is True:
            error = f"interrupted by the user{': ' + error if error else ''}"
        error = error or "the tool call failed"
        output = output_text(response) if response is not None else error
    else:
        output = output_text(response)
        if isinstance(response, dict) and (response.get("is_error") or response.get("interrupted")):
            failed = True
            error = "interrupted" if response.get("interrupted") else first_line(output)
    return replace(step, kind="result", result={
        "call_id": _call_id(payload, tool, args),
        "tool": tool,
        "output": output,
        "ok": not failed,
        "error": cut_text(error, 2048, 0) if error else None,
        "duration_ms": number_or_none(payload.get("duration_ms")),
    })


def _batch(payload: dict[str, Any], step: HookStep) -> HookStep:
    """PostToolBatch: every call of the model's turn with its response (the runtime records
    only those that never went through PreToolUse)."""
    entries: list[BatchCall] = []
    calls = payload.get("tool_calls")
    for item in calls if isinstance(calls, list) else []:
        if not isinstance(item, dict):
            continue
        call = _call(item)
        result = _batch_result(call, item)
        entry = BatchCall(call=call, result=result)
        if _PERMISSION_REFUSED.match(result["output"]):
            entry["refused"] = True
        entries.append(entry)
    return replace(step, kind="batch", batch=tuple(entries))


def _batch_result(call: Call, item: dict[str, Any]) -> Result:
    """A batched call's outcome: `<tool_use_error>...</tool_use_error>` is a call Claude Code
    refused (its text without the tags is the error); anything else ran."""
    response = item.get("tool_response")
    output = output_text(response)
    refused = _TOOL_ERROR.match(output)
    error = None
    if refused:
        output = error = refused.group(1).strip() or "the tool call failed"
    elif _PERMISSION_REFUSED.match(output):
        error = first_line(output)
    elif isinstance(response, dict) and response.get("is_error"):
        error = first_line(output) or "the tool call failed"
    return result_of(call["call_id"], call["tool"], output, error)


def _skill_shell(payload: dict[str, Any], step: HookStep) -> HookStep:
    """PreSkillShellCommand: a call (under its shell tool's name) with no outcome reported."""
    return replace(_pre_tool(payload, step), no_result=True)


def _display(payload: dict[str, Any], step: HookStep) -> HookStep:
    """MessageDisplay: one flush of the assistant's text."""
    delta = payload.get("delta")
    return replace(step, kind="display", display={
        "message_id": text_or_none(payload.get("message_id")) or "",
        "delta": delta if isinstance(delta, str) else "",
        "final": payload.get("final") is True})


def _stop(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_stop(step, payload.get("last_assistant_message"))


def _notification(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_notification(step, payload.get("message"), payload.get("notification_type"))


def _session_end(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_end(step, LABEL, payload.get("reason"))


def _other(payload: dict[str, Any], step: HookStep) -> HookStep:
    """Anything else: recorded as it is (without the fields every payload carries)."""
    return other_event(payload, step, _COMMON_KEYS)


_MAPPERS: dict[str, Callable[[dict[str, Any], HookStep], HookStep]] = {
    "SessionStart": _session_start_event,
    "UserPromptSubmit": _user_prompt,
    "PreToolUse": _pre_tool,
    "PostToolUse": _post_tool,
    "PostToolUseFailure": _post_tool,
    "PostToolBatch": _batch,
    "PreSkillShellCommand": _skill_shell,
    "MessageDisplay": _display,
    "Stop": _stop,
    "SubagentStop": _stop,
    "Notification": _notification,
    "SessionEnd": _session_end,
}


def _call_id(payload: dict[str, Any], tool: str, args: dict[str, Any]) -> str:
    """`tool_use_id`, or (older releases) a stable id from the tool and its arguments."""
    return text_or_none(payload.get("tool_use_id")) or stable_call_id(tool, args)
