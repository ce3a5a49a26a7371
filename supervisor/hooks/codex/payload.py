"""Map one Codex CLI hook payload to a `HookStep`: pure functions but for the rollout lookup.

Codex sends Claude Code's field names plus `model` and `turn_id` (docs/codex.md):
- the session id is the sanitised `session_id` (a thread id); `model`, `permission_mode` and
  the transcript go into `session_start`, a prompt's `turn_id` and `model` into its `message`;
- the shell tool reaches hooks as `Bash` with `{"command"}` whatever the model called it;
- PostToolUse has no failure flag and no exit code (`tool_response` is the bare output), so a
  shell command's outcome is read from the rollout (`rollout.exit_code`): non-zero is a failure
  with the error `Exit code N` and the first line of the output. A call whose code cannot be found
  (another tool, an unreadable rollout) is recorded as a success: the supervisor cannot know;
- a payload from inside a subagent (`agent_id`) belongs to a child session, as for Claude Code.
"""

import json
from collections.abc import Callable
from typing import Any

from supervisor.engine import tools
from supervisor.hooks.codex.rollout import exit_code
from supervisor.hooks.step import (
    Call,
    HookStep,
    as_end,
    as_prompt,
    as_start,
    as_stop,
    cut_args,
    first_line,
    other_event,
    replace,
    result_of,
    session_ids,
    stable_call_id,
    text_or_none,
    tool_args,
)

AGENT = "codex"
LABEL = "Codex"
_COMMON_KEYS = frozenset(
    {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", "model",
     "turn_id", "agent_id", "agent_type"}
)
TOOLS = tools.ToolVocabulary(shell=("Bash", "shell", "exec_command", "local_shell"),
                             edit=("apply_patch",), command_keys=("cmd", "command"))
"""Codex's tool names (its `Target` contributes them to the engine's vocabulary). No poll:
Codex sends no PreToolUse for `write_stdin` or `wait_agent` (docs/codex.md, "Waiting"), so
a live session never shows one; the importer of Codex's rollouts, which records them all,
names them (`importers/codex`)."""
SHELL_TOOLS = frozenset(TOOLS.shell)
"""Tools whose outcome the rollout records as a `CommandExecution` with an exit code."""


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = text_or_none(payload.get("hook_event_name")) or "unknown"
    session_id, parent = session_ids(payload)
    subagent = None
    if parent:
        subagent = {"agent_id": str(payload["agent_id"]),
                    "agent_type": text_or_none(payload.get("agent_type")) or "subagent"}
    step = HookStep(
        kind="other", hook_event=event, session_id=session_id,
        start=_session_start(payload, parent, subagent), parent_session_id=parent,
        subagent=subagent, transcript=text_or_none(payload.get("transcript_path")),
    )
    return _MAPPERS.get(event, _other)(payload, step)


def _session_start(
    payload: dict[str, Any], parent: str | None, subagent: dict[str, str] | None
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "type": "session_start",
        "agent": f"{AGENT}:{subagent['agent_type']}" if subagent else AGENT,
        "task": None, "cwd": text_or_none(payload.get("cwd")), "pid": None, "policy": None,
        "heartbeat_s": None,
        "codex_session_id": payload["session_id"],
        "transcript_path": text_or_none(payload.get("transcript_path")),
        "model": text_or_none(payload.get("model")),
        "permission_mode": text_or_none(payload.get("permission_mode")),
    }
    if subagent:
        event["parent_session"] = parent
        event["subagent"] = subagent
    elif text_or_none(payload.get("source")):
        event["source"] = payload["source"]
    return event


def _start(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_start(step, LABEL, payload.get("source"))


def _prompt(payload: dict[str, Any], step: HookStep) -> HookStep:
    step = as_prompt(step, payload.get("prompt"))
    turn = {k: payload[k] for k in ("turn_id", "model") if text_or_none(payload.get(k))}
    if turn and step.message is not None:
        return replace(step, message={**step.message, "extra": turn})
    return step


def _pre_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    return replace(step, kind="call", call=_call(payload))


def _post_tool(payload: dict[str, Any], step: HookStep) -> HookStep:
    call = _call(payload)
    response = payload.get("tool_response")
    output = response if isinstance(response, str) else (
        "" if response is None else json.dumps(response, ensure_ascii=False, default=str))
    code = None
    transcript = text_or_none(payload.get("transcript_path"))
    if call["tool"] in SHELL_TOOLS and transcript:
        code = exit_code(transcript, call["call_id"])
    error = None
    if code:
        error = f"Exit code {code}"
        if output.strip():
            error += f"\n{first_line(output)}"
    return replace(step, kind="result",
                   result=result_of(call["call_id"], call["tool"], output, error))


def _stop(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_stop(step, payload.get("last_assistant_message"))


def _interrupt(payload: dict[str, Any], step: HookStep) -> HookStep:
    return replace(step, kind="notification", message={
        "role": "system", "text": "[interrupt] the user interrupted Codex's turn"})


def _session_end(payload: dict[str, Any], step: HookStep) -> HookStep:
    return as_end(step, LABEL, payload.get("reason"))


def _other(payload: dict[str, Any], step: HookStep) -> HookStep:
    return other_event(payload, step, _COMMON_KEYS)


_MAPPERS: dict[str, Callable[[dict[str, Any], HookStep], HookStep]] = {
    "SessionStart": _start,
    "UserPromptSubmit": _prompt,
    "PreToolUse": _pre_tool,
    "PostToolUse": _post_tool,
    "Stop": _stop,
    "SubagentStop": _stop,
    "Interrupt": _interrupt,
    "SessionEnd": _session_end,
}


def _call(payload: dict[str, Any]) -> Call:
    tool, args = tool_args(payload)
    call_id = text_or_none(payload.get("tool_use_id")) or stable_call_id(tool, args)
    return {"call_id": call_id, "tool": tool, "args": cut_args(args)}
