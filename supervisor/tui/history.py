"""A compact, append-only index of one session's history, built for 100,000+ events.

The dashboard keeps no parsed events and no text per event: each one is reduced to its `seq`,
`ts`, a small type code and the byte offset of its line in `events.jsonl` (about 25 bytes an
event). The one-line summary a row shows is made when the row is drawn, by reading that line
back from the file, summarising it and cleaning it (agent text made terminal-safe); a small LRU
cache keeps what was drawn recently. Folding an event therefore costs a few array appends, and
the history view renders any window of rows in O(rows shown).
"""

import json
import os
from array import array
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.protocol.models import Event
from supervisor.safetext import clean

SUMMARY_LIMIT = 240
"""Characters of the one-line summary shown per event (the full event stays on disk)."""
CACHE_ROWS = 4096
_READ = 64 * 1024
_MAX_LINE = 1024 * 1024 + 1

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


def summarize(g: dict[str, Any]) -> str:
    """One line saying what an event (as a JSON dict) is about; raw, the caller cleans it."""
    kind = g.get("type")
    match kind:
        case "tool_call":
            return f"{g.get('tool')} {_compact(g.get('args'))}  [{g.get('call_id')}]"
        case "tool_result":
            state = "ok" if g.get("ok") else f"ERROR {g.get('error') or ''}".rstrip()
            return f"{state} [{g.get('call_id')}] {str(g.get('output'))[:200]}"
        case "message":
            return f"{g.get('role')}: {g.get('text')}"
        case "verdict":
            text = g.get("message") or g.get("reason") or ""
            return f"{g.get('action')} (level {g.get('level')}) [{g.get('call_id')}] {text}"
        case "detection":
            return (f"{g.get('detector')} level {g.get('level')}: {g.get('message')}  "
                    f"evidence {g.get('evidence')}")
        case "escalation":
            return f"{g.get('escalation_id')} level {g.get('level')}: {g.get('reason')}"
        case "limit":
            return f"{g.get('name')} {g.get('value')}/{g.get('limit')} -> {g.get('action')}"
        case "checkpoint":
            return (f"{g.get('checkpoint_id')} {g.get('label')} at seq {g.get('at_seq')} "
                    f"({g.get('files')} files)")
        case "decision_applied":
            return f"{g.get('action')} [{g.get('decision_id')}] {g.get('outcome')}"
        case "decision_ignored":
            return f"[{g.get('decision_id')}] {g.get('reason')}"
        case "task_start":
            return f"{g.get('task_id')} {g.get('title')}"
        case "task_end":
            return f"{g.get('task_id')} {g.get('status')}"
        case "session_start":
            return f"{g.get('agent')} task={g.get('task')} cwd={g.get('cwd')}"
        case "session_end":
            return f"{g.get('status')} {g.get('reason') or ''}"
        case "heartbeat":
            return ""
        case _:
            return _compact({k: v for k, v in g.items() if k not in ("v", "seq", "ts", "type")})


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)[:400]


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

    __slots__ = ("_cache", "_codes", "_fixed", "_offsets", "_seqs", "_ts", "path")

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        """The events file the offsets point into (None: rows carry their own text)."""
        self._seqs = array("q")
        self._ts = array("d")
        self._offsets = array("q")
        self._codes = bytearray()
        self._fixed: dict[int, str] = {}
        """Rows added with an explicit text (`append_row`)."""
        self._cache: OrderedDict[int, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._seqs)

    def append(self, event: Event, offset: int) -> None:
        """Index `event`, whose line starts at byte `offset` of `self.path`."""
        self._seqs.append(event.seq)
        self._ts.append(event.ts)
        self._offsets.append(offset)
        code = _TYPE_CODES.get(event.type)
        self._codes.append(code if code is not None else type_code(event.type[:32]))

    def append_row(self, seq: int, ts: float, type_name: str, summary: str) -> None:
        """A row with its own text (no file behind it)."""
        self._fixed[len(self._seqs)] = clean(summary, keep_newlines=False, limit=SUMMARY_LIMIT)
        self._seqs.append(seq)
        self._ts.append(ts)
        self._offsets.append(-1)
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
        """The cleaned one-line summary of row `index` (read back from the file if needed)."""
        fixed = self._fixed.get(index)
        if fixed is not None:
            return fixed
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            return cached
        text = self._load([index])[index]
        return text

    def _load(self, indices: list[int]) -> dict[int, str]:
        """Read, summarise and clean the lines of `indices` (one open of the file)."""
        out: dict[int, str] = {}
        fd = None
        try:
            if self.path is not None:
                fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            fd = None
        try:
            for index in indices:
                out[index] = self._summary_at(fd, self._offsets[index])
                self._cache[index] = out[index]
        finally:
            if fd is not None:
                os.close(fd)
        while len(self._cache) > CACHE_ROWS:
            self._cache.popitem(last=False)
        return out

    @staticmethod
    def _summary_at(fd: int | None, offset: int) -> str:
        if fd is None or offset < 0:
            return "(line no longer readable: the file is gone)"
        try:
            data = _read_line(fd, offset)
            value = json.loads(data)
            summary = summarize(value) if isinstance(value, dict) else _compact(value)
        except (OSError, ValueError, RecursionError):
            return "(line no longer readable: the file changed)"
        return clean(summary, keep_newlines=False, limit=SUMMARY_LIMIT)

    def event(self, index: int) -> dict[str, Any]:
        """The whole event of row `index`, read back from its line (for the detail view).

        Raises `LookupError` with a reason when the line cannot be read any more (the file
        changed or vanished) or holds no JSON object. Untrusted: clean before showing."""
        if self._offsets[index] < 0 or self.path is None:
            raise LookupError("this row has no line in a file")
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError as exc:
            raise LookupError(f"the events file cannot be read: {exc.strerror}") from None
        try:
            data = _read_line(fd, self._offsets[index])
        finally:
            os.close(fd)
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):
            raise LookupError("the line changed since it was read (not JSON any more)") from None
        if not isinstance(value, dict) or value.get("seq") != self._seqs[index]:
            raise LookupError("the line changed since it was read")
        return value

    def events_mentioning(self, text: str, start: int, stop: int) -> list[tuple[int, dict]]:
        """Rows in `start..stop` whose line contains `text` (exact bytes), as parsed events.

        One sequential read of that byte range; for finding a call's result, its verdicts and
        its call by the call id."""
        if self.path is None or start >= stop:
            return []
        stop = min(stop, len(self._offsets))
        [hits] = self._raw_hits([text.encode("utf-8")], start, stop, fold_case=False)
        out = []
        for i in hits:
            try:
                out.append((i, self.event(i)))
            except LookupError:
                continue
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

        Candidates are found in the raw bytes of the file (one sequential read of the range:
        a row is a candidate when each word of the phrase is in its line or its type), then
        confirmed on their summaries, so a filter over 100,000 rows does not summarise them
        all. Reads only: safe to call from a worker thread while the UI appends rows."""
        stop = len(self._seqs) if stop is None else min(stop, len(self._seqs))
        needle = needle.lower()
        if not needle:
            return list(range(start, stop))
        words = [w for w in needle.split() if any(c.isalnum() for c in w)] or [needle.strip()]
        raw = self._raw_candidates(words, start, stop)
        codes = self._codes
        candidates: set[int] | None = None
        for word in words:
            types = {c for c, name in enumerate(TYPE_NAMES) if word in name}
            hits = raw.get(word, set())
            if types:
                hits = hits | {i for i in range(start, stop) if codes[i] in types}
            candidates = hits if candidates is None else candidates & hits
        wanted = set(candidates or ())
        wanted.update(i for i in self._fixed if start <= i < stop)
        texts = self.summaries(sorted(wanted))
        return [i for i in sorted(wanted)
                if needle in f"{TYPE_NAMES[codes[i]]} {texts[i]}".lower()]

    def summaries(self, indices: list[int]) -> dict[int, str]:
        """The cleaned summaries of these rows, from the cache or the file, without changing
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
        if missing and self.path is not None:
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except OSError:
                fd = None
            try:
                for i in missing:
                    out[i] = self._summary_at(fd, self._offsets[i])
            finally:
                if fd is not None:
                    os.close(fd)
        for i in missing:
            out.setdefault(i, "")
        return out

    def _raw_candidates(self, words: list[str], start: int, stop: int) -> dict[str, set[int]]:
        """For each word, the rows in `start..stop` whose line contains it (any case)."""
        hits = self._raw_hits([w.encode("utf-8") for w in words], start, stop, fold_case=True)
        return {w: set(h) for w, h in zip(words, hits, strict=True)}

    def _raw_hits(self, needles: list[bytes], start: int, stop: int, *, fold_case: bool
                  ) -> list[list[int]]:
        """For each needle, the rows in `start..stop` whose line contains it, in order (one
        read of the byte range of those rows)."""
        if self.path is None or start >= stop:
            return [[] for _ in needles]
        import bisect

        first = self._offsets[start]
        end = self._offsets[stop] if stop < len(self._offsets) else None
        try:
            with open(self.path, "rb") as f:
                f.seek(max(first, 0))
                data = f.read() if end is None else f.read(max(0, end - first))
        except OSError:
            return [[] for _ in needles]
        if fold_case:
            data = data.lower()
        out = []
        for raw in needles:
            hits: list[int] = []
            pos = data.find(raw)
            while pos >= 0:
                i = bisect.bisect_right(self._offsets, first + pos, start, stop) - 1
                if i >= start and (not hits or hits[-1] != i):
                    hits.append(i)
                nl = data.find(b"\n", pos)
                if nl < 0:
                    break
                pos = data.find(raw, nl)
            out.append(hits)
        return out

    def search(self, needle: str, start: int = 0, *, backwards: bool = False) -> int | None:
        """Index of the next row (from `start`, wrapping) whose type or text contains `needle`."""
        n = len(self._seqs)
        if not n or not needle:
            return None
        found = self.matches(needle)
        if not found:
            return None
        import bisect

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
            + self._offsets.buffer_info()[1] * self._offsets.itemsize
            + len(self._codes)
            + sum(sys.getsizeof(t) for t in self._cache.values())
            + sum(sys.getsizeof(t) for t in self._fixed.values())
        )


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
