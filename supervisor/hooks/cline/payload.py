"""Map one step the Cline plugin sends (`plugin.js`) to a `HookStep`: pure functions, stdlib and
xxhash.

Cline's file hooks cannot refuse one call (their `cancel` aborts the whole task), so the
supervisor uses its plugin hooks (docs/cline.md). The plugin sends a JSON object per step, named
after Cline's hooks; the session is Cline's `conversationId`:
- `beforeRun`: a run starts with the user's prompt (`prompt`, Cline wraps it in `<user_input>`);
  operator guidance not yet seen goes to the model as the hook's `appendContext`;
- `beforeTool`: a call (`tool_name`, `tool_input`, `call_id`, Cline's own call id);
- `afterTool`: its outcome: `tool_output` is the tool's output as the model reads it (JSON;
  recorded as the text its items printed),
  `is_error` a tool that threw; `run_commands` reports each command as `{query, result, error,
  success}`, and `editor` its one operation the same way, where `success: false` is a failure;
- `message.text`: the assistant's text before a call (`text`);
- `afterRun`: the run ended (`text`, the final answer; `status`): recorded as the assistant's
  message, not as a stop (nothing a plugin returns there keeps Cline working).
"""

import re
from typing import Any

from supervisor.hooks.step import (
    HookStep,
    as_prompt,
    as_said,
    cut_args,
    first_line,
    other_event,
    replace,
    result_of,
    text_or_none,
    to_json,
    tool_args,
)
from supervisor.store.paths import sanitize_session_id

AGENT = "cline"
_COMMON_KEYS = frozenset({"session_id", "hook_event_name", "cwd"})
_USER_INPUT = re.compile(r"^\s*<user_input[^>]*>(.*)</user_input>\s*$", re.S)


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = text_or_none(payload.get("hook_event_name")) or "unknown"
    step = HookStep(kind="other", hook_event=event,
                    session_id=sanitize_session_id(payload["session_id"]),
                    start=_session_start(payload))
    if event == "beforeRun":
        prompt = payload.get("prompt")
        if isinstance(prompt, str):
            found = _USER_INPUT.match(prompt)
            prompt = found.group(1).strip() if found else prompt
        return as_prompt(step, prompt)
    if event == "beforeTool":
        tool, args, call_id = _call(payload)
        return replace(step, kind="call",
                       call={"call_id": call_id, "tool": tool, "args": cut_args(args)})
    if event == "afterTool":
        tool, _args, call_id = _call(payload)
        output, error = outcome(payload)
        return replace(step, kind="result", result=result_of(call_id, tool, output, error))
    if event in ("message.text", "afterRun"):
        # recorded as a message, nothing answered; afterRun is not a stop: nothing keeps Cline
        # working after its run, so guidance polled there would be lost; the final answer is
        # the assistant's message
        return as_said(step, payload.get("text"))
    return other_event(payload, step, _COMMON_KEYS)


def _session_start(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "session_start", "agent": AGENT, "task": None,
        "cwd": text_or_none(payload.get("cwd")), "pid": None, "policy": None,
        "heartbeat_s": None, "cline_conversation_id": payload["session_id"],
    }


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    tool, args = tool_args(payload)
    return tool, args, text_or_none(payload.get("call_id")) or "unknown"


def outcome(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(the output, the error or None) of an `afterTool` step. The output is what the
    commands printed (each item's `result`) when the tool reports items, so that the engine
    reads an error line as it does another agent's and the operator reads text, not JSON;
    else the output as the model read it."""
    value = payload.get("tool_output")
    output = value if isinstance(value, str) else ("" if value is None else to_json(value))
    items = value if isinstance(value, list) else [value]
    printed = [item.get("result") for item in items if isinstance(item, dict)]
    texts = [text for text in printed if isinstance(text, str)]
    if texts and len(texts) == len(printed):
        output = "\n".join(texts)
    for item in items:
        if isinstance(item, dict) and item.get("success") is False:
            error = text_or_none(item.get("error")) or "the tool call failed"
            shown = first_line(str(item.get("result") or "").replace(
                f"[{error}]", "").replace("[stderr]", ""))
            return output, first_line(error) + (f"\n{shown}" if shown else "")
    if payload.get("is_error") is True:
        said = value.get("error") if isinstance(value, dict) else value
        return output, first_line(said if isinstance(said, str) else output) or (
            "the tool call failed")
    return output, None
