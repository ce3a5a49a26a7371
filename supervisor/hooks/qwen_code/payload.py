"""Map one Qwen Code hook payload to a `HookStep`: Claude Code's mapping, with Qwen's differences.

Qwen Code sends Claude Code's payloads (the same event names and fields; docs/qwen-code.md)
with Gemini CLI's tool names (`run_shell_command`, `read_file`, `edit`, `write_file`, ...), which
the engine's policy knows. What differs, measured with Qwen Code 0.24.4:
- the call id: `tool_use_id` is a fresh `toolu_...` per hook in PreToolUse and PostToolUse but
  the model's call id in PostToolBatch; `tool_call_id` (the model's) is in all three, so it is
  the id, and PostToolBatch pairs with what PreToolUse saw;
- a tool's outcome is Gemini's (`tool_response.llmContent`; a shell command's `Exit Code: N`
  in its text), and a failure comes as PostToolUseFailure whose `error` is that text: read as
  for Gemini CLI (`Exit code 2` and the first line the command printed);
- UserPromptSubmit fires again with an empty prompt after every batch of calls (the turn goes
  on): not a person's prompt, so no new cycle (recorded as nothing);
- the agent's text is in its chat file (`transcript_path`, `transcript`);
- Stop's `last_assistant_message` is `[no response text]` when the last answer had no text:
  Qwen's placeholder, not the model's words, so no message.
"""

from typing import Any

from supervisor.hooks.claude_code import payload as claude
from supervisor.hooks.gemini.payload import outcome
from supervisor.hooks.step import (
    HookStep,
    Result,
    first_line,
    number_or_none,
    replace,
    result_of,
    text_or_none,
)

AGENT = "qwen-code"
LABEL = "Qwen Code"
NO_TEXT = "[no response text]"
"""What Qwen Code 0.24.4 sends as a Stop's last message when the answer had no text."""


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = payload.get("hook_event_name")
    if event == "UserPromptSubmit" and not _text(payload.get("prompt")).strip():
        return _nothing(payload)
    if event == "Stop" and payload.get("last_assistant_message") == NO_TEXT:
        payload = {**payload, "last_assistant_message": None}
    step = claude.renamed(claude.map_payload(_with_call_ids(payload)), AGENT, LABEL,
                          "qwen_session_id")
    if step.kind == "result" and step.result is not None:
        return replace(step, result=_read_outcome(payload, step.result))
    return step


def _nothing(payload: dict[str, Any]) -> HookStep:
    """A step that records nothing (a notification without a message)."""
    step = claude.map_payload({**payload, "hook_event_name": "Notification"})
    return replace(step, hook_event="UserPromptSubmit", message=None,
                   start={**step.start, "agent": AGENT})


def _with_call_ids(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload with `tool_use_id` set to the model's call id (`tool_call_id`), in a batch's
    calls too."""
    out = dict(payload)
    call_id = text_or_none(payload.get("tool_call_id"))
    if call_id:
        out["tool_use_id"] = call_id
    calls = payload.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [
            {**item, "tool_use_id": item.get("tool_call_id") or item.get("tool_use_id")}
            if isinstance(item, dict) else item for item in calls]
    return out


def _read_outcome(payload: dict[str, Any], recorded: Result) -> Result:
    """PostToolUse / PostToolUseFailure as Gemini's outcome: the text the model read, and the
    error (a non-zero exit code, a tool's own error)."""
    if payload.get("hook_event_name") == "PostToolUseFailure":
        text = _text(payload.get("error"))
        output, error = outcome({"llmContent": text})
        error = error or first_line(text) or "the tool call failed"
        if payload.get("is_interrupt") is True:
            error = f"interrupted by the user: {error}"
    else:
        output, error = outcome(payload.get("tool_response"))
    result = result_of(recorded["call_id"], recorded["tool"], output, error)
    result["duration_ms"] = number_or_none(payload.get("duration_ms"))
    return result


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
