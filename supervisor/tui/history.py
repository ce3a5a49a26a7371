"""A compact, append-only index of one session's history, built for 100,000+ events.

The dashboard keeps no parsed events and no text per event: each one is reduced to its `seq`,
`ts`, a small type code and its store cursor (about 25 bytes an event). The one-line summary a
row shows is made when the row is drawn, by reading that event back through the store's
`SessionLog` (a byte offset in `events.jsonl` locally, a stream id in Redis), summarising it and
cleaning it (agent text made terminal-safe); a small LRU cache keeps what was drawn recently.
Folding an event therefore costs a few array appends, and the history view renders any window of
rows in O(rows shown).
"""

import bisect
import re
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from supervisor.safetext import clean
from supervisor.store.base import Cursor, SessionLog
from supervisor.store.render import summary
from supervisor.store.voice import describe_unsealed, said

if TYPE_CHECKING:
    from supervisor.protocol.models import Event  # pydantic: not before the first screen

SUMMARY_LIMIT = 240
"""Characters of the one-line summary shown per event (the full event stays on disk)."""
CACHE_ROWS = 4096

TYPE_NAMES: list[str] = []
_TYPE_CODES: dict[str, int] = {}


def type_code(name: str) -> int:
    """A small integer for an event type name (unknown types get codes too, up to 255)."""
    code = _TYPE_CODES.get(name)
    if code is None:
        if len(TYPE_NAMES) >= 255:
            return type_code("?")
        code = len(TYPE_NAMES)
        TYPE_NAMES.append(name)
        _TYPE_CODES[name] = code
    return code


_STORED_AS_IS = re.compile(r"[!#-\[\]-~]+")
"""Printable ASCII but `"` and `\\`: what a stored line holds byte for byte of a text (JSON
escapes quotes, backslashes and control characters; the log's search folds ASCII case only)."""


_ESCAPED = re.compile(r'["\\\x00-\x1f]')
"""What JSON stores otherwise than as it is."""


def _stored_part(word: str) -> str | None:
    """The longest part of `word` the stored line holds as it is, or None: the word itself
    when it has no case and nothing escaped (`日本`, `42`), else its longest ASCII part."""
    if word.lower() == word.upper() and not _ESCAPED.search(word):
        return word
    parts = _STORED_AS_IS.findall(word)
    return max(parts, key=len) if parts else None


