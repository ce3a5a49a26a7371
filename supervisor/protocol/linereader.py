"""Read a file of lines with bounded memory, stdlib only.

`bounded_lines` yields every line of a binary stream with its offset, holding at most
`max_bytes` of any one line: an oversized line comes back as its first bytes and its true size,
so an 800 MB line costs a few MiB to skip instead of 1.6 GB to hold (the live tailer in
`supervisor.store.tailer` does the same incrementally).
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from supervisor.protocol.names import MAX_LINE_BYTES

_CHUNK = 1024 * 1024
_HEAD = 64 * 1024
"""Bytes kept of an oversized line (for the bad line's preview)."""


@dataclass(frozen=True, slots=True)
class RawLine:
    """One line without its newline: `data` is all of it, or only its head when `oversized`."""

    offset: int
    data: bytes
    size: int
    """The line's whole size (newline excluded)."""

    @property
    def oversized(self) -> bool:
        return len(self.data) < self.size


def bounded_lines(stream: BinaryIO, max_bytes: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """Every line of `stream` (a final line without a newline included), blank ones skipped."""
    offset = 0  # of the line being assembled
    held = bytearray()
    skipped = 0  # bytes of an oversized line dropped so far (0: not skipping)
    head = b""
    while chunk := stream.read(_CHUNK):
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if skipped:
                skipped += len(piece)
            else:
                held += piece
                if len(held) > max_bytes:
                    head, skipped = bytes(held[:_HEAD]), len(held)
                    held.clear()
            if nl < 0:
                break
            yield from _finish(offset, held, skipped, head)
            offset += (skipped or len(held)) + 1
            held.clear()
            skipped, head = 0, b""
            start = nl + 1
    yield from _finish(offset, held, skipped, head)


def _finish(offset: int, held: bytearray, skipped: int, head: bytes) -> Iterator[RawLine]:
    if skipped:
        yield RawLine(offset, head, skipped)
    elif held.strip():
        data = bytes(held)
        yield RawLine(offset, data, len(data))
