"""The repeated-text detector: the agent's own messages repeating, by chunk hashing.

Code blocks (``` fences and indented blocks) are removed first: repeating the same code while
explaining it is normal. The rest is normalised (case, whitespace, digits) and cut into
sentences/lines of at least a few words; each chunk is hashed. A message repeats when most of
its chunks appeared in recent messages; a streak of repeating messages with no workspace change
and no new tool output in between is a loop (the same "Let me scroll down" while scrolling
through a file is not). A single message in which one chunk recurs many times (a degenerate text
loop, as Gemini CLI checks for) fires at once, and so do several empty replies in a row with no
tool call between them (as OpenHands checks for).
"""

import re
from collections import Counter
from typing import Any

import xxhash

from supervisor.engine.detectors import finding
from supervisor.engine.state import State
from supervisor.engine.types import Finding

_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.S)
_INDENTED = re.compile(r"^(?: {4}|\t).*$", re.M)
_SPLIT = re.compile(r"(?<=[.!?:;])\s+|\n+")
_NUM = re.compile(r"\d+")
_WS = re.compile(r"\s+")


def chunks(text: str, chunk_chars: int) -> list[str]:
    """Hashes of the normalised prose chunks of a message (code excluded): its sentences and
    lines, longer ones cut into pieces of `chunk_chars` characters."""
    text = _INDENTED.sub("", _FENCE.sub(" ", text))
    out = []
    for part in _SPLIT.split(text):
        part = _WS.sub(" ", _NUM.sub("#", part.lower())).strip(" -*#>")
        if len(part) < 12:
            continue
        for start in range(0, len(part), max(1, chunk_chars)):
            piece = part[start : start + max(1, chunk_chars)]
            out.append(xxhash.xxh3_64_hexdigest(piece.encode("utf-8", "replace"))[:12])
    return out


def repeated_text(st: State, event: dict[str, Any], p: dict[str, Any]) -> Finding | None:
    """See module docstring. `event` is an assistant `message`."""
    text = event.get("text")
    if not isinstance(text, str):
        return None
    seq = event.get("seq")
    seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
    if not text.strip():
        st.empty_replies = [*st.empty_replies, seq][-20:]
        if len(st.empty_replies) == p["empty_replies"]:
            return finding(
                "repeated_text", 1, "text:empty", list(st.empty_replies),
                f"Your last {len(st.empty_replies)} replies were empty and no tool was called. "
                "State the next concrete step and take it, or say what blocks you.",
                st.step_count - 1,
            )
        return None
    st.empty_replies = []
    hashes = chunks(text, p["chunk_chars"])
    step = st.step_count - 1
    counts = Counter(hashes)
    if counts and counts.most_common(1)[0][1] >= p["chunk_repeats"]:
        st.texts.append(hashes)
        return finding(
            "repeated_text", 1, "text:" + counts.most_common(1)[0][0], [seq],
            f"Your message repeats the same sentence {counts.most_common(1)[0][1]} times. "
            "Stop generating, state the next concrete step, and take it.", step,
        )
    if not hashes or len(text.strip()) < p["min_chars"]:
        st.texts.append(hashes)
        return None
    seen: set[str] = set()
    for old in st.texts:
        seen.update(old)
    st.texts.append(hashes)
    overlap = sum(1 for h in hashes if h in seen) / len(hashes)
    mark = f"{st.ws}:{st.novel_count}"  # changes with the workspace and with new outputs
    if overlap < p["overlap"] or (st.text_streak and st.text_mark != mark):
        st.text_streak = [seq] if overlap >= p["overlap"] else []
        st.text_mark = mark
        return None
    if not st.text_streak:
        st.text_mark = mark
    st.text_streak = ([*st.text_streak, seq])[-20:]
    n = len(st.text_streak) + 1  # the first occurrence is not in the streak
    if n == p["escalate"]:
        level = 3
    elif n == p["nudge"]:
        level = 1
    else:
        return None
    return finding(
        "repeated_text", level, "text:" + hashes[0], list(st.text_streak),
        f"You have written essentially the same message {n} times and nothing changed in "
        "between. Do not restate the plan again: take a different concrete step, or say "
        "what blocks you.", step,
    )
