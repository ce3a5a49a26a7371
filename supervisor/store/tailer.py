"""Read one growing JSONL file incrementally, from a byte offset, never raising on its content.

A tailer remembers where it stopped. Each `poll()` reads what was appended since, holds back a
half-written last line until its newline arrives, starts over when the file was truncated, and
reopens it when it was replaced (new inode). Lines over the size limit and lines that are not
valid events come back as `BadLine`s with their offsets; I/O problems (the file vanished) are
reported in the batch, not raised.
"""

import gc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from supervisor.protocol.bad_line import BadLine, LineKind
from supervisor.protocol.names import MAX_LINE_BYTES

if TYPE_CHECKING:
    from supervisor.protocol.models import Event
    from supervisor.store.voice import Voucher

_READ_CHUNK = 1024 * 1024


@dataclass(slots=True)
class TailBatch:
    """What one poll found. `reset` means earlier content is gone: forget what you had."""

    events: list["Event"] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    """Byte offset of each event's line, parallel to `events` (to `raw` for a `RawTailer`)."""
    raw: list[bytes] = field(default_factory=list)
    """The lines themselves, unparsed (a `RawTailer`'s batches)."""
    bad_lines: list[BadLine] = field(default_factory=list)
    reset: bool = False
    missing: bool = False
    """The file does not exist (yet, or any more)."""
    more: bool = False
    """The poll stopped at its byte budget; poll again for the rest."""

    def __bool__(self) -> bool:
        return bool(self.events or self.raw or self.bad_lines or self.reset)


