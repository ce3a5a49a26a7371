"""A compact, append-only store of one session's history, built for 100,000+ events.

The dashboard never keeps the parsed pydantic events: each one is reduced to its `seq`, `ts`, a
small type code and one cleaned summary line (agent text made terminal-safe, cut to a bound).
Parallel arrays keep the per-event overhead to the summary string plus a few bytes, so the
history view can render any window of lines in O(lines shown).
"""

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from supervisor.protocol.models import Event
from supervisor.safetext import clean

SUMMARY_LIMIT = 240
"""Characters of the one-line summary kept per event (the full event stays on disk)."""

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


_COMMON = {"v", "seq", "ts", "type"}


def summarize(e: Event) -> str:
    """One line saying what the event is about (raw; the store cleans it)."""
    g = e.__dict__
    match e.type:
        case "tool_call":
            return f"{g['tool']} {_compact(g['args'])}  [{g['call_id']}]"
        case "tool_result":
            state = "ok" if g["ok"] else f"ERROR {g.get('error') or ''}".rstrip()
            return f"{state} [{g['call_id']}] {g['output'][:200]}"
        case "message":
            return f"{g['role']}: {g['text']}"
        case "verdict":
            text = g.get("message") or g.get("reason") or ""
            return f"{g['action']} (level {g['level']}) [{g['call_id']}] {text}"
        case "detection":
            return f"{g['detector']} level {g['level']}: {g['message']}  evidence {g['evidence']}"
        case "escalation":
            return f"{g['escalation_id']} level {g['level']}: {g['reason']}"
        case "limit":
            return f"{g['name']} {g['value']:g}/{g['limit']:g} -> {g['action']}"
        case "checkpoint":
            return f"{g['checkpoint_id']} {g['label']} at seq {g['at_seq']} ({g['files']} files)"
        case "decision_applied":
            return f"{g['action']} [{g['decision_id']}] {g['outcome']}"
        case "decision_ignored":
            return f"[{g['decision_id']}] {g['reason']}"
        case "task_start":
            return f"{g['task_id']} {g['title']}"
        case "task_end":
            return f"{g['task_id']} {g['status']}"
        case "session_start":
            return f"{g['agent']} task={g.get('task')} cwd={g.get('cwd')}"
        case "session_end":
            return f"{g['status']} {g.get('reason') or ''}"
        case "heartbeat":
            return ""
        case _:
            return _compact(e.model_dump(mode="json", exclude=_COMMON))


def _compact(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)[:400]


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One line of history as the view shows it."""

    index: int
    seq: int
    ts: float
    type: str
    text: str


class HistoryStore:
    """Append-only history of one session: parallel arrays plus one short string per event."""

    __slots__ = ("_codes", "_seqs", "_texts", "_ts")

    def __init__(self) -> None:
        self._seqs = array("q")
        self._ts = array("d")
        self._codes = bytearray()
        self._texts: list[str] = []

    def __len__(self) -> int:
        return len(self._texts)

    def append(self, event: Event) -> None:
        """Reduce `event` to a row and keep it."""
        try:
            summary = summarize(event)
        except Exception:  # an event with unexpected shapes still gets a line
            summary = _compact(event.model_dump(mode="json", exclude=_COMMON))
        self.append_row(event.seq, event.ts, event.type, summary)

    def append_row(self, seq: int, ts: float, type_name: str, summary: str) -> None:
        self._seqs.append(seq)
        self._ts.append(ts)
        self._codes.append(type_code(clean(type_name, keep_newlines=False, limit=32)))
        self._texts.append(clean(summary, keep_newlines=False, limit=SUMMARY_LIMIT))

    def clear(self) -> None:
        self.__init__()  # type: ignore[misc]

    def row(self, index: int) -> HistoryRow:
        return HistoryRow(
            index, self._seqs[index], self._ts[index], TYPE_NAMES[self._codes[index]],
            self._texts[index],
        )

    def rows(self, start: int, stop: int) -> Iterator[HistoryRow]:
        for index in range(max(start, 0), min(stop, len(self._texts))):
            yield self.row(index)

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

    def search(self, needle: str, start: int = 0, *, backwards: bool = False) -> int | None:
        """Index of the next row (from `start`, wrapping) whose type or text contains `needle`."""
        n = len(self._texts)
        if not n or not needle:
            return None
        needle = needle.lower()
        order = (
            [*range(start, -1, -1), *range(n - 1, start, -1)]
            if backwards
            else [*range(start, n), *range(0, start)]
        )
        for index in order:
            if needle in self._texts[index].lower() or needle in TYPE_NAMES[self._codes[index]]:
                return index
        return None

    def filtered(self, needle: str) -> list[int]:
        """Indices of every row matching `needle` (type or text, case-insensitive)."""
        needle = needle.lower()
        return [
            i for i, text in enumerate(self._texts)
            if needle in text.lower() or needle in TYPE_NAMES[self._codes[i]]
        ]

    def nbytes(self) -> int:
        """Approximate memory held, for the benchmark's bytes-per-event figure."""
        import sys

        return (
            self._seqs.buffer_info()[1] * self._seqs.itemsize
            + self._ts.buffer_info()[1] * self._ts.itemsize
            + len(self._codes)
            + sys.getsizeof(self._texts)
            + sum(sys.getsizeof(t) for t in self._texts)
        )
