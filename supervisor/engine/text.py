"""The repeated-text detector: the agent's own messages repeating, by chunk hashing.

Code blocks (``` fences and indented blocks) are removed first: repeating the same code while
explaining it is normal. The rest is normalised (case, whitespace, digits) and cut into
sentences/lines of at least a few words; each chunk is hashed. A message repeats when most of
its chunks appeared in recent messages; a streak of repeating messages with no workspace change
in between is a loop. A single message in which one chunk recurs many times (a degenerate text
loop, as Gemini CLI checks for) fires at once.
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
    body = sum(len(h) for h in hashes)
    if not hashes or len(text.strip()) < p["min_chars"] or body == 0:
        st.texts.append(hashes)
        return None
    seen: set[str] = set()
    for old in st.texts:
        seen.update(old)
    st.texts.append(hashes)
    overlap = sum(1 for h in hashes if h in seen) / len(hashes)
    if overlap < p["overlap"] or (st.text_streak and st.text_ws != st.ws):
        st.text_streak = [seq] if overlap >= p["overlap"] else []
        st.text_ws = st.ws
        return None
    if not st.text_streak:
        st.text_ws = st.ws
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
