"""The assistant's text between tool calls, and what each answer cost, read from Claude Code's
transcript.

Claude Code gives hooks no assistant text except `last_assistant_message` at Stop, yet the
engine's `consecutive_tool_calls` limit counts calls since the model last said something; and it
gives them no token counts at all. The transcript (`transcript_path`, one JSON object per line)
has both: the runtime reads it incrementally, from the offset it remembered, at each tool call.
An assistant line carries the API message's `usage` (`input_tokens` not read from the cache,
`output_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`) and its `model`; one
message is written as several lines (one per content block) with the same `message.id`, which is
the key it is counted once under (`supervisor.hooks.usage`). Lines of a subagent written into
the main transcript (`isSidechain`) are left to the subagent's own session, which reads its own
transcript. A line of model `<synthetic>` is Claude Code's own notice in the model's place (a
usage limit, an API error, "No response requested."), with no tokens: it is skipped, so a limit
notice twice is not the model repeating itself. The ids of the `tool_use` blocks of a message
are given with the message's id (`Issued`): the calls of one answer are one batch, which the
runtime gives a call whose PreToolUse comes after its line was written (docs/claude-code.md,
"Parallel calls"). The format is internal and changes between releases, so this reader is
tolerant: any line that is not a JSON object with an assistant message is skipped, and only
whole lines are consumed.
"""

from typing import Any

from supervisor.hooks.target import Issued
from supervisor.hooks.transcript import new_entries
from supervisor.hooks.usage import Spent, spent
from supervisor.protocol.bounded import loads

_COUNTS = {"input_tokens": "input_tokens", "output_tokens": "output_tokens",
           "cache_read_input_tokens": "cache_read_tokens",
           "cache_creation_input_tokens": "cache_write_tokens"}
"""Claude Code's names of the counts -> the `usage` event's."""


def read_transcript(path: str, offset: int) -> tuple[list[str | Spent | Issued], int]:
    """(the assistant's texts, what its answers spent and the calls they issued, in the whole
    lines after `offset`; the offset after them)."""
    return new_entries(path, offset, _entries)


def _entries(line: bytes) -> list[str | Spent | Issued]:
    if b'"assistant"' not in line:  # cheap: most lines are tool results and user turns
        return []
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply to be a message
        return []
    if not isinstance(entry, dict):
        return []
    message: Any = entry.get("message")
    if not isinstance(message, dict):
        return []
    if entry.get("type") != "assistant" and message.get("role") != "assistant":
        return []
    if message.get("model") == "<synthetic>":  # Claude Code's notice, not an answer
        return []
    found: list[str | Spent | Issued] = []
    content = message.get("content")
    text = _text(content)
    if text:
        found.append(text)
    calls = _tool_use_ids(content)
    if calls and isinstance(message.get("id"), str) and message["id"]:
        found.append({"issued": calls, "batch": message["id"]})
    usage = message.get("usage")
    if isinstance(usage, dict) and entry.get("isSidechain") is not True:
        key = message.get("id") or entry.get("requestId") or entry.get("uuid")
        raw = {ours: usage[theirs] for theirs, ours in _COUNTS.items() if theirs in usage}
        if isinstance(key, str) and key and raw:
            found.append(spent(key, message.get("model"), raw))
    return found


def _text(content: object) -> str | None:
    if isinstance(content, str):
        return content.strip() or None
    if not isinstance(content, list):
        return None
    parts = [block["text"] for block in content
             if isinstance(block, dict) and block.get("type") == "text"
             and isinstance(block.get("text"), str) and block["text"].strip()]
    return "\n".join(parts).strip() or None


def _tool_use_ids(content: object) -> list[str]:
    if not isinstance(content, list):
        return []
    return [block["id"] for block in content
            if isinstance(block, dict) and block.get("type") == "tool_use"
            and isinstance(block.get("id"), str) and block["id"]]