class Tailer:
    """Incremental reader of one file of protocol lines."""

    def __init__(
        self, path: Path, kind: LineKind = "events", *, max_line_bytes: int = MAX_LINE_BYTES,
        start: int = 0, vouch: "Voucher | None" = None,
    ) -> None:
        """`start`: the offset of the first line to read (a line boundary, such as an earlier
        tailer's `offset`); a file shorter than that counts as truncated. `vouch`: checks the
        seal of the lines that speak in the supervisor's voice (`store.voice`)."""
        self.path = Path(path)
        self._vouch = vouch
        self.kind: LineKind = kind
        self.max_line_bytes = max_line_bytes
        self.offset = start
        """Offset up to which complete lines were consumed."""
        self._ino: int | None = None
        self._read_pos = start
        self._pending = bytearray()
        self._pending_start = 0
        self._skipping: int | None = None
        """Start offset of an oversized line whose end we are still looking for."""
        self._skip_head = b""
        self.bad_count = 0
        self._open_error: str | None = None
        from supervisor.protocol.codec import parse_line  # pydantic: at the first reader

        self._parse = parse_line
        """The codec is imported by the first tailer, not with the store: the dashboard's
        first screen is painted before any session is read (tests/test_tui_imports.py)."""

    @property
    def inode(self) -> int | None:
        """The inode of the file as last opened (None before the first poll, or when gone)."""
        return self._ino

    @property
    def read_position(self) -> int:
        """Offset up to which bytes were read (complete lines plus a held partial line)."""
        return self._read_pos

    def poll(self, max_bytes: int | None = None) -> TailBatch:
        """Read what was appended since the last poll (at most about `max_bytes`)."""
        batch = TailBatch()
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            batch.missing = True
            if self._ino is not None:
                # It was there and vanished: whatever appears under this name next is a new
                # file, even if the file system hands it the same inode number again.
                self._restart(batch)
                self._ino = None
            return batch
        except OSError as exc:
            reason = f"cannot open file: {exc.strerror}"
            if reason != self._open_error:  # once, not on every poll while it lasts
                batch.bad_lines.append(BadLine(reason, b"", self.offset))
            self._open_error = reason
            return batch
        self._open_error = None
        gc_was_enabled = gc.isenabled()
        # A first load keeps up to hundreds of thousands of new event objects alive; the cyclic
        # collector would re-scan them over and over (doubling the load time) though parsing
        # makes no cycles. It is paused for the poll and restored after.
        gc.disable()
        try:
            st = os.fstat(fd)
            read_pos = self._read_pos
            if (self._ino is not None and st.st_ino != self._ino) or st.st_size < read_pos:
                self._restart(batch)
                read_pos = 0
            self._ino = st.st_ino
            budget = max_bytes if max_bytes is not None else st.st_size
            while read_pos < st.st_size:
                if budget <= 0:
                    batch.more = True
                    break
                chunk = os.pread(fd, min(_READ_CHUNK, st.st_size - read_pos, budget), read_pos)
                if not chunk:
                    break
                budget -= len(chunk)
                self._feed(chunk, read_pos, batch)
                read_pos += len(chunk)
                self._read_pos = read_pos
        except OSError as exc:
            batch.bad_lines.append(BadLine(f"read failed: {exc.strerror}", b"", self.offset))
        finally:
            os.close(fd)
            if gc_was_enabled:
                gc.enable()
        self.bad_count += len(batch.bad_lines)
        return batch

    def _restart(self, batch: TailBatch) -> None:
        batch.reset = True
        if self._vouch is not None:
            self._vouch.restart()
        self.offset = 0
        self._read_pos = 0
        self._pending.clear()
        self._skipping = None
        self._skip_head = b""

    def _feed(self, chunk: bytes, chunk_pos: int, batch: TailBatch) -> None:
        """Split `chunk` (which starts at file offset `chunk_pos`) into lines.

        A line begun in an earlier chunk (held, or being skipped as oversized) is finished
        first; the complete lines after it are split in one go, which keeps the per-line cost
        near that of the parser itself.
        """
        start = 0
        if self._skipping is not None or self._pending:
            nl = chunk.find(b"\n")
            if nl < 0:
                if self._skipping is None:
                    self._hold(chunk, chunk_pos)
                return
            if self._skipping is not None:
                size = chunk_pos + nl + 1 - self._skipping
                batch.bad_lines.append(BadLine(f"line exceeds {self.max_line_bytes} bytes",
                                               self._skip_head, self._skipping, size))
                self._skipping = None
                self._skip_head = b""
            else:
                self._pending += chunk[:nl]
                line = bytes(self._pending)
                self._pending.clear()
                self._emit(line, self._pending_start, batch)
            self.offset = chunk_pos + nl + 1
            start = nl + 1
        last = chunk.rfind(b"\n", start)
        if last >= 0:
            pos = chunk_pos + start
            emit = self._emit
            for line in chunk[start:last].split(b"\n"):
                emit(line, pos, batch)
                pos += len(line) + 1
            self.offset = chunk_pos + last + 1
            start = last + 1
        if start < len(chunk):
            self._hold(chunk[start:], chunk_pos + start)

    def _hold(self, tail: bytes, tail_pos: int) -> None:
        """Keep a line without its newline yet, unless it is already too long to be valid."""
        if not self._pending:
            self._pending_start = tail_pos
        self._pending += tail
        if len(self._pending) > self.max_line_bytes:
            self._skipping = self._pending_start
            self._skip_head = bytes(self._pending[:65536])
            self._pending.clear()

    def _emit(self, line: bytes, line_start: int, batch: TailBatch) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or line.isspace():
            return
        result = self._parse(line, self.kind, max_bytes=self.max_line_bytes)
        if type(result) is BadLine:
            batch.bad_lines.append(BadLine(result.reason, result.raw, line_start, result.size))
        else:
            if self._vouch is not None:
                result = self._vouch.check(result, line)  # type: ignore[arg-type]
            batch.events.append(result)  # type: ignore[arg-type]
            batch.offsets.append(line_start)


class RawTailer(Tailer):
    """A tailer that hands out complete lines as bytes, unparsed (in `raw`, with `offsets`);
    only oversized lines come back as `BadLine`s. For a relay, which ships lines as they are
    and leaves parsing to whoever reads them."""

    def _emit(self, line: bytes, line_start: int, batch: TailBatch) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or line.isspace():
            return
        batch.raw.append(line)
        batch.offsets.append(line_start)