def unsealed_summary(line: dict[str, Any]) -> str:
    """The row of a line the store handed out as `unsealed` (`store.voice`): read back, the
    line still claims to be what it is not, so it is said as the agent's, quoted."""
    kind = line.get("line_type") if line.get("type") == "unsealed" else line.get("type")
    return describe_unsealed(kind, said(line))  # (`unsealed` as shipped by a relay: its own)


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One line of history as the view shows it (`text` is already terminal-safe)."""

    index: int
    seq: int
    ts: float
    type: str
    text: str


class HistoryStore:
    """Append-only history of one session: parallel arrays, summaries read back on demand."""

    __slots__ = ("_cache", "_codes", "_cursors", "_fixed", "_seqs", "_ts", "log")

    def __init__(self, log: SessionLog | None = None) -> None:
        self.log = log
        """Where the rows' events are read back from (None: rows carry their own text)."""
        self._seqs = array("q")
        self._ts = array("d")
        self._cursors = array("q")
        self._codes = bytearray()
        self._fixed: dict[int, str] = {}
        """Rows added with an explicit text (`append_row`)."""
        self._cache: OrderedDict[int, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seqs)

    def append(self, event: "Event", cursor: Cursor) -> None:
        """Index `event`, found at `cursor` of `self.log`."""
        self._seqs.append(event.seq)
        self._ts.append(event.ts)
        self._cursors.append(cursor)
        code = _TYPE_CODES.get(event.type)
        self._codes.append(code if code is not None else type_code(event.type[:32]))

    def append_row(self, seq: int, ts: float, type_name: str, summary: str) -> None:
        """A row with its own text (no file behind it)."""
        self._fixed[len(self._seqs)] = clean(summary, keep_newlines=False, limit=SUMMARY_LIMIT)
        self._seqs.append(seq)
        self._ts.append(ts)
        self._cursors.append(-1)
        self._codes.append(type_code(type_name[:32]))

    def type_of(self, index: int) -> str:
        return TYPE_NAMES[self._codes[index]]

    def code_of(self, index: int) -> int:
        """The type code of row `index` (see `type_code`)."""
        return self._codes[index]

    def seq_of(self, index: int) -> int:
        return self._seqs[index]

    def ts_of(self, index: int) -> float:
        return self._ts[index]

    def row(self, index: int) -> HistoryRow:
        return HistoryRow(index, self._seqs[index], self._ts[index], self.type_of(index),
                          self.text(index))

    def rows(self, start: int, stop: int) -> Iterator[HistoryRow]:
        for index in range(max(start, 0), min(stop, len(self._seqs))):
            yield self.row(index)

    def text(self, index: int) -> str:
        """The cleaned one-line summary of row `index` (read back from the log if needed)."""
        fixed = self._fixed.get(index)
        if fixed is not None:
            return fixed
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        text = self._load([index])[index]
        return text

    def event(self, index: int) -> dict[str, Any] | str:
        """The whole event of row `index` as stored (a JSON dict, untrusted: clean before
        showing), or why it cannot be read (the log changed or vanished since)."""
        if self.log is None or self._cursors[index] < 0:
            return "no log behind this row"
        value = self.log.lines_at([self._cursors[index]])[0]
        if isinstance(value, dict) and value.get("seq") != self._seqs[index]:
            return "the log changed since this row was read"
        return value

    def events_mentioning(self, text: str, start: int, stop: int
                          ) -> list[tuple[int, dict[str, Any]]]:
        """Rows in `start..stop` whose stored event contains `text` (any case), read back;
        for finding a call's result, its verdicts and its call by the call id."""
        hits = self._raw_candidates([text], start, min(stop, len(self._seqs))).get(text, set())
        rows = sorted(hits)
        if not rows or self.log is None:
            return []
        lines = self.log.lines_at([self._cursors[i] for i in rows])
        return [(i, line) for i, line in zip(rows, lines, strict=True)
                if isinstance(line, dict) and line.get("seq") == self._seqs[i]]

    def _load(self, indices: list[int]) -> dict[int, str]:
        """Read back, summarise and clean the events of `indices`, and cache them."""
        out = self._summarize(indices)
        self._cache.update(out)
        while len(self._cache) > CACHE_ROWS:
            self._cache.popitem(last=False)
        return out

    def _summarize(self, indices: list[int]) -> dict[int, str]:
        """Read back, summarise and clean the events of `indices` (one request to the log)."""
        if self.log is None:
            lines: list[dict[str, Any] | str] = ["no log behind this row"] * len(indices)
        else:
            lines = self.log.lines_at([self._cursors[i] for i in indices])
        out: dict[int, str] = {}
        for index, line in zip(indices, lines, strict=True):
            if isinstance(line, str):
                text = f"(line no longer readable: {line})"
            else:
                try:
                    said = (unsealed_summary(line) if self.type_of(index) == "unsealed"
                            else summary(line))
                    text = clean(said, keep_newlines=False, limit=SUMMARY_LIMIT)
                except RecursionError:
                    text = "(line no longer readable: nested too deeply)"
            out[index] = text
        return out

    def prefetch(self, indices: Iterable[int]) -> None:
        """Load the summaries of these rows in one go (before drawing them)."""
        n = len(self._seqs)
        missing = [i for i in indices
                   if 0 <= i < n and i not in self._fixed and i not in self._cache]
        if missing:
            self._load(missing)

    def index_of_seq(self, seq: int) -> int | None:
        """Index of the row with this `seq` (binary search: seqs only increase in a file)."""
        lo, hi = 0, len(self._seqs)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._seqs[mid] < seq:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < len(self._seqs) and self._seqs[lo] == seq else None

    def matches(self, needle: str, start: int = 0, stop: int | None = None) -> list[int]:
        """Indices in `start..stop` whose `type summary` contains the phrase `needle` (any case).

        Candidates are found by the log in the stored events (locally one sequential read of
        the file; a row is a candidate when each word of the phrase is in its event or its
        type), then confirmed on their summaries, so a filter over 100,000 rows does not
        summarise them all. Reads only: safe to call from a worker thread while the UI
        appends rows."""
        stop = len(self._seqs) if stop is None else min(stop, len(self._seqs))
        needle = needle.lower()
        if not needle:
            return list(range(start, stop))
        words = [w for w in needle.split() if any(c.isalnum() for c in w)] or [needle.strip()]
        raw = self._raw_candidates(words, start, stop)
        codes = self._codes
        candidates: set[int] | None = None
        for word in words:
            if word not in raw:  # nothing of it is stored as it is: the shown text decides
                continue
            types = {c for c, name in enumerate(TYPE_NAMES) if word in name}
            hits = raw[word]
            if types:
                hits = hits | {i for i in range(start, stop) if codes[i] in types}
            candidates = hits if candidates is None else candidates & hits
        if candidates is None:
            candidates = set(range(start, stop))
        wanted = sorted(set(candidates or ()) | {i for i in self._fixed if start <= i < stop})
        texts = self.summaries(wanted)
        return [i for i in wanted if needle in f"{TYPE_NAMES[codes[i]]} {texts[i]}".lower()]

    def summaries(self, indices: list[int]) -> dict[int, str]:
        """The cleaned summaries of these rows, from the cache or the log, without changing
        the cache (so a worker thread may call it)."""
        out: dict[int, str] = {}
        missing = []
        for i in indices:
            text = self._fixed.get(i)
            if text is None:
                text = self._cache.get(i)
            if text is None:
                missing.append(i)
            else:
                out[i] = text
        if missing:
            out.update(self._summarize(missing))
        return out

    def _raw_candidates(self, words: list[str], start: int, stop: int) -> dict[str, set[int]]:
        """For each word, the rows in `start..stop` whose stored event contains its longest
        part stored as it is (`_stored_part`; any ASCII case; found by the log): more rows than
        match, never fewer. A word with no such part is left out (it cannot narrow them)."""
        if self.log is None or start >= stop:
            return {word: set() for word in words}
        found: dict[str, set[int]] = {}
        first = max(self._cursors[start], 0)
        end = self._cursors[stop] if stop < len(self._cursors) else None
        for word in words:
            part = _stored_part(word)
            if part is None:
                continue
            hits = found.setdefault(word, set())
            for cursor in self.log.find(part, first):
                if end is not None and cursor >= end:
                    break  # cursors come in order: the rest lies past `stop`
                i = bisect.bisect_right(self._cursors, cursor, start, stop) - 1
                if i >= start:
                    hits.add(i)
        return found

    def search(self, needle: str, start: int = 0, *, backwards: bool = False) -> int | None:
        """Index of the next row (from `start`, wrapping) whose type or text contains `needle`."""
        n = len(self._seqs)
        if not n or not needle:
            return None
        found = self.matches(needle)
        if not found:
            return None
        if backwards:
            pos = bisect.bisect_right(found, start) - 1
            return found[pos] if pos >= 0 else found[-1]
        pos = bisect.bisect_left(found, start)
        return found[pos] if pos < len(found) else found[0]

    def nbytes(self) -> int:
        """Approximate memory held (the index, the cache and fixed rows)."""
        import sys

        return (
            self._seqs.buffer_info()[1] * self._seqs.itemsize
            + self._ts.buffer_info()[1] * self._ts.itemsize
            + self._cursors.buffer_info()[1] * self._cursors.itemsize
            + len(self._codes)
            + sum(sys.getsizeof(t) for t in self._cache.values())
            + sum(sys.getsizeof(t) for t in self._fixed.values())
        )



