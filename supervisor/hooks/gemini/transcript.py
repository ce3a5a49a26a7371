"""The assistant's text between tool calls, read from Gemini CLI's transcript (`transcript_path`,
`~/.gemini/tmp/<project>/chats/session-*.jsonl`): a line `{"type": "gemini", "content": TEXT}`
is what the model said (an empty content is a turn of tool calls only); everything else is
skipped (the format is internal to Gemini CLI)."""


from supervisor.hooks.transcript import new_texts
from supervisor.protocol.bounded import loads


def assistant_texts(path: str, offset: int) -> tuple[list[str], int]:
    """(the assistant's texts in the whole lines after `offset`, the offset after them)."""
    return new_texts(path, offset, _assistant_text)


def _assistant_text(line: bytes) -> str | None:
    if b'"gemini"' not in line:
        return None
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return None
    if not isinstance(entry, dict) or entry.get("type") != "gemini":
        return None
    content = entry.get("content")
    return content.strip() or None if isinstance(content, str) else None
