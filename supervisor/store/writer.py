"""Append whole protocol lines to a session file, assigning `seq`, safe across processes.

Several processes may append to one file at once (parallel hook invocations of one Claude Code
session). Each append takes an exclusive `flock` on the file, learns the last `seq` (from its own
cache when the file size is what it last wrote, else from the file's tail, never by reading the
whole file), writes the new lines with one `write`, and releases the lock. A failed write (full
disk) is cut back to the previous size, so no half line stays behind and nothing is lost that the
caller was not told about.
"""

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, Protocol

from supervisor.protocol.bounded import loads
from supervisor.protocol.lines import as_dict, fit_line
from supervisor.protocol.names import (
    CONTROL_FILE,
    EVENTS_FILE,
    MAX_INT,
    MAX_LINE_BYTES,
    PROTOCOL_VERSION,
)
from supervisor.store import waits
from supervisor.store.errors import StoreError
from supervisor.store.paths import ensure_private_dir, ensure_session_dir

_TAIL_CHUNK = 64 * 1024
_TAIL_CARRY_MAX = 2 * 1024 * 1024
"""A last line longer than this (with no newline in it) cannot carry a valid `seq`: the backward
search skips it instead of holding it in memory."""
_PREVIOUS_SCAN = 64 * 1024
"""How far before the last numbered line the writer looks for the one it should continue."""
_COMMON = frozenset({"v", "seq", "ts"})
_SEAL_ROOM = 128
"""Bytes kept free in a line that is sealed or marked after it is encoded (`Sealer`)."""


class Sealer(Protocol):
    """Seals some lines as they are written and marks the others (`store.voice.LineSealer`:
    the guard's lines that speak in the supervisor's voice are sealed, its others marked)."""

    def wants(self, line: Mapping[str, Any]) -> Literal["seal", "mark"] | None: ...

    def seal(self, data: bytes) -> tuple[bytes, str | None]: ...

    def mark(self, data: bytes) -> bytes: ...


