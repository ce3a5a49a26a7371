"""Repeated text: the agent's own messages repeating, by chunk hashing.

Code blocks (``` fences and indented blocks) are removed first: repeating the same code while
explaining it is normal. The rest is normalised (case, whitespace, and digits among words) and
cut into sentences/lines of at least a few characters; each chunk is hashed. Digits are masked
only in a chunk with words ("Step 3: checking the file" and "Step 4: ..." are one sentence): a
chunk of figures and signs alone (a version range "^1.1.0 → ^1.2.0", a row of numbers) is data
whose figures are all it says, so eighteen upgraded packages listed in one message are eighteen
lines, not one line said eighteen times. A message repeats when most of its chunks appeared in
recent messages; a streak of repeating messages with no workspace change and no new tool output
in between is a loop (the same "Let me scroll down" while scrolling through a file is not). A
single message in which one chunk recurs many times (a degenerate text loop, as Gemini CLI
checks for) fires at once, and so do several empty replies in a row with no tool call between
them (as OpenHands checks for).
"""

import re
from collections import Counter
from typing import Any, ClassVar, TypedDict

import xxhash

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.state import State
from supervisor.engine.types import Finding

_FENCE = re.compile(r"```.*?(?:```|$)|~~~.*?(?:~~~|$)", re.S)
_INDENTED = re.compile(r"^(?: {4}|\t).*$", re.M)
_SPLIT = re.compile(r"(?<=[.!?:;])\s+|\n+")
_NUM = re.compile(r"\d+")
_WORD = re.compile(r"[^\W\d_]{2,}")
_WS = re.compile(r"\s+")


class RepeatedTextParams(TypedDict):
    """`[detectors.repeated_text]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    escalate: int
    min_chars: int
    overlap: float
    chunk_chars: int
    chunk_repeats: int
    lookback: int
    empty_replies: int


def chunks(text: str, chunk_chars: int) -> list[str]:
    """Hashes of the normalised prose chunks of a message (code excluded): its sentences and
    lines, longer ones cut into pieces of `chunk_chars` characters; digits are masked only in
    a chunk with words (see the module docstring)."""
    text = _INDENTED.sub("", _FENCE.sub(" ", text))
    out = []
    for part in _SPLIT.split(text):
        part = part.lower()
        if _WORD.search(part):
            part = _NUM.sub("#", part)
        part = _WS.sub(" ", part).strip(" -*#>")
        if len(part) < 12:
            continue
        for start in range(0, len(part), max(1, chunk_chars)):
            piece = part[start : start + max(1, chunk_chars)]
            out.append(xxhash.xxh3_64_hexdigest(piece.encode("utf-8", "replace"))[:12])
    return out


class RepeatedText(Detector[RepeatedTextParams]):
    name = "repeated_text"
    summary = ("assistant messages that are essentially the same, with nothing changing in "
               "between; a message repeating one sentence; empty replies")
    defaults: ClassVar[RepeatedTextParams] = {
        "enabled": True, "nudge": 3, "escalate": 5, "min_chars": 40, "overlap": 0.7,
        "chunk_chars": 200, "chunk_repeats": 10, "lookback": 20, "empty_replies": 3,
    }

    def memory(self) -> Memory:
        # texts: chunk hashes of recent messages; streak: seqs of repeating messages; mark:
        # workspace version and new-output count when the streak began; empty: seqs of empty
        # replies since the tool call counted as `empty_at`
        return {"texts": [], "streak": [], "mark": "", "empty": [], "empty_at": -1}

    def new_context(self, mem: Memory) -> None:
        mem["streak"] = []

    def message(self, st: State, event: dict[str, Any], mem: Memory, p: RepeatedTextParams
                ) -> Finding | None:
        text = event.get("text")
        if not isinstance(text, str):
            return None
        seq = event.get("seq")
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
        step = st.step_count - 1
        if mem["empty_at"] != st.step_count:  # a tool call came since: count afresh
            mem["empty"], mem["empty_at"] = [], st.step_count
        if not text.strip():
            mem["empty"] = [*mem["empty"], seq][-20:]
            if len(mem["empty"]) == p["empty_replies"]:
                return finding(self.name, 1, "text:empty", list(mem["empty"]),
                               g.empty_replies_nudge(len(mem["empty"])), step)
            return None
        mem["empty"] = []
        hashes = chunks(text, p["chunk_chars"])
        texts = mem["texts"]
        # (a message of fewer chunks cannot repeat one that often: nothing to count)
        most = Counter(hashes).most_common(1) if len(hashes) >= p["chunk_repeats"] else []
        if most and most[0][1] >= p["chunk_repeats"]:
            self._remember(texts, hashes, p)
            top, times = most[0]
            return finding(self.name, 1, "text:" + top, [seq], g.repeated_sentence_nudge(times),
                           step)
        if not hashes or len(text.strip()) < p["min_chars"]:
            self._remember(texts, hashes, p)
            return None
        seen: set[str] = set()
        for old in texts:
            seen.update(old)
        self._remember(texts, hashes, p)
        overlap = sum(1 for h in hashes if h in seen) / len(hashes)
        mark = f"{st.ws}:{st.novel_count}"  # changes with the workspace and with new outputs
        if overlap < p["overlap"] or (mem["streak"] and mem["mark"] != mark):
            mem["streak"] = [seq] if overlap >= p["overlap"] else []
            mem["mark"] = mark
            return None
        if not mem["streak"]:
            mem["mark"] = mark
        mem["streak"] = [*mem["streak"], seq][-20:]
        n = len(mem["streak"]) + 1  # the first occurrence is not in the streak
        if n == p["escalate"]:
            level = 3
        elif n == p["nudge"]:
            level = 1
        else:
            return None
        return finding(self.name, level, "text:" + hashes[0], list(mem["streak"]),
                       g.repeated_text_nudge(n), step)

    @staticmethod
    def _remember(texts: list[list[str]], hashes: list[str], p: RepeatedTextParams) -> None:
        texts.append(hashes)
        del texts[: -p["lookback"]]
