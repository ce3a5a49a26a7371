"""What the guard read of a workspace file, as the engine receives it (the engine does no I/O).

The guard (SDK and every hook target) reads the file an edit was for with
`supervisor.guard.fileread.read_file` (bounded, never blocking) and passes this value in;
messages and detectors only ever see it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ReadStatus = Literal["ok", "missing", "not_a_file", "too_large", "binary", "unreadable"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """One read of a file: `text` only for `ok` (UTF-8 text within the guard's bound); `size`
    in bytes when known; `digest` the xxh3-64 of the bytes read (`ok` and `binary`); `detail`
    one line on why it was not read (`missing`: "no such file", `too_large`: its size, ...)."""

    path: str
    status: ReadStatus
    text: str | None = None
    size: int | None = None
    digest: str | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"
