"""Which history rows the session screen shows: quiet (heartbeats folded) and filtered.

A waiting agent writes a heartbeat every few seconds; shown one per row they bury what the agent
did. The layout folds each run of consecutive heartbeats into one row ("… 42 heartbeats, 3 min")
unless the operator turns that off, and applies the history filter: comma-separated clauses,
each a phrase that a row's `type summary` must contain, or, with a leading `-`, must not
(`-verdict allow` hides the verdicts that let a call through; `bash, -heartbeat` keeps the rows
that mention bash, heartbeats aside).

The layout is UI-free and built incrementally: `extend()` takes in the rows appended to the
store since the last call. Without a filter it looks at nothing but the type codes; a filter
reads the rows' lines, so a new filter over a big session is built in a worker thread (the
store's reads are thread-safe) and the UI thread then catches up with `extend()`.
"""

from array import array
from bisect import bisect_right
from dataclasses import dataclass

from supervisor.tui.history import HistoryStore, type_code

HEARTBEAT = type_code("heartbeat")


@dataclass(frozen=True, slots=True)
class Clause:
    """One phrase of a filter; `exclude`: rows containing it are hidden."""

    phrase: str
    exclude: bool


@dataclass(frozen=True, slots=True)
class HistoryFilter:
    """A parsed filter: include clauses (all must match) and exclude clauses (none may)."""

    text: str
    clauses: tuple[Clause, ...]

    @classmethod
    def parse(cls, text: str) -> "HistoryFilter | None":
        """`make, -verdict allow` → include "make", exclude "verdict allow"; None if empty."""
        clauses = []
        for part in text.split(","):
            phrase = part.strip()
            exclude = phrase.startswith(("-", "!"))
            phrase = phrase[1:].strip() if exclude else phrase
            if phrase:
                clauses.append(Clause(phrase.lower(), exclude))
        return cls(text.strip(), tuple(clauses)) if clauses else None

    def shown(self, store: HistoryStore, start: int, stop: int) -> list[int]:
        """Indices in `start..stop` this filter lets through."""
        keep: set[int] | None = None
        for clause in self.clauses:
            if not clause.exclude:
                hits = set(store.matches(clause.phrase, start, stop))
                keep = hits if keep is None else keep & hits
        if keep is None:
            keep = set(range(start, stop))
        for clause in self.clauses:
            if clause.exclude and keep:
                keep -= set(store.matches(clause.phrase, start, stop))
        return sorted(keep)


@dataclass(frozen=True, slots=True)
class Entry:
    """One shown row: the store row `index`, or a folded run of `count` heartbeats from
    `index` to `last`."""

    index: int
    count: int = 1
    last: int = -1

    @property
    def folded(self) -> bool:
        return self.count > 1


class HistoryLayout:
    """The rows shown, as store indices, with folded heartbeat runs; grows with the store."""

    __slots__ = ("_entries", "_lone", "_runs", "filter", "folded", "hidden", "quiet", "store",
                 "upto")

    def __init__(self, store: HistoryStore, *, quiet: bool = True,
                 filter: HistoryFilter | None = None) -> None:
        self.store = store
        self.quiet = quiet
        """Fold runs of heartbeats into one row."""
        self.filter = filter
        self._entries = array("i")
        """Store index of each shown row (of the first heartbeat of a folded run)."""
        self._runs: dict[int, tuple[int, int]] = {}
        """Shown row → (store index of the run's last heartbeat, heartbeats in the run)."""
        self.upto = 0
        """Store rows looked at so far."""
        self.hidden = 0
        """Rows the filter hides."""
        self.folded = 0
        """Heartbeats not shown as a row of their own (folded runs, and lone ones)."""
        self._lone: int | None = None
        """Quiet: the store index of the latest heartbeat, held back while it is alone (a
        lone heartbeat between two steps is left out; a second one makes a folded run)."""

    def __len__(self) -> int:
        return len(self._entries)

    def extend(self, stop: int | None = None) -> bool:
        """Take in the store's rows up to `stop` (default: all); True when the rows changed."""
        stop = len(self.store) if stop is None else min(stop, len(self.store))
        start = self.upto
        if stop <= start:
            return False
        shown = (range(start, stop) if self.filter is None
                 else self.filter.shown(self.store, start, stop))
        self.hidden += (stop - start) - len(shown)
        entries, runs = self._entries, self._runs
        type_of = self.store.code_of
        for index in shown:
            beat = type_of(index) == HEARTBEAT
            if not self.quiet or not beat:
                entries.append(index)
                self._lone = None
            elif entries and type_of(entries[-1]) == HEARTBEAT and self._lone is None:
                row = len(entries) - 1  # a folded run goes on
                _, count = runs[row]
                runs[row] = (index, count + 1)
                self.folded += 1
            elif self._lone is not None:  # the second in a row: a folded run of two
                entries.append(self._lone)
                runs[len(entries) - 1] = (index, 2)
                self._lone = None
                self.folded += 1
            else:  # alone so far: held back
                self._lone = index
                self.folded += 1
        self.upto = stop
        return True

    def entry(self, row: int) -> Entry:
        index = self._entries[row]
        run = self._runs.get(row)
        return Entry(index) if run is None else Entry(index, run[1], run[0])

    def index(self, row: int) -> int:
        """The store index a shown row starts at."""
        return self._entries[row]

    def row_of(self, index: int) -> int | None:
        """The shown row that holds store row `index` (None: hidden by the filter)."""
        row = bisect_right(self._entries, index) - 1
        if row < 0:
            return None
        if self._entries[row] == index:
            return row
        run = self._runs.get(row)
        if run is not None and index <= run[0] and self.store.code_of(index) == HEARTBEAT:
            return row
        return None
