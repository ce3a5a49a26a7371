"""Read an agent's JSONL transcript incrementally: the platform's half of a transcript reader.

Hooks are not given the assistant's text between tool calls, yet the engine's
`consecutive_tool_calls` limit counts calls since the model last said something; the agents'
transcripts have that text. The runtime remembers how far it read and, at each call, a target's
reader (`Target.transcript`) returns the texts in the whole lines written since. What a line
means is the target's (`text_of`); reading stays here: bounded per call, whole lines only (a
partial last line waits for its end). A file shortened or rewritten under the reader is noticed
by its `mark` (its inode and the bytes just before the offset): the runtime then goes on from its
end, so nothing in it is counted twice. Transcript formats are internal to the agents and change
between releases, so a line a target does not understand is skipped.
"""

import os
from collections.abc import Callable, Iterable
from typing import TypeVar

READ_LIMIT_BYTES = 16 * 1024 * 1024
"""At most this much of the transcript is read per call (the rest at the next call)."""
MARK_BYTES = 64
"""Bytes before the offset that identify what was read (`mark`)."""
T = TypeVar("T")


def new_texts(
    path: str, offset: int, text_of: Callable[[bytes], T | None]
) -> tuple[list[T], int]:
    """(the texts `text_of` finds in the whole lines after `offset`, the offset after them);
    a missing or unreadable file gives `([], offset)`."""
    return new_entries(path, offset, lambda line: _one(text_of(line)))


def new_entries(
    path: str, offset: int, entries_of: Callable[[bytes], Iterable[T]]
) -> tuple[list[T], int]:
    """`new_texts` for readers that find several things in one line (a text and its usage)."""
    try:  # (not `open()`: its buffered layers cost a seek, a second `fstat` and an `ioctl`)
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return [], offset
    try:
        size = os.fstat(fd).st_size
        if size < offset:  # shortened since `mark` was checked: start over
            offset = 0
        data = _read_at(fd, min(size - offset, READ_LIMIT_BYTES), offset)
    except OSError:
        return [], offset
    finally:
        os.close(fd)
    end = data.rfind(b"\n") + 1
    found: list[T] = []
    for line in data[:end].splitlines():
        found.extend(entries_of(line))
    return found, offset + end


def _read_at(fd: int, size: int, offset: int) -> bytes:
    """`size` bytes from `offset` (fewer at the file's end)."""
    chunks = []
    while size > 0:
        chunk = os.pread(fd, size, offset)
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _one(entry: T | None) -> tuple[T, ...]:
    return (entry,) if entry else ()


def mark(path: str, offset: int) -> str | None:
    """What identifies the first `offset` bytes of the file as read: its inode and the bytes
    just before `offset`; None when the file is missing or shorter (shortened, rewritten)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        if stat.st_size < offset:
            return None
        start = max(offset - MARK_BYTES, 0)
        return f"{stat.st_ino}:{os.pread(fd, offset - start, start).hex()}"
    except OSError:
        return None
    finally:
        os.close(fd)
