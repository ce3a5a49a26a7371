"""A line that is not a valid event, and which file a line came from: with the standard
library only.

The store's interfaces, the sessions screen and the dashboard's model name these types, and
they load before the dashboard's first screen; the parser that makes `BadLine`s
(`supervisor.protocol.codec`) brings pydantic, which the first screen does without
(tests/test_tui_imports.py): it loads when the first line is parsed.
"""

from dataclasses import dataclass
from typing import Literal

LineKind = Literal["events", "control"]
"""Which of a session's files a line is from: the agent side's events or the operators'."""


@dataclass(frozen=True, slots=True)
class BadLine:
    """A line that is not a valid event: kept with its reason and raw bytes, never raised."""

    reason: str
    raw: bytes
    offset: int | None = None
    """Byte offset of the line's start in its file, when read from a file."""
    size: int | None = None
    """Size of the whole line when `raw` holds only its start (an oversized line)."""

    def preview(self, limit: int = 200) -> str:
        """The start of the raw bytes as text, undecodable bytes replaced."""
        text = self.raw[:limit].decode("utf-8", "replace")
        return text + ("…" if len(self.raw) > limit or self.size else "")