STEP_TYPES = ("tool_call", "tool_result", "message")
"""What the agent did and said: the rows "Recent steps" shows (not the engine's own detection
and limit rows, nor heartbeats; of its verdicts, only the refusals: `REFUSALS`)."""
REFUSALS = frozenset({"skip", "block", "pause", "stop"})
"""Verdicts that refused a call: such a call has no result, and without its verdict "Recent
steps" showed a row of calls as if they had run (an agent blocked at every call, one after
another, read as an agent at work)."""
RECENT_SCAN = 4096
"""Rows looked at backwards for recent steps: a long wait writes many heartbeats in between."""


def recent_steps(store: HistoryStore, count: int, *, before_seq: object = None
                 ) -> list[HistoryRow]:
    """The last `count` calls, results, messages and refusals of calls of `store` before the
    row of seq `before_seq` (the end of the history when it is unknown), oldest first."""
    codes = {type_code(name) for name in STEP_TYPES}
    verdict = type_code("verdict")
    end = len(store)
    if isinstance(before_seq, int) and not isinstance(before_seq, bool):
        found_at = store.index_of_seq(before_seq)
        if found_at is not None:
            end = found_at
    found: list[int] = []
    for index in range(end - 1, max(-1, end - 1 - RECENT_SCAN), -1):
        code = store.code_of(index)
        if code in codes or (code == verdict and _refused(store, index)):
            found.append(index)
            if len(found) == count:
                break
    found.reverse()
    store.prefetch(found)
    return [store.row(i) for i in found]


def _refused(store: HistoryStore, index: int) -> bool:
    """Whether the verdict of row `index` refused its call (its summary starts with the
    action: `store.render`'s words for a verdict)."""
    text = store.summaries([index])[index]
    return text.split(" ", 1)[0] in REFUSALS
