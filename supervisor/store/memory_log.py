"""Where a project's failure memory is kept: one JSON-lines log per project under the root.

`<root>/memory/<key>.jsonl` (0600 in a 0700 directory, like every store file: excerpts of what
failed can name private things), `<key>` a readable slug of the project's name plus a hash of
it. The first line names the project (`{"k": "project", "name": ...}`) so `supervisor memory
list` can show every project of a root. Records are appended whole, under an `flock` of the
file: the sessions of one root (several hook processes at once) and a relay that brings a
fleet's records in write it together.

Readers follow the log incrementally (`MemoryLog.read`, from a `Cursor`): a resident hook
server keeps a project's index in memory and reads only what was appended since, one `os.stat`
when nothing was. Forgetting everything replaces the file (a new inode), which a cursor notices
and reads again from the start. What a record means is the engine's business
(`supervisor.engine.failure_memory`); this module only keeps lines.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.protocol.bounded import loads
from supervisor.store import waits
from supervisor.store.paths import ensure_private_dir, write_private

MEMORY_DIR = "memory"
HEADER = "project"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_LINE = 16 * 1024
"""A record longer than this is not one of ours: it is skipped when read."""


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far a reader got: the file (its inode) and the byte offset of the next line."""

    inode: int = 0
    offset: int = 0


def memory_dir(root: Path) -> Path:
    return Path(root) / MEMORY_DIR


def log_path(root: Path, project: str) -> Path:
    """The log of `project` under `root` (see the module docstring)."""
    digest = hashlib.blake2b(project.encode("utf-8", "replace"), digest_size=8).hexdigest()
    slug = _SLUG.sub("-", project.rsplit("/", 1)[-1])[:40].strip("-.") or "project"
    return memory_dir(root) / f"{slug}-{digest}.jsonl"


class MemoryLog:
    """One project's memory log."""

    def __init__(self, root: Path, project: str) -> None:
        self.root = Path(root)
        self.project = project
        self.path = log_path(self.root, project)

    def append(self, records: list[dict[str, Any]]) -> None:
        """Append `records` (whole lines, under the file's lock); creates the log with its
        header line first."""
        if not records:
            return
        data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                       for r in records).encode("utf-8", "replace")
        ensure_private_dir(memory_dir(self.root))
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        try:
            waits.flock(fd, f"the memory log {self.path}")
            if os.fstat(fd).st_size == 0:
                data = self._header() + data
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    def replace(self, records: list[dict[str, Any]]) -> None:
        """Replace the whole log with `records` (a new file: every reader starts over)."""
        ensure_private_dir(memory_dir(self.root))
        body = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                       for r in records).encode("utf-8", "replace")
        write_private(self.path, self._header() + body)

    def records(self) -> list[dict[str, Any]]:
        """Every record of the log, in the order written."""
        return self.read()[0]

    def _header(self) -> bytes:
        line = json.dumps({"k": HEADER, "name": self.project}, ensure_ascii=False)
        return (line + "\n").encode("utf-8", "replace")

    def read(self, cursor: Cursor = Cursor()) -> tuple[list[dict[str, Any]], Cursor, bool]:
        """(the records appended since `cursor`, the new cursor, whether the log was replaced
        since: then the records are all of it, and what was read before must be dropped).
        Cheap when nothing changed: one `stat`."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return [], Cursor(), cursor != Cursor()
        fresh = info.st_ino != cursor.inode or info.st_size < cursor.offset
        start = 0 if fresh else cursor.offset
        if info.st_size == start:
            return [], Cursor(info.st_ino, start), fresh
        with open(self.path, "rb") as f:
            f.seek(start)
            data = f.read(info.st_size - start)
        end = data.rfind(b"\n") + 1  # a line being written is read next time
        records = []
        for line in data[:end].splitlines():
            if not line.strip() or len(line) > _MAX_LINE:
                continue
            try:  # a line is at most 16 KiB: too short to nest past the recursion limit's reach
                record = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict) and record.get("k") != HEADER:
                records.append(record)
        return records, Cursor(info.st_ino, start + end), fresh


    def read_about(self, signature: str) -> list[dict[str, Any]]:
        """Only the records a check of one call needs: those of the entries learned for
        `signature`, and the operator's switches and forgets (for a process that handles one
        call and exits: finding them with `bytes.find` costs about a read of the file, where
        parsing every record of a large memory would cost much more)."""
        try:
            data = self.path.read_bytes()
        except OSError:
            return []
        data = data[: data.rfind(b"\n") + 1]
        needles = [f'"sig":"{signature}"'.encode(), b'"k":"switch"', b'"k":"forget"']
        ids: list[bytes] = []
        lines = set()
        for needle in needles:
            for start, end in _lines_with(data, needle):
                lines.add((start, end))
                if needle is needles[0]:
                    found = _ID.search(data, start, end)
                    if found:
                        ids.append(b'"id":"' + found.group(1) + b'"')
        for needle in dict.fromkeys(ids):
            lines.update(_lines_with(data, needle))
        records = []
        for start, end in sorted(lines):
            if end - start > _MAX_LINE:
                continue
            try:
                record = json.loads(data[start:end])
            except (ValueError, RecursionError):
                continue
            if isinstance(record, dict) and record.get("k") != HEADER:
                records.append(record)
        return records


_ID = re.compile(rb'"id":"([0-9a-f*]{1,40})"')


def _lines_with(data: bytes, needle: bytes) -> list[tuple[int, int]]:
    """(start, end) of every line of `data` that holds `needle`."""
    out = []
    at = data.find(needle)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        out.append((start, end))
        at = data.find(needle, end)
    return out


def projects(root: Path) -> list[str]:
    """The names of the projects that have a memory log under `root`."""
    out = []
    try:
        paths = sorted(memory_dir(root).glob("*.jsonl"))
    except OSError:
        return []
    for path in paths:
        try:
            with open(path, "rb") as f:
                head = loads(f.readline(_MAX_LINE))
        except (OSError, ValueError):
            continue
        if isinstance(head, dict) and head.get("k") == HEADER and isinstance(head.get("name"),
                                                                             str):
            out.append(head["name"])
    return out
