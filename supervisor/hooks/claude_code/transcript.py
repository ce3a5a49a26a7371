"""The assistant's text between tool calls, read from Claude Code's transcript.

Claude Code gives hooks no assistant text except `last_assistant_message` at Stop, yet the
engine's `consecutive_tool_calls` limit counts calls since the model last said something. The
transcript (`transcript_path`, one JSON object per line) has that text: the runtime reads it
incrementally, from the offset it remembered, at each tool call. Its format is internal and
changes between releases, so this reader is tolerant: any line that is not a JSON object with an
assistant message of text blocks is skipped, and only whole lines are consumed.
"""

from typing import Any

from supervisor.hooks.transcript import new_texts
from supervisor.protocol.bounded import loads


def assistant_texts(path: str, offset: int) -> tuple[list[str], int]:
    """(the assistant's texts in the whole lines after `offset`, the offset after them)."""
    return new_texts(path, offset, _assistant_text)


def _assistant_text(line: bytes) -> str | None:
    if b'"assistant"' not in line:  # cheap: most lines are tool results and user turns
        return None
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply to be a message
        return None
    if not isinstance(entry, dict):
        return None
    message: Any = entry.get("message")
    if not isinstance(message, dict):
        return None
    if entry.get("type") != "assistant" and message.get("role") != "assistant":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return content.strip() or None
    if not isinstance(content, list):
        return None
    parts = [block["text"] for block in content
             if isinstance(block, dict) and block.get("type") == "text"
             and isinstance(block.get("text"), str) and block["text"].strip()]
    return "\n".join(parts).strip() or None
