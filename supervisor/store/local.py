"""The local store: one directory per session under a root, on this machine's disk (the default).

The store interface (`supervisor.store.base`) over the files the agent side writes: a reader is
a `Tailer`, the follower is the `Follower` (one watchfiles watcher for the root), decisions are
appended by a `LineWriter`, and a cursor is the byte offset of a line in its file. Paths are
built here and in `paths`, nowhere above the store.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.protocol.bad_line import LineKind
from supervisor.protocol.bounded import loads
from supervisor.protocol.names import CONTROL_FILE, EVENTS_FILE
from supervisor.store.base import Cursor, SessionBatch, Store
from supervisor.store.errors import StoreError, UnsafeStore
from supervisor.store.paths import (
    SessionFiles,
    existing_session_dir,
    list_session_ids,
    require_private,
    session_dir,
    session_files,
    sessions_dir,
    validate_session_id,
)
from supervisor.store.recordings import is_recording, refuse_writes
from supervisor.store.tailer import TailBatch, Tailer

if TYPE_CHECKING:
    from supervisor.store.summary import SessionSummary

_FILE_OF: dict[str, str] = {"events": EVENTS_FILE, "control": CONTROL_FILE}
POLL_INTERVAL_S = 0.05
"""How often a waiting reader looks at its file again."""
_READ = 64 * 1024
_MAX_LINE = 1024 * 1024 + 1


class LocalStore(Store):
    """Sessions under `root/sessions/<id>/` (see docs/protocol.md for the layout)."""

    noun = "root"

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._summary_key: bytes | None = None
        if self.root.is_dir() and not is_recording(self.root):
            # another user's root: never read its "sessions" nor write decisions into it
            require_private(self.root, "store root")
            if sessions_dir(self.root).is_dir():
                require_private(sessions_dir(self.root))

    def describe(self) -> str:
        """The root wherever it is read from: absolute, `~/...` under the home directory. Never
        relative to the working directory: a header (the dashboard's, the web page's) or a
        message read in another folder, or a screenshot, would name another root."""
        path = self.root.absolute()
        if path.is_relative_to(Path.home()):
            return "~/" + str(path.relative_to(Path.home()))
        return str(path)

    def check_session_id(self, session_id: str) -> str:
        return validate_session_id(session_id)

    def session_ids(self) -> list[str]:
        return list_session_ids(self.root)

    def exists(self, session_id: str) -> bool:
        return session_dir(self.root, session_id).is_dir()

    def require(self, session_id: str) -> str:
        existing_session_dir(self.root, session_id)
        return session_id

    def _path(self, session_id: str, kind: LineKind) -> Path:
        return session_dir(self.root, session_id) / _FILE_OF[kind]

    def reader(self, session_id: str, kind: LineKind = "events",
               start: Cursor | None = None) -> LocalReader:
        from supervisor.store.voice import voucher

        vouch = voucher(self.root, session_id, start or 0) if kind == "events" else None
        return LocalReader(session_id, kind, Tailer(self._path(session_id, kind), kind,
                                                    start=start or 0, vouch=vouch))

    def follower(self, *, chunk_bytes: int | None = None) -> Any:
        from supervisor.store.follower import DEFAULT_POLL_BUDGET, Follower

        return Follower(self.root, poll_budget=chunk_bytes or DEFAULT_POLL_BUDGET)

    def log(self, session_id: str) -> LocalLog:
        return LocalLog(self._path(session_id, "events"))

    def end_cursor(self, session_id: str) -> Cursor:
        """The offset just past the last complete line of the event log."""
        try:
            with open(self._path(session_id, "events"), "rb") as f:
                size = f.seek(0, os.SEEK_END)
                pos = size
                while pos > 0:
                    step = min(_READ, pos)
                    pos -= step
                    f.seek(pos)
                    nl = f.read(step).rfind(b"\n")
                    if nl >= 0:
                        return pos + nl + 1
        except OSError:
            pass
        return 0

    def tail_cursor(self, session_id: str, lines: int) -> Cursor | None:
        """The offset of the last `lines` complete lines, found by reading back from the end
        (a 100,000-event log is not read to show its last twenty)."""
        try:
            with open(self._path(session_id, "events"), "rb") as f:
                pos = f.seek(0, os.SEEK_END)
                seen = -1  # the newline ending the last complete line is not a start
                while pos > 0:
                    step = min(_READ, pos)
                    pos -= step
                    f.seek(pos)
                    block = f.read(step)
                    at = len(block)
                    while (at := block.rfind(b"\n", 0, at)) >= 0:
                        seen += 1
                        if seen == lines:
                            return pos + at + 1
        except OSError:
            pass
        return None

    def append_decision(self, session_id: str, line: dict[str, Any]) -> dict[str, Any]:
        from supervisor.store.provenance import sealed
        from supervisor.store.writer import LineWriter

        directory = existing_session_dir(self.root, session_id)
        refuse_writes(self.root, session_id)
        with LineWriter(directory / CONTROL_FILE) as writer:  # sealed: from an operator path
            return writer.append(sealed(self.root, session_id, line))

    def removal_refusal(self) -> str | None:
        if is_recording(self.root):
            return f"{self.describe()} holds recordings: nothing is removed from it"
        return None

    def remove_session(self, session_id: str) -> None:
        """Delete the session's folder. It is first renamed to a hidden name (not a session
        id), so it leaves the listing at once and whole, then deleted; a symbolic link in its
        place is refused (what it points to is not ours to delete)."""
        import shutil

        directory = existing_session_dir(self.root, session_id)
        refuse_writes(self.root, session_id)
        if directory.is_symlink():
            raise UnsafeStore(f"{directory} is a symbolic link: not removed")
        doomed = directory.with_name(f".removed-{session_id}-{os.getpid()}")
        os.rename(directory, doomed)
        shutil.rmtree(doomed)

    def is_recording(self, session_id: str | None = None) -> bool:
        return is_recording(self.root, session_id)

    def summary(self, session_id: str) -> SessionSummary:
        """The kept summary brought up to date (`store.summary_cache`): only new lines are
        read; a recording, or a root whose key cannot be had, is folded whole."""
        from supervisor.store import summary_cache
        from supervisor.store.provenance import operator_key

        if not self.is_recording(session_id):
            try:
                if self._summary_key is None:
                    self._summary_key = operator_key(self.root)
                return summary_cache.summary(self.root, validate_session_id(session_id),
                                             self._summary_key)
            except OSError:
                pass
        return super().summary(session_id)

    def kept_summary(self, session_id: str) -> SessionSummary | None:
        """The kept summary (`summary_cache.kept`) when it is at most a small fold behind the
        events; None for a recording (nothing is kept in one) or a root whose key cannot be
        had."""
        from supervisor.store import summary_cache
        from supervisor.store.provenance import operator_key

        try:
            if self.is_recording(session_id):
                return None
            if self._summary_key is None:
                self._summary_key = operator_key(self.root)
            return summary_cache.kept(self.root, validate_session_id(session_id),
                                      self._summary_key)
        except (OSError, StoreError):  # the follower says what is wrong with the root
            return None

    def keep_summary(self, session_id: str) -> None:
        """`summary_cache.summary`, for its side effect: the summary kept again (not for a
        recording, whose sessions are folded whole each time)."""
        try:
            if not self.is_recording(session_id):
                self.summary(session_id)
        except (OSError, StoreError):
            pass

    def local_files(self, session_id: str) -> SessionFiles | None:
        files = session_files(self.root, session_id)
        return files if files.dir.is_dir() else None


class LocalReader:
    """A `SessionReader` over one file: a `Tailer`, polled again while waiting."""

    def __init__(self, session_id: str, kind: LineKind, tailer: Tailer) -> None:
        self.session_id = session_id
        self.kind: LineKind = kind
        self.tailer = tailer

    def poll(self, timeout: float = 0.0) -> SessionBatch:
        end = time.monotonic() + timeout
        while True:
            got = self.tailer.poll()
            if got or time.monotonic() >= end:
                return local_batch(self.session_id, self.kind, got)
            time.sleep(min(POLL_INTERVAL_S, max(0.0, end - time.monotonic())))

    def close(self) -> None:
        """Nothing held between polls."""


def local_batch(session_id: str, kind: LineKind, got: TailBatch) -> SessionBatch:
    """A tailer's batch as the store hands it out: a line's cursor is its byte offset."""
    return SessionBatch(session_id, kind, got.events, got.offsets, got.bad_lines,
                        [b.offset or 0 for b in got.bad_lines], got.reset, missing=got.missing)


class LocalLog:
    """Random access to one `events.jsonl` by byte offset."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def lines_at(self, cursors: Sequence[Cursor]) -> list[dict[str, Any] | str]:
        """Each line read back (one open of the file for all of them)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return ["the file is gone"] * len(cursors)
        try:
            return [_line_at(fd, cursor) for cursor in cursors]
        finally:
            os.close(fd)

    def find(self, needle: str, start: Cursor) -> list[Cursor]:
        """One sequential read of the file from `start`; each hit mapped to its line's start."""
        try:
            with open(self.path, "rb") as f:
                f.seek(max(start, 0))
                data = f.read().lower()
        except OSError:
            return []
        raw = needle.lower().encode("utf-8")
        hits: list[Cursor] = []
        pos = data.find(raw) if raw else -1
        while pos >= 0:
            line_start = data.rfind(b"\n", 0, pos) + 1
            hits.append(max(start, 0) + line_start)
            end = data.find(b"\n", pos)
            if end < 0:
                break
            pos = data.find(raw, end)
        return hits


def _line_at(fd: int, offset: int) -> dict[str, Any] | str:
    if offset < 0:
        return "no line behind this row"
    try:
        value = loads(_read_line(fd, offset))
    except (OSError, ValueError):  # gone, changed, or hostile (too deep): never raised
        return "the file changed"
    return value if isinstance(value, dict) else {"value": value}


def _read_line(fd: int, offset: int) -> bytes:
    """The line starting at `offset` (without its newline)."""
    data = b""
    pos = offset
    while len(data) < _MAX_LINE:
        chunk = os.pread(fd, _READ, pos)
        if not chunk:
            break
        nl = chunk.find(b"\n")
        if nl >= 0:
            return data + chunk[:nl]
        data += chunk
        pos += len(chunk)
    return data



def open_url(url: str, options: object) -> LocalStore:
    """`file:///path/to/root` (the registry entry of `supervisor.store.open`)."""
    from supervisor.store.open import file_url_path

    return LocalStore(file_url_path(url))
