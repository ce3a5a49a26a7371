"""The assistant's text between tool calls, and what each answer spent, read from Qwen Code's
chat file (`transcript_path`, `~/.qwen/projects/<project>/chats/<session>.jsonl`).

A line `{"type": "assistant", "uuid": ..., "model": ..., "message": {"role": "model", "parts":
[{"text": ...}, {"functionCall": ...}]}, "usageMetadata": {"promptTokenCount",
"candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount"}}` is one model answer:
what it said (parts without text are calls) and its usage (the prompt count holds the cached
tokens; thoughts are billed as output), counted once under its `uuid`
(`supervisor.hooks.usage`). The `ui_telemetry` lines repeat the same counts and are skipped, as
is everything else (the format is internal to Qwen).
"""

from typing import Any

from supervisor.hooks.transcript import new_entries
from supervisor.hooks.usage import Spent, spent, split_cached, token_count
from supervisor.protocol.bounded import loads


def read_chat(path: str, offset: int) -> tuple[list[str | Spent], int]:
    """(the assistant's texts and what its answers spent, in the whole lines after `offset`;
    the offset after them)."""
    return new_entries(path, offset, _entries)


def _entries(line: bytes) -> list[str | Spent]:
    if b'"assistant"' not in line:
        return []
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return []
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return []
    found: list[str | Spent] = []
    message = entry.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    if isinstance(parts, list):
        texts = [p["text"] for p in parts if isinstance(p, dict)
                 and isinstance(p.get("text"), str) and not p.get("thought") and p["text"].strip()]
        text = "\n".join(texts).strip()
        if text:
            found.append(text)
    usage, key = entry.get("usageMetadata"), entry.get("uuid")
    if isinstance(usage, dict) and "promptTokenCount" in usage and isinstance(key, str) and key:
        found.append(spent(key, entry.get("model"), _counts(usage)))
    return found


def _counts(usage: dict[str, Any]) -> dict[str, object]:
    raw = split_cached(usage["promptTokenCount"], usage.get("cachedContentTokenCount"))
    if "candidatesTokenCount" in usage:
        output = token_count(usage["candidatesTokenCount"])
        thoughts = token_count(usage.get("thoughtsTokenCount")) or 0
        raw["output_tokens"] = (output + thoughts if output is not None
                                else usage["candidatesTokenCount"])
    return raw
