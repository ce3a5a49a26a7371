"""The assistant's text between tool calls, read from Codex's rollout (`transcript_path`).

A rollout line `{"type": "response_item", "payload": {"type": "message", "role": "assistant",
"content": [{"type": "output_text", "text": ...}]}}` is what the model said; everything else is
skipped (the format is internal to Codex).
"""

from typing import Any

from supervisor.hooks.transcript import new_texts
from supervisor.protocol.bounded import loads


def assistant_texts(path: str, offset: int) -> tuple[list[str], int]:
    """(the assistant's texts in the whole lines after `offset`, the offset after them)."""
    return new_texts(path, offset, _assistant_text)


def _assistant_text(line: bytes) -> str | None:
    if b'"assistant"' not in line or b'"response_item"' not in line:
        return None
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return None
    payload: Any = entry.get("payload") if isinstance(entry, dict) else None
    if entry.get("type") != "response_item" or not isinstance(payload, dict):
        return None
    if payload.get("type") != "message" or payload.get("role") != "assistant":
        return None
    content = payload.get("content")
    if not isinstance(content, list):
        return None
    parts = [part["text"] for part in content
             if isinstance(part, dict) and part.get("type") == "output_text"
             and isinstance(part.get("text"), str) and part["text"].strip()]
    return "\n".join(parts).strip() or None