class LineWriter:
    """Appends events to one file; `seq` strictly increasing across every writer of the file."""

    def __init__(self, path: Path, *, clock: Any = time.time, sealer: Sealer | None = None
                 ) -> None:
        """`sealer`: seals the lines it wants, and marks the others, once their `seq` is known
        (so the seal or mark covers it)."""
        self.path = Path(path)
        self._clock = clock
        self._sealer = sealer
        self._fd: int | None = None
        self._ino: int | None = None
        self._known_size = -1
        self._last_seq = 0
        self._thread_lock = threading.Lock()
        """flock excludes other open files; this excludes other threads sharing this writer."""

    @property
    def size(self) -> int | None:
        """The file's size as this writer's last append left it (None: not known, before one
        or after a failed one); another process may have appended since."""
        return self._known_size if self._known_size >= 0 else None

    def append(self, event: Mapping[str, Any] | Any) -> dict[str, Any]:
        """Append one event (dict or model); return it as written, with `v`, `seq` and `ts`
        (and cut to the protocol's limits, if it had to be: see `protocol.lines.fit_line`)."""
        return self.append_many([event])[0]

    def append_many(self, events: Iterable[Mapping[str, Any] | Any]) -> list[dict[str, Any]]:
        """Append several events under one lock, in order, with consecutive `seq` numbers."""
        items = [as_dict(e) for e in events]
        if not items:
            return []
        with self._thread_lock:
            return self._append_locked(items)

    def _append_locked(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        fd = self._lock(self._open())
        try:
            fd, size = self._reopen_if_replaced(fd)
            if size != self._known_size:
                self._last_seq = _last_seq(fd, size)
            # a file of the size this writer left ends with its newline: no read to know it
            prefix = (b"\n" if size and size != self._known_size
                      and _last_byte(fd, size) != b"\n" else b"")
            now = self._clock()
            chunks = [prefix]
            for index, item in enumerate(items):
                self._last_seq += 1
                line = {"v": PROTOCOL_VERSION, "seq": self._last_seq, "ts": item.get("ts") or now}
                line.update((k, v) for k, v in item.items() if k not in _COMMON)
                sealer = self._sealer
                how = sealer.wants(line) if sealer is not None else None
                try:
                    if sealer is None or how is None:
                        data, items[index] = fit_line(line)
                    elif how == "seal":
                        data, fitted = fit_line(line, max_bytes=MAX_LINE_BYTES - _SEAL_ROOM)
                        data, seal = sealer.seal(data)
                        items[index] = {**fitted, "seal": seal} if seal else fitted
                    else:  # (returned without its mark: no reader of the dict needs it)
                        data, items[index] = fit_line(line, max_bytes=MAX_LINE_BYTES - _SEAL_ROOM)
                        data = sealer.mark(data)
                except (TypeError, ValueError) as exc:
                    self._known_size = -1
                    raise StoreError(f"event cannot be written as JSON: {exc}") from exc
                chunks.append(data)
            data = b"".join(chunks)
            self._write_all(fd, data, size)
            self._known_size = size + len(data)
        finally:
            if self._fd is not None:
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        return items

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "LineWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> int:
        if self._fd is None:
            try:
                # never through a link: one planted in the store would have the supervisor
                # append to a file outside it (docs/security.md)
                self._fd = os.open(self.path,
                                   os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            except OSError as exc:
                raise StoreError(f"cannot open {self.path}: {exc.strerror}") from exc
            self._ino = os.fstat(self._fd).st_ino
            self._known_size = -1
        return self._fd

    def _lock(self, fd: int) -> int:
        try:
            waits.flock(fd, str(self.path))
        except OSError as exc:
            raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from exc
        return fd

    def _reopen_if_replaced(self, fd: int) -> tuple[int, int]:
        """If the file was deleted or replaced since we opened it, append to the one now there.
        Returns the locked descriptor and the file's size, from the `stat` that told the file
        is ours (under our lock no writer changes it: no `fstat` of its own per append).

        Checked again after each reopen: another process may replace it in between.
        """
        for _ in range(8):
            try:
                st: os.stat_result | None = os.stat(self.path)
            except FileNotFoundError:
                st = None
            current = st.st_ino if st is not None else None
            if st is not None and current == self._ino:
                return fd, st.st_size
            fcntl.flock(fd, fcntl.LOCK_UN)
            self.close()
            if current is None:
                ensure_private_dir(self.path.parent)
            fd = self._lock(self._open())
        raise StoreError(f"{self.path} keeps being replaced; not written")

    def _write_all(self, fd: int, data: bytes, size_before: int) -> None:
        view = memoryview(data)
        try:
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size_before)
            self._known_size = -1
            raise StoreError(f"cannot write to {self.path}: {exc.strerror}") from exc


def _last_byte(fd: int, size: int) -> bytes:
    return os.pread(fd, 1, size - 1)


def _last_seq(fd: int, size: int) -> int:
    """The `seq` to continue from, reading the file backwards in chunks: the last well-formed
    line's, when it continues the one before it (writers always number consecutively). A
    corrupt or foreign line that jumps ahead (`seq` 99999 after 12) is not trusted: numbering
    goes on from the line before it."""
    found: list[int] = []
    for seq in _seqs_backwards(fd, size, _PREVIOUS_SCAN):
        found.append(seq)
        if len(found) == 2:
            last, before = found
            return last if last == before + 1 else before
    return found[0] if found else 0


def _seqs_backwards(fd: int, size: int, after_first: int) -> Iterator[int]:
    """The `seq` of each line that carries a valid one, last line first; once one is found,
    at most `after_first` more bytes are read."""
    pos = size
    carry = b""
    first_at: int | None = None
    while pos > 0 and (first_at is None or first_at - pos < after_first):
        step = min(_TAIL_CHUNK, pos)
        pos -= step
        block = os.pread(fd, step, pos) + carry
        lines = block.split(b"\n")
        carry = lines[0] if pos > 0 else b""
        if len(carry) > _TAIL_CARRY_MAX:
            carry = b"\xff"  # part of an oversized line: no valid seq there, keep no bytes
        candidates = lines[1:] if pos > 0 else lines
        for line in reversed(candidates):
            seq = _seq_of(line)
            if seq is not None:
                first_at = pos if first_at is None else first_at
                yield seq


def _seq_of(line: bytes) -> int | None:
    """The line's `seq` if it is a valid one (a hostile line can neither crash the writer nor
    push every later `seq` out of the protocol's bounds)."""
    if not line.strip():
        return None
    try:
        value = loads(line)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    seq, ts, kind = value.get("seq"), value.get("ts"), value.get("type")
    valid = (isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq < MAX_INT
             and value.get("v") == PROTOCOL_VERSION and isinstance(kind, str) and kind
             and isinstance(ts, int | float) and not isinstance(ts, bool))
    return seq if valid else None


def event_writer(root: Path, session_id: str, sealer: Sealer | None = None) -> LineWriter:
    """A writer for a session's `events.jsonl`, creating the session directory if needed
    (`sealer`: see `LineWriter`)."""
    return LineWriter(ensure_session_dir(root, session_id) / EVENTS_FILE, sealer=sealer)


def control_writer(root: Path, session_id: str) -> LineWriter:
    """A writer for a session's `control.jsonl` (operators only)."""
    return LineWriter(ensure_session_dir(root, session_id) / CONTROL_FILE)
