"""Read operators' decisions from a session's `control.jsonl`, incrementally and cheaply.

Stdlib only (json, os): the Claude Code hook runs this in a fresh process on every tool call.
Checking for news is one `os.stat` against a persisted byte offset; only bytes past that offset
are ever read, and only complete lines (a line still being written is read once its newline
arrives). Lines are validated by hand with a reason a person can act on.

    offset = state["control_offset"]
    if has_news(path, offset):
        lines, offset = read_from(path, offset)
        for line in lines:
            line.decision      # the decision dict, or None when the line is malformed
            line.problem       # why it is malformed ("missing field 'operator'", ...)

What to do with each decision (apply, or ignore as late, duplicate, unknown...) is the guard
core's business (`supervisor.guard.core`), which does it under the session lock.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.protocol.decisions import read_decision

_READ_CHUNK = 256 * 1024


@dataclass(frozen=True, slots=True)
class ControlLine:
    """One complete line of the control file: a valid decision, or a problem."""

    offset: int
    decision: dict[str, Any] | None
    problem: str | None = None

    @property
    def decision_id(self) -> str:
        """The line's decision id if it has a usable one, else a stand-in naming the offset."""
        if self.decision is not None:
            return self.decision["decision_id"]
        return f"line@{self.offset}"


def file_size(path: Path) -> int:
    """Size of the control file, 0 when it does not exist."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def has_news(path: Path, offset: int) -> bool:
    """True when the control file holds bytes past `offset` (or was truncated below it)."""
    return file_size(path) != offset


def read_from(path: Path, offset: int) -> tuple[list[ControlLine], int]:
    """Complete lines after `offset`, and the offset to continue from next time.

    A file shorter than `offset` was truncated or replaced: it is read again from the start
    (decision ids already handled are recognised as duplicates by the caller)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return [], offset
    try:
        size = os.fstat(fd).st_size
        if size < offset:
            offset = 0
        lines: list[ControlLine] = []
        pending = b""
        pos = offset
        line_start = offset
        while pos < size:
            chunk = os.pread(fd, min(_READ_CHUNK, size - pos), pos)
            if not chunk:
                break
            pos += len(chunk)
            data = pending + chunk
            start = 0
            while True:
                nl = data.find(b"\n", start)
                if nl < 0:
                    break
                raw = data[start:nl]
                if raw.strip():
                    lines.append(parse_control_line(raw, line_start))
                line_start += nl + 1 - start
                start = nl + 1
            pending = data[start:]
        return lines, line_start
    finally:
        os.close(fd)


def parse_control_line(raw: bytes, offset: int = 0) -> ControlLine:
    """Validate one line as a `decision` (with `protocol.decisions`, as every reader does);
    never raises."""
    value, problem = read_decision(raw)
    if problem:
        return ControlLine(offset, None, problem)
    return ControlLine(offset, value)

