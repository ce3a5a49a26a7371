"""Read Factory Droid's transcript (`transcript_path`, `~/.factory/sessions/<project>/<id>.jsonl`):
the assistant's text between tool calls, and the failures Droid's hooks never report.

A line `{"type": "message", "message": {"role": "assistant", "content": [...]}}` holds what
the model said (`text` blocks) and its calls (`tool_use` blocks with `id`, `name`, `input`); a
user message's `tool_result` block (`tool_use_id`, `is_error`, `content`) is a call's result.
Droid runs PostToolUse only for a call that succeeded, so a result with `is_error` becomes an
`Unreported` failure, paired with its call by tool and arguments (`payload.pair_key`). Its call
is usually in an earlier read than the result: it is looked for in the lines read now, else in
the last `LOOKBACK_BYTES` before them. Everything else is skipped (the format is Droid's own),
and most lines are never parsed (`_WANTED`): Droid records each hook it runs and each successful
result as a message of its own, several a call, which said nothing we read.
"""

import re
from typing import Any

from supervisor.hooks.droid.payload import pair_key, tool_name
from supervisor.hooks.step import cut_text, first_line, result_of
from supervisor.hooks.target import Unreported
from supervisor.hooks.transcript import new_texts
from supervisor.protocol.bounded import loads

LOOKBACK_BYTES = 1024 * 1024
_WANTED = re.compile(rb'"assistant"|"is_error"\s*:\s*true')
"""What a line must hold to be parsed: an assistant message, or a result that failed (a line
that holds it elsewhere, in a text, is parsed and then skipped)."""
_EXIT = re.compile(r"^(?:Error: )*Command failed \(exit code: (-?\d+)\)\s*\n?(.*)", re.S)


def assistant_texts(path: str, offset: int) -> tuple[list[str | Unreported], int]:
    """(the assistant's texts and the unreported failures in the whole lines after `offset`,
    the offset after them)."""
    calls: dict[str, tuple[str, Any]] = {}
    start = offset

    def entry(line: bytes) -> str | Unreported | None:
        return _entry(line, calls, path, start)

    return new_texts(path, offset, entry)


def _entry(line: bytes, calls: dict[str, tuple[str, Any]], path: str,
           start: int) -> str | Unreported | None:
    if _WANTED.search(line) is None:
        return None
    message = _message(line)
    if message is None:
        return None
    content = message.get("content")
    if not isinstance(content, list):
        return None
    if message.get("role") == "assistant":
        texts = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                calls[block["id"]] = (str(block.get("name")), block.get("input"))
        return "\n".join(t for t in texts if t.strip()).strip() or None
    for block in content:  # a user message: tool results (one per message in Droid's files)
        if isinstance(block, dict) and block.get("type") == "tool_result" \
                and block.get("is_error") is True and isinstance(block.get("tool_use_id"), str):
            call = calls.get(block["tool_use_id"]) or _earlier_call(path, start,
                                                                     block["tool_use_id"])
            if call is None:
                return None
            return _failure(call[0], call[1], _text(block.get("content")))
    return None


def _failure(tool: str, args: Any, output: str) -> Unreported:
    """A failed result: a command's exit code as `Exit code N` and the first line it printed
    (as for the other agents), else the tool's own error without Droid's `Error: ` prefixes."""
    failed = _EXIT.match(output)
    if failed:
        shown = first_line(failed.group(2))
        error = f"Exit code {failed.group(1)}" + (f"\n{shown}" if shown else "")
    else:
        error = first_line(re.sub(r"^(?:Error: )+", "", output)) or "the tool call failed"
    return {"pair": pair_key(tool, args),
            "result": result_of("", tool_name(tool), cut_text(output), error)}


def _earlier_call(path: str, before: int, call_id: str) -> tuple[str, Any] | None:
    """The call `call_id` from the assistant message in the last `LOOKBACK_BYTES` before
    `before`, else None."""
    needle = call_id.encode("utf-8", "surrogateescape")
    try:
        with open(path, "rb") as handle:
            begin = max(0, before - LOOKBACK_BYTES)
            handle.seek(begin)
            data = handle.read(before - begin)
    except OSError:
        return None
    for line in reversed(data.splitlines()):
        if needle not in line or b'"tool_use"' not in line:
            continue
        message = _message(line)
        content = message.get("content") if message else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("id") == call_id:
                return str(block.get("name")), block.get("input")
    return None


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return None
    if not isinstance(entry, dict) or entry.get("type") != "message":
        return None
    message = entry.get("message")
    return message if isinstance(message, dict) else None


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


