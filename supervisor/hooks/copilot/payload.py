"""Map one GitHub Copilot CLI hook payload to a `HookStep`: pure functions (stdlib, xxhash).

Copilot CLI sends its own camelCase payloads (docs/copilot.md), measured with 1.0.102:
- **no event name**: a payload says which event it is by its fields (`toolResult`: a call's
  result; `error` with `toolName`: a failed call; `toolName`: a call about to run; `prompt`: the
  user's prompt; `initialPrompt` or `source`: the session's start; `stopReason`: the agent
  stopping; `reason`: the session's end). The supervisor registers only these events, so the
  shapes cannot be confused with the ones it does not register;
- the session id is the sanitised `sessionId`;
- **no call id**: a call and its outcome pair by order, per tool and arguments (`HookStep.pair`),
  as for Gemini CLI;
- tools keep Copilot's names (`bash`, `view`, `edit`, `create`, `grep`, `glob`, ...), which
  the engine's default policy knows; `edit` (`path`, `old_str`, `new_str`) is a replacement;
- the outcome: `toolResult.textResultForLlm` is what the model read; a shell command's exit code
  is only in it (`<shellId: N completed with exit code C>`, with `resultType: "success"`), a
  non-zero one being a failure; a tool's own failure comes as postToolUseFailure with `error`.
  The shell's number (`shellId`) grows with every command, so it is left out of the recorded
  output: a repeated command's identical outcome looks identical.
"""

import re
from collections.abc import Callable
from typing import Any

from supervisor.hooks.step import (
    HookStep,
    as_end,
    as_prompt,
    as_start,
    as_unnamed_call,
    as_unnamed_result,
    first_line,
    other_event,
    replace,
    session_ids,
    text_or_none,
)

AGENT = "copilot"
LABEL = "Copilot CLI"
_COMMON_KEYS = frozenset({"sessionId", "session_id", "timestamp", "cwd", "hookName"})
_EXIT = re.compile(r"<shellId:[^>]*? completed with exit code (-?\d+)>\s*$")
_SHELL_ID = re.compile(r"<shellId: \d+ ")


def event_of(payload: dict[str, Any]) -> str:
    """The hook event a payload stands for (Copilot names none)."""
    named = text_or_none(payload.get("hookName")) or text_or_none(payload.get("hook_event_name"))
    if named:
        return named
    if "toolName" in payload or "tool_name" in payload:
        if "toolResult" in payload:
            return "postToolUse"
        return "postToolUseFailure" if "error" in payload else "preToolUse"
    if "stopReason" in payload or "transcriptPath" in payload:
        return "agentStop"
    if "initialPrompt" in payload or "source" in payload:
        return "sessionStart"
    if "prompt" in payload:
        return "userPromptSubmitted"
    if "reason" in payload:
        return "sessionEnd"
    return "unknown"


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = event_of(payload)
    session_id, _parent = session_ids(payload)
    step = HookStep(kind="other", hook_event=event, session_id=session_id,
                    start=_session_start(payload),
                    transcript=text_or_none(payload.get("transcriptPath")))
    return _MAPPERS.get(event, _other)(payload, step)


def _session_start(payload: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "session_start", "agent": AGENT, "task": None,
        "cwd": text_or_none(payload.get("cwd")), "pid": None, "policy": None,
        "heartbeat_s": None, "copilot_session_id": payload["session_id"],
    }
    source = text_or_none(payload.get("source"))
    if source:
        event["source"] = source
    return event


def _tool(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    tool = text_or_none(payload.get("toolName")) or text_or_none(payload.get("tool_name"))
    args = payload.get("toolArgs", payload.get("tool_input"))
    return tool or "unknown", args if isinstance(args, dict) else (
        {} if args is None else {"input": args})


def _start(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_start(step, LABEL, payload.get("source"))


def _prompt(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_prompt(step, payload.get("prompt"))


def _pre_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    tool, args = _tool(payload)
    return as_unnamed_call(step, tool, args)


def _post_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    tool, args = _tool(payload)
    output, error = outcome(payload)
    return as_unnamed_result(step, tool, args, output, error)


def outcome(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(the output as the model read it, the error or None) of a postToolUse or
    postToolUseFailure payload."""
    if "toolResult" not in payload:
        error = payload.get("error")
        text = error if isinstance(error, str) else ""
        return text, first_line(text) or "the tool call failed"
    result = payload.get("toolResult")
    result = result if isinstance(result, dict) else {}
    output = result.get("textResultForLlm")
    output = _SHELL_ID.sub("<shellId: ", output) if isinstance(output, str) else ""
    kind = result.get("resultType")
    if kind not in (None, "success"):
        return output, f"{kind}: {first_line(output)}" if output else str(kind)
    code = _EXIT.search(output)
    if code and code.group(1) != "0":
        shown = first_line(output[:code.start()])
        return output, f"Exit code {code.group(1)}" + (f"\n{shown}" if shown else "")
    return output, None


def _stop(payload: dict[str, Any], step: HookStep) -> HookStep:
    return replace(step, kind="stop")


def _session_end(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_end(step, LABEL, payload.get("reason"))


def _other(payload: dict[str, Any], step: HookStep) -> HookStep:
    return other_event(payload, step, _COMMON_KEYS)


_MAPPERS: dict[str, Callable[[dict[str, Any], HookStep], HookStep]] = {
    "sessionStart": _start,
    "userPromptSubmitted": _prompt,
    "preToolUse": _pre_tool,
    "postToolUse": _post_tool,
    "postToolUseFailure": _post_tool,
    "agentStop": _stop,
    "sessionEnd": _session_end,
}

