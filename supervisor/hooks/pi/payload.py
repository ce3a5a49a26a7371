"""Map one step Pi's extension sends (`plugin.js`) to a `HookStep`: pure functions, stdlib and
xxhash.

Pi has no command hooks; the extension the installer writes sends the supervisor a JSON object
per step, named after Pi's extension events (docs/pi.md); the session is Pi's session id (a
UUID, `ctx.sessionManager.getSessionId()`):
- `session_start`: the session starts (`reason`: startup, new, resume, fork, reload);
- `before_agent_start`: the user's prompt (`prompt`); operator guidance not yet seen goes to
  the model as a message the extension returns;
- `tool_call`: a call (`tool_name`, `tool_input`, `call_id`, Pi's own call id);
- `tool_result`: its outcome: `tool_output` the text the model reads, `is_error` a failure
  (Pi's `bash` ends a failed command's output with `Command exited with code N`; an `edit` whose
  text is not in the file says `Could not find the exact text in PATH...`);
- `message.text`: the assistant's text (before its calls, and its final answer);
- `session_shutdown`: Pi quits (`reason`): the session's end.
Pi's `agent_end` (a prompt's run ended) is not sent: nothing an extension returns there keeps
Pi working, so it could not be a stop, and in print mode Pi emits it after `session_shutdown`.

Calls and failures are worded by `protocol/pi_calls` (an `edit`'s arguments under the
engine's names, a failed command's exit status), as the importer of Pi's session files words
them.
"""

from typing import Any

from supervisor.hooks.step import (
    HookStep,
    as_end,
    as_prompt,
    as_said,
    as_start,
    cut_args,
    other_event,
    replace,
    result_of,
    text_or_none,
    tool_args,
)
from supervisor.protocol.pi_calls import call_args, failure
from supervisor.store.paths import sanitize_session_id

AGENT = "pi"
LABEL = "Pi"
_COMMON_KEYS = frozenset({"session_id", "hook_event_name", "cwd"})


def map_payload(payload: dict[str, Any]) -> HookStep:
    """The step a payload (as returned by `read_payload`) stands for. Never raises."""
    event = text_or_none(payload.get("hook_event_name")) or "unknown"
    step = HookStep(kind="other", hook_event=event,
                    session_id=sanitize_session_id(payload["session_id"]),
                    start=_session_start(payload))
    if event == "session_start":
        return as_start(step, LABEL, payload.get("reason"))
    if event == "before_agent_start":
        return as_prompt(step, payload.get("prompt"))
    if event == "tool_call":
        tool, args, call_id = _call(payload)
        return replace(step, kind="call",
                       call={"call_id": call_id, "tool": tool, "args": cut_args(args)})
    if event == "tool_result":
        tool, _args, call_id = _call(payload)
        output, error = outcome(payload)
        return replace(step, kind="result", result=result_of(call_id, tool, output, error))
    if event == "message.text":  # recorded as a message, nothing answered
        return as_said(step, payload.get("text"))
    if event == "session_shutdown":
        return as_end(step, LABEL, payload.get("reason"))
    return other_event(payload, step, _COMMON_KEYS)


def _session_start(payload: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "session_start", "agent": AGENT, "task": None,
        "cwd": text_or_none(payload.get("cwd")), "pid": None, "policy": None,
        "heartbeat_s": None, "pi_session_id": payload["session_id"],
    }


def _call(payload: dict[str, Any]) -> tuple[str, dict[str, Any], str]:
    """(tool, arguments under the engine's names, call id) of a tool step."""
    tool, args = tool_args(payload)
    return tool, call_args(tool, args), text_or_none(payload.get("call_id")) or "unknown"


def outcome(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(the output as the model read it, the error or None) of a `tool_result` step."""
    value = payload.get("tool_output")
    output = value if isinstance(value, str) else ""
    if payload.get("is_error") is not True:
        return output, None
    return output, failure(output)
