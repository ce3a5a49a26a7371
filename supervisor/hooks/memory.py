"""What the hook platform remembers about a session between calls, beside the guard's state.

`<session>/hook.json`, read and written under `<session>/hook.lock` (an `flock`; several hook
calls of one session run at once): where the runtime stopped reading the agent's transcript,
the last assistant text it recorded (Stop's `last_assistant_message` repeats the transcript's),
and the recent calls that went through PreToolUse (so PostToolBatch records only the others,
never a call twice). Bounded: the call ids kept are the last `CALLS_KEPT`.
"""

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from supervisor.protocol.bounded import loads

MEMORY_FILE = "hook.json"
LOCK_FILE = "hook.lock"
CALLS_KEPT = 512


@dataclass(slots=True)
class Memory:
    transcript: str | None = None
    """The transcript read so far (a different path starts over)."""
    offset: int = 0
    """Bytes of `transcript` already read."""
    last_text: str | None = None
    """The last assistant text recorded (a hash), so the same text is not recorded twice."""
    seen: list[str] = field(default_factory=list)
    """Call ids that went through PreToolUse, oldest first."""
    fresh: bool = True
    """True until the memory was saved once: the session is new to the hook platform."""

    def saw(self, call_id: str) -> bool:
        return call_id in self.seen

    def see(self, call_id: str) -> None:
        if call_id not in self.seen:
            self.seen.append(call_id)
            del self.seen[:-CALLS_KEPT]


@contextlib.contextmanager
def remembered(session_dir: Path) -> Iterator[Memory]:
    """The session's memory, held under its lock; saved (atomically) when the block ends
    without an exception."""
    fd = os.open(session_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        memory = _load(session_dir / MEMORY_FILE)
        before = _dump(memory)
        yield memory
        memory.fresh = False
        after = _dump(memory)
        if after != before:
            _save(session_dir / MEMORY_FILE, after)
    finally:
        os.close(fd)  # releases the lock


def _load(path: Path) -> Memory:
    try:
        data = loads(path.read_bytes())
    except (OSError, ValueError):  # too deep included
        return Memory()  # none yet, or unreadable: start over (the worst is one text twice)
    if not isinstance(data, dict):
        return Memory()
    seen = data.get("seen")
    offset = data.get("offset")
    return Memory(
        transcript=data.get("transcript") if isinstance(data.get("transcript"), str) else None,
        offset=offset if isinstance(offset, int) and offset >= 0 else 0,
        last_text=data.get("last_text") if isinstance(data.get("last_text"), str) else None,
        seen=[s for s in seen if isinstance(s, str)][-CALLS_KEPT:] if isinstance(seen, list)
        else [],
        fresh=False,
    )


def _dump(memory: Memory) -> str:
    return json.dumps({"transcript": memory.transcript, "offset": memory.offset,
                       "last_text": memory.last_text, "seen": memory.seen}, sort_keys=True)


def _save(path: Path, text: str) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temp, 0o600)
    os.replace(temp, path)
