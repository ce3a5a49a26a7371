"""Map one Gemini CLI hook payload to a `HookStep`: pure functions, stdlib and xxhash.

Gemini CLI sends Claude Code's field names with its own events and tool names (docs/gemini.md):
- the session id is the sanitised `session_id`; BeforeAgent is the user's prompt, AfterAgent
  the agent stopping (its `prompt_response` is the turn's text), BeforeTool and AfterTool a call
  and its outcome;
- tools keep Gemini's names (`run_shell_command`, `read_file`, `replace`, `write_file`, ...),
  which the engine's default policy puts in its categories;
- there is no call id: a call and its outcome pair by order, per tool and arguments
  (`HookStep.pair`; the runtime numbers the calls);
- the outcome: `tool_response.error` (`{message, type}`) is a tool's own failure (an edit
  whose `old_string` is not in the file, a missing file); a shell command's exit code is only
  in the text (`Exit Code: N` in `llmContent`, `Command exited with code: N` in
  `returnDisplay`), non-zero being a failure. The volatile `Process Group PGID: N` line is left
  out of the recorded output, so a repeated command's identical outcome looks identical.
"""

import json
import re
from collections.abc import Callable
from typing import Any

from supervisor.hooks.step import (
    HookStep,
    as_end,
    as_notification,
    as_prompt,
    as_start,
    as_unnamed_call,
    as_unnamed_result,
    cut_text,
    first_line,
    other_event,
    replace,
    session_ids,
    text_or_none,
    tool_args,
)

AGENT = "gemini"
LABEL = "Gemini CLI"
_COMMON_KEYS = frozenset(
    {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"}
)
_EXIT = re.compile(r"^Exit Code: (-?\d+)\s*$", re.MULTILINE)
_EXIT_DISPLAY = re.compile(r"^Command exited with code: (-?\d+)")
_SIGNAL = re.compile(r"^Signal: (\S+)\s*$", re.MULTILINE)
_PGID = re.compile(r"^Process Group PGID: \d+\s*\n?", re.MULTILINE)


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = text_or_none(payload.get("hook_event_name")) or "unknown"
    session_id, _parent = session_ids(payload)
    step = HookStep(kind="other", hook_event=event, session_id=session_id,
                    start=_session_start(payload),
                    transcript=text_or_none(payload.get("transcript_path")))
    return _MAPPERS.get(event, _other)(payload, step)


def _session_start(payload: dict[str, Any]) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "session_start", "agent": AGENT, "task": None,
        "cwd": text_or_none(payload.get("cwd")), "pid": None, "policy": None,
        "heartbeat_s": None,
        "gemini_session_id": payload["session_id"],
        "transcript_path": text_or_none(payload.get("transcript_path")),
    }
    if text_or_none(payload.get("source")):
        event["source"] = payload["source"]
    return event


def _start(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_start(step, LABEL, payload.get("source"))


def _prompt(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_prompt(step, payload.get("prompt"))


def _before_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    tool, args = tool_args(payload)
    return as_unnamed_call(step, tool, args)


def _after_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    tool, args = tool_args(payload)
    response = payload.get("tool_response")
    output, error = outcome(response)
    return as_unnamed_result(step, tool, args, output, error)


def outcome(response: Any) -> tuple[str, str | None]:
    """(the output as the model read it, the error or None) of an AfterTool response."""
    if not isinstance(response, dict):
        return ("" if response is None else _text(response)), None
    output = _PGID.sub("", _text(response.get("llmContent")))
    display = response.get("returnDisplay")
    error = response.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        return output, first_line(_text(message)) or "the tool call failed"
    code = _exit_code(output, display)
    if code:
        shown = _shown_output(output)
        return output, f"Exit code {code}" + (f"\n{first_line(shown)}" if shown else "")
    signal = _SIGNAL.search(output)
    if signal and signal.group(1) not in ("(none)", "0"):
        return output, f"killed by signal {signal.group(1)}"
    return output, None


def _exit_code(output: str, display: Any) -> int | None:
    found = _EXIT.search(output)
    if found is None and isinstance(display, str):
        found = _EXIT_DISPLAY.match(display)
    return int(found.group(1)) if found else None


def _shown_output(output: str) -> str:
    """The command's own output inside Gemini's report (`Output: ...`), else ""."""
    for line in output.splitlines():
        if line.startswith("Output:"):
            text = line.removeprefix("Output:").strip()
            return "" if text == "(empty)" else text
    return ""


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # Gemini parts
        return "\n".join(
            p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str)
            else json.dumps(p, ensure_ascii=False, sort_keys=True, default=str)
            for p in value
        )
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True,
                                               default=str)


def _stop(payload: dict[str, Any], step: HookStep) -> HookStep:
    text = payload.get("prompt_response")
    if isinstance(text, str) and text.strip():
        return replace(step, kind="stop",
                       message={"role": "assistant", "text": cut_text(text.strip())})
    return replace(step, kind="stop")


def _notification(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_notification(step, payload.get("message"), payload.get("notification_type"))


def _session_end(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_end(step, LABEL, payload.get("reason"))


def _other(payload: dict[str, Any], step: HookStep) -> HookStep:
    return other_event(payload, step, _COMMON_KEYS)


_MAPPERS: dict[str, Callable[[dict[str, Any], HookStep], HookStep]] = {
    "SessionStart": _start,
    "BeforeAgent": _prompt,
    "BeforeTool": _before_tool,
    "AfterTool": _after_tool,
    "AfterAgent": _stop,
    "Notification": _notification,
    "SessionEnd": _session_end,
}
