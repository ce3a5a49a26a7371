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

Pi's `edit` takes `path` and `edits: [{oldText, newText}, ...]` (or one `oldText`/`newText`
pair at the top level, which Pi folds into `edits`): a call with one replacement is recorded
under the names the engine reads for every agent (`old_string`, `new_string`), so a failed
edit is understood as Claude Code's; a call with several keeps its list, each under those
names.
"""

import re
from typing import Any

from supervisor.hooks.step import (
    HookStep,
    as_end,
    as_prompt,
    as_said,
    as_start,
    cut_args,
    first_line,
    other_event,
    replace,
    result_of,
    text_or_none,
    tool_args,
)
from supervisor.store.paths import sanitize_session_id

AGENT = "pi"
LABEL = "Pi"
_COMMON_KEYS = frozenset({"session_id", "hook_event_name", "cwd"})
_EXIT = re.compile(r"\n*Command exited with code (\d+)\s*$")
_EDIT_NAMES = {"oldText": "old_string", "newText": "new_string"}


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
    if tool == "edit":
        args = edit_args(args)
    return tool, args, text_or_none(payload.get("call_id")) or "unknown"


def edit_args(args: dict[str, Any]) -> dict[str, Any]:
    """An `edit` call's arguments under the engine's names: one replacement flat
    (`old_string`, `new_string`), several as `edits` of those."""
    items = args.get("edits")
    edits = [dict(i) for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    if isinstance(args.get("oldText"), str):  # the form Pi folds into `edits`
        edits.append({"oldText": args["oldText"], "newText": args.get("newText")})
    rest = {k: v for k, v in args.items() if k not in ("edits", "oldText", "newText")}
    renamed = [{_EDIT_NAMES.get(k, k): v for k, v in e.items()} for e in edits]
    if len(renamed) == 1:
        return {**rest, **renamed[0]}
    return {**rest, "edits": renamed} if renamed else rest


def outcome(payload: dict[str, Any]) -> tuple[str, str | None]:
    """(the output as the model read it, the error or None) of a `tool_result` step."""
    value = payload.get("tool_output")
    output = value if isinstance(value, str) else ""
    if payload.get("is_error") is not True:
        return output, None
    found = _EXIT.search(output)
    if found:  # a shell command's exit status, worded as for every agent
        shown = first_line(output[:found.start()])
        return output, f"Exit code {found.group(1)}" + (f"\n{shown}" if shown else "")
    return output, first_line(output) or "the tool call failed"
