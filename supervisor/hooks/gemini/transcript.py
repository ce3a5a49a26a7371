"""The assistant's text between tool calls, and what each answer spent, read from Gemini CLI's
transcript (`transcript_path`, `~/.gemini/tmp/<project>/chats/session-*.jsonl`).

A line `{"type": "gemini", "id": ..., "content": TEXT, "tokens": {"input", "output", "cached",
"thoughts", "tool", "total"}, "model": ...}` is one model answer: its text (empty for a turn of
tool calls only) and its usage. Gemini CLI writes the same answer again (same `id`) once its tool
calls ran, so the answer is counted once under its `id` (`supervisor.hooks.usage`). `input`
holds the `cached` tokens; `thoughts` are billed as output and `tool` (tool-use prompt tokens)
as input. Everything else (`$set` lines, user turns) is skipped (the format is internal to
Gemini CLI).
"""

from typing import Any

from supervisor.hooks.transcript import new_entries
from supervisor.hooks.usage import Spent, spent, split_cached, token_count
from supervisor.protocol.bounded import loads


def read_transcript(path: str, offset: int) -> tuple[list[str | Spent], int]:
    """(the assistant's texts and what its answers spent, in the whole lines after `offset`;
    the offset after them)."""
    return new_entries(path, offset, _entries)


def _entries(line: bytes) -> list[str | Spent]:
    if b'"gemini"' not in line:
        return []
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return []
    if not isinstance(entry, dict) or entry.get("type") != "gemini":
        return []
    found: list[str | Spent] = []
    content = entry.get("content")
    if isinstance(content, str) and content.strip():
        found.append(content.strip())
    tokens, key = entry.get("tokens"), entry.get("id")
    if isinstance(tokens, dict) and "input" in tokens and isinstance(key, str) and key:
        found.append(spent(key, entry.get("model"), _counts(tokens)))
    return found


def _counts(tokens: dict[str, Any]) -> dict[str, object]:
    raw = split_cached(tokens["input"], tokens.get("cached"))
    tool = token_count(tokens.get("tool"))
    if tool and isinstance(raw["input_tokens"], int):
        raw["input_tokens"] += tool
    if "output" in tokens:
        thoughts = token_count(tokens.get("thoughts")) or 0
        output = token_count(tokens["output"])
        raw["output_tokens"] = output + thoughts if output is not None else tokens["output"]
    return raw
