"""The assistant's text between tool calls, read from Copilot CLI's session events
(`~/.copilot/session-state/<session>/events.jsonl`; agentStop names it as `transcriptPath`):
a line `{"type": "assistant.message", "data": {"content": TEXT, ...}}` is what the model said
(an empty content is a turn of tool calls only); everything else is skipped (the format is
Copilot's own)."""

import functools
import os
from pathlib import Path

from supervisor.hooks.transcript import new_texts
from supervisor.protocol.bounded import loads


def events_path(session_id: str) -> str:
    """Where Copilot keeps a session's events: under `$COPILOT_HOME`, else `~/.copilot`."""
    return _events_path(os.environ.get("COPILOT_HOME"), os.environ.get("HOME"), session_id)


@functools.lru_cache(maxsize=256)
def _events_path(base: str | None, home: str | None, session_id: str) -> str:
    """`events_path` for these settings, joined once: it is asked at every hook call of the
    session, and the joins and `~` took half of reading a payload in the resident server."""
    folder = Path(base).expanduser() if base else Path(os.path.expanduser("~")) / ".copilot"
    return str(folder / "session-state" / session_id / "events.jsonl")


def assistant_texts(path: str, offset: int) -> tuple[list[str], int]:
    """(the assistant's texts in the whole lines after `offset`, the offset after them)."""
    return new_texts(path, offset, _assistant_text)


def _assistant_text(line: bytes) -> str | None:
    if b'"assistant.message"' not in line:
        return None
    try:
        entry = loads(line)
    except ValueError:  # not JSON, or nested too deeply
        return None
    if not isinstance(entry, dict) or entry.get("type") != "assistant.message":
        return None
    data = entry.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return content.strip() or None if isinstance(content, str) else None
