"""The assistant's text between tool calls, read from Qwen Code's chat file (`transcript_path`,
`~/.qwen/projects/<project>/chats/<session>.jsonl`): a line `{"type": "assistant", "message":
{"role": "model", "parts": [{"text": ...}, {"functionCall": ...}]}}` holds what the model said
(parts without text are calls); everything else is skipped (the format is internal to Qwen)."""

from supervisor.hooks.transcript import new_texts
from supervisor.protocol.bounded import loads


def assistant_texts(path: str, offset: int) -> tuple[list[str], int]:
    """(the assistant's texts in the whole lines after `offset`, the offset after them)."""
    return new_texts(path, offset, _assistant_text)


def _assistant_text(line: bytes) -> str | None:
    if b'"assistant"' not in line:
        return None
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return None
    if not isinstance(entry, dict) or entry.get("type") != "assistant":
        return None
    message = entry.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    if not isinstance(parts, list):
        return None
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
             and not p.get("thought") and p["text"].strip()]
    return "\n".join(texts).strip() or None
