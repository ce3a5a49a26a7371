"""The assistant's text between tool calls, and what each answer spent, read from Qwen Code's
chat file (`transcript_path`, `~/.qwen/projects/<project>/chats/<session>.jsonl`).

A line `{"type": "assistant", "uuid": ..., "model": ..., "message": {"role": "model", "parts":
[{"text": ...}, {"functionCall": ...}]}, "usageMetadata": {"promptTokenCount",
"candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount"}}` is one model answer:
what it said (parts without text are calls) and its usage (the prompt count holds the cached
tokens; thoughts are billed as output), counted once under its `uuid`
(`supervisor.hooks.usage`). Its `functionCall` parts carry the calls' ids (the hooks'
`tool_call_id`): given with the answer's `uuid` (`Issued`), so the runtime knows which calls
an answer read asked for (a call's batch; a PreToolUse waiting for the answer of the call
before it, `Target.call_waits_s`). The `ui_telemetry` lines repeat the same counts and are
skipped, as is everything else (the format is internal to Qwen).
"""

from typing import Any

from supervisor.hooks.target import Issued
from supervisor.hooks.transcript import new_entries
from supervisor.hooks.usage import Spent, spent, split_cached, token_count
from supervisor.protocol.bounded import loads


def read_chat(path: str, offset: int) -> tuple[list[str | Spent | Issued], int]:
    """(the assistant's texts, what its answers spent and the calls they issued, in the whole
    lines after `offset`; the offset after them)."""
    return new_entries(path, offset, _entries)


def _entries(line: bytes) -> list[str | Spent | Issued]:
    if b'"assistant"' not in line:
        return []
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return []
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return []
    found: list[str | Spent | Issued] = []
    message = entry.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    if isinstance(parts, list):
        texts = [p["text"] for p in parts if isinstance(p, dict)
                 and isinstance(p.get("text"), str) and not p.get("thought") and p["text"].strip()]
        text = "\n".join(texts).strip()
        if text:
            found.append(text)
    key = entry.get("uuid")
    calls = _call_ids(parts)
    if calls and isinstance(key, str) and key:
        found.append({"issued": calls, "batch": key})
    usage = entry.get("usageMetadata")
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


def _call_ids(parts: object) -> list[str]:
    if not isinstance(parts, list):
        return []
    calls = [p["functionCall"] for p in parts
             if isinstance(p, dict) and isinstance(p.get("functionCall"), dict)]
    return [c["id"] for c in calls if isinstance(c.get("id"), str) and c["id"]]
