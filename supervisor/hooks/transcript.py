"""Read an agent's JSONL transcript incrementally: the platform's half of a transcript reader.

Hooks are not given the assistant's text between tool calls, yet the engine's
`consecutive_tool_calls` limit counts calls since the model last said something; the agents'
transcripts have that text. The runtime remembers how far it read and, at each call, a target's
reader (`Target.transcript`) returns the texts in the whole lines written since. What a line
means is the target's (`text_of`); reading stays here: bounded per call, whole lines only, and a
file rewritten from scratch read again from its start. Transcript formats are internal to the
agents and change between releases, so a line a target does not understand is skipped.
"""

import os
from collections.abc import Callable
from typing import TypeVar

READ_LIMIT_BYTES = 16 * 1024 * 1024
"""At most this much of the transcript is read per call (the rest at the next call)."""
T = TypeVar("T")


def new_texts(
    path: str, offset: int, text_of: Callable[[bytes], T | None]
) -> tuple[list[T], int]:
    """(the texts `text_of` finds in the whole lines after `offset`, the offset after them);
    a missing or unreadable file gives `([], offset)`."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < offset:  # rewritten from scratch: start over
                offset = 0
            handle.seek(offset)
            data = handle.read(min(size - offset, READ_LIMIT_BYTES))
    except OSError:
        return [], offset
    end = data.rfind(b"\n") + 1
    texts = []
    for line in data[:end].splitlines():
        text = text_of(line)
        if text:
            texts.append(text)
    return texts, offset + end
