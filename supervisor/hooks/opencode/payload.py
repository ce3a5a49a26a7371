"""Map one step the OpenCode plugin sends (`plugin.js`) to a `HookStep`: pure functions, stdlib and
xxhash.

OpenCode (and Kilo, its fork) has no command hooks; the plugin the installer writes sends the
supervisor a JSON object per step, with the plugin's own event names (docs/opencode.md):
- `session.created`: the session starts (`session_id` is OpenCode's `ses_...` id);
- `chat.message`: the user's prompt (`prompt`); operator guidance not yet seen is appended to
  it;
- `tool.execute.before`: a call (`tool_name`, `tool_input`, `call_id`, OpenCode's own call id);
- `tool.execute.after`: its outcome (`tool_output`, and `metadata`, where `exit` is a shell
  command's exit status: non-zero is a failure);
- `tool.error`: a call whose tool threw (an edit whose text is not in the file, a missing file):
  OpenCode then runs no `tool.execute.after`; the plugin reports it before the next model
  request, with the `error` the model reads;
- `message.text`: the assistant's text between tool calls (`text`);
- `session.idle`: the agent's turn ended. Recorded as a system message, not as a stop: OpenCode
  has no hook that can keep it working, and a stop step would take operator guidance the agent
  could not be given.

OpenCode's tools take camelCase arguments (`filePath`, `oldString`, ...): they are recorded under
the names the engine reads for every agent (`file_path`, `old_string`, ...), so edits, reads and
paths are understood as for Claude Code.
"""

from typing import Any

from supervisor.hooks.step import (
    HookStep,
    as_prompt,
    as_said,
    as_start,
    cut_args,
    first_line,
    other_event,
    replace,
    result_of,
    text_or_none,
    to_json,
    tool_args,
)
from supervisor.protocol import arg_names
from supervisor.protocol.arg_names import renamed
from supervisor.store.paths import sanitize_session_id

_COMMON_KEYS = frozenset({"session_id", "hook_event_name", "cwd"})


def mapper(agent: str, label: str):  # -> Callable[[dict[str, Any]], HookStep]
    """The payload reader of an OpenCode-plugin target (`agent` is its command-line name)."""

    def map_payload(payload: dict[str, Any]) -> HookStep:
        event = text_or_none(payload.get("hook_event_name")) or "unknown"
        step = HookStep(kind="other", hook_event=event,
                        session_id=sanitize_session_id(payload["session_id"]),
                        start=_session_start(agent, payload))
        if event == "session.created":
            return as_start(step, label, "startup")
        if event == "chat.message":
            return as_prompt(step, payload.get("prompt"))
        if event == "tool.execute.before":
            tool, args, call_id = _call(payload)
            return replace(step, kind="call",
                           call={"call_id": call_id, "tool": tool, "args": cut_args(args)})
        if event in ("tool.execute.after", "tool.error"):
            tool, _args, call_id = _call(payload)
            output, error = outcome(payload)
            return replace(step, kind="result", result=result_of(call_id, tool, output, error))
        if event == "message.text":  # recorded as a message, nothing answered
            return as_said(step, payload.get("text"))
        if event == "session.idle":
            # not a stop: OpenCode cannot be kept working, so guidance polled here would be lost
            return replace(step, kind="notification", message={
                "role": "system", "text": f"{label}: the agent's turn ended"})
        return other_event(payload, step, _COMMON_KEYS)

    return map_payload


def _session_start(agent: str, payload: dict[str, Any]) -> dict[str, Any]:
    event = {
        "type": "session_start", "agent": agent, "task": None,
        "cwd": text_or_none(payload.get("cwd")), "pid": None, "policy": None,
        "heartbeat_s": None, f"{agent}_session_id": payload["session_id"],
    }
    parent = text_or_none(payload.get("parent_session_id"))
    if parent:  # a subagent's (the task tool's) session: a session of its own, named here
        event[f"{agent}_parent_session_id"] = parent
    return event


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(tool, arguments under the engine's names, call id) of a tool step."""
    tool, args = tool_args(payload)
    args = renamed(args, arg_names.OPENCODE)
    call_id = text_or_none(payload.get("call_id")) or "unknown"
    return tool, args, call_id


def outcome(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(the output as the model read it, the error or None) of a result step."""
    if payload.get("hook_event_name") == "tool.error":
        error = payload.get("error")
        text = error if isinstance(error, str) else to_json(error)
        return text, first_line(text) or "the tool call failed"
    value = payload.get("tool_output")
    output = value if isinstance(value, str) else ("" if value is None else to_json(value))
    metadata = payload.get("metadata")
    code = metadata.get("exit") if isinstance(metadata, dict) else None
    if isinstance(code, int) and not isinstance(code, bool) and code != 0:
        shown = first_line(output)
        return output, f"Exit code {code}" + (f"\n{shown}" if shown else "")
    return output, None
