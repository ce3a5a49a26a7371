"""The assistant's text between tool calls, and the tokens spent, read from Codex's rollout
(`transcript_path`).

A rollout line `{"type": "response_item", "payload": {"type": "message", "role": "assistant",
"content": [{"type": "output_text", "text": ...}]}}` is what the model said. `{"type":
"token_usage_record", "payload": {"response_id": ..., "usage": {...}}}` is what one model
response spent (`input_tokens` with the cached ones inside, `cached_input_tokens`,
`cache_write_input_tokens`, `output_tokens`, reasoning included), written as soon as the
response is in, before its tool calls run, so a budget holds the call the response asked for;
it is counted once under its `response_id` (`supervisor.hooks.usage`). (Codex's `token_count`
events carry running totals too, but only after the tools ran: they are not read.) The model is
named by `{"type": "turn_context", "payload": {"model": ...}}` before the turn's answers.
Everything else is skipped (the format is internal to Codex).
"""

from typing import Any

from supervisor.hooks.transcript import new_entries
from supervisor.hooks.usage import Spent, UsedModel, spent, split_cached, token_count
from supervisor.protocol.bounded import loads

Entry = str | Spent | UsedModel


def read_rollout(path: str, offset: int) -> tuple[list[Entry], int]:
    """(the assistant's texts, what each response spent and the models named, in the whole
    lines after `offset`; the offset after them)."""
    return new_entries(path, offset, _entries)


def _entries(line: bytes) -> list[Entry]:
    if not ((b'"response_item"' in line and b'"assistant"' in line)
            or b'"token_usage_record"' in line or b'"turn_context"' in line):
        return []
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return []
    payload: Any = entry.get("payload") if isinstance(entry, dict) else None
    if not isinstance(payload, dict):
        return []
    kind = entry.get("type")
    if kind == "response_item":
        text = _assistant_text(payload)
        return [text] if text else []
    if kind == "turn_context":
        model = payload.get("model")
        return [{"used_model": model[:200]}] if isinstance(model, str) and model else []
    if kind == "token_usage_record":
        usage, key = payload.get("usage"), payload.get("response_id")
        if isinstance(usage, dict) and "input_tokens" in usage and isinstance(key, str) and key:
            return [spent(key, None, _counts(usage))]
    return []


def _counts(usage: dict[str, Any]) -> dict[str, object]:
    """Codex's counts in the `usage` event's convention: the cached input and the input
    written to the cache (both counted inside `input_tokens`) apart."""
    raw = split_cached(usage["input_tokens"], usage.get("cached_input_tokens"))
    if "output_tokens" in usage:
        raw["output_tokens"] = usage["output_tokens"]
    written = token_count(usage.get("cache_write_input_tokens"))
    fresh = raw["input_tokens"]
    if written and isinstance(fresh, int):
        written = min(written, fresh)
        raw["cache_write_tokens"], raw["input_tokens"] = written, fresh - written
    return raw


def _assistant_text(payload: dict[str, Any]) -> str | None:
    if payload.get("type") != "message" or payload.get("role") != "assistant":
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    parts = [part["text"] for part in content
             if isinstance(part, dict) and part.get("type") == "output_text"
             and isinstance(part.get("text"), str) and part["text"].strip()]
    return "\n".join(parts).strip() or None
