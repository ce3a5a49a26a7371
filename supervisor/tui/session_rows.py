"""The sessions table's rows, kept by diff: at each update only the sessions that changed are
looked at again, so an update's cost follows what changed, not how many sessions the store holds.

A row is made again (its cells, whether the filter shows it, where the sort puts it) when its
session's `version` moved (new events, a decision sent), when it is new, and when time alone may
have changed what it shows: a live session's status (its agent can go idle or die without a
word) at every update, and its "last activity" when that text next turns (`ago_changes_at`: a
row showing `3d ago` is left alone for hours). Shown rows are kept sorted by their rank
(`session_order.rank`), each changed row taken out and put back in its place (`bisect`), never
the whole list sorted again. UI-free: the screen gives it how to make a row's cells and whether
its filter shows a session; the table widget is told what moved and which rows' cells changed.
"""

import heapq
from bisect import bisect_left, insort
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from supervisor.store.render import ago_changes_at
from supervisor.tui.model import DashboardModel, SessionState
from supervisor.tui.session_order import Sort, rank

Cells = tuple[Text, ...]


@dataclass(slots=True)
class Row:
    """What one session's row was made from, and what it is."""

    state: SessionState
    """The session's state it was made from (one forgotten and found again is another)."""
    version: int
    due: float
    """When time alone may change it (the clock's time; inf: never)."""
    cells: Cells
    place: tuple[Any, str] | None
    """Its rank among the shown rows, None when the filter hides it."""


@dataclass(slots=True)
class Update:
    """What one `SessionRows.update` changed."""

    order: list[str] | None
    """Every shown row in order, when a row was added, left or moved (else None)."""
    cells: dict[str, Cells] = field(default_factory=dict)
    """The rows made again that are shown (the table compares their cells with its own)."""
    made: int = 0
    """Rows made again (shown or not): what the update cost."""


class SessionRows:
    """Every session's row for the sessions table, by diff (see the module docstring)."""

    def __init__(self, model: DashboardModel, cells: Callable[[str, float], Cells],
                 shows: Callable[[str, float], bool]) -> None:
        self.model = model
        self.cells = cells
        self.shows = shows
        self.sort = Sort()
        self.rows: dict[str, Row] = {}
        self._ranked: list[tuple[Any, str]] = []
        """The shown rows' places, ascending (the table shows them reversed for a reversed
        sort, ties as well)."""
        self._due: list[tuple[float, str]] = []
        """(due, session) of rows to look at again at that time; stale entries are skipped."""

    @property
    def shown(self) -> int:
        return len(self._ranked)

    def order(self) -> list[str]:
        ranked = [sid for _, sid in self._ranked]
        return ranked[::-1] if self.sort.reverse else ranked

    def reset(self, sort: Sort) -> None:
        """Make every row again at the next update (the sort, the filter or the clock's
        meaning changed: the operator asked, so a full pass is fine)."""
        self.sort = sort
        self.rows.clear()
        self._ranked.clear()
        self._due.clear()

    def update(self, now: float) -> Update:
        """Bring the rows up to date with the model at `now`."""
        sessions = self.model.sessions
        rows = self.rows
        changed = [sid for sid, st in sessions.items()
                   if (row := rows.get(sid)) is None or row.version != st.version
                   or row.state is not st]
        new = sum(1 for sid in changed if sid not in rows)
        gone = [sid for sid in rows if sid not in sessions] \
            if len(rows) + new != len(sessions) else []
        while self._due and self._due[0][0] <= now:
            due, sid = heapq.heappop(self._due)
            row = rows.get(sid)
            if row is not None and row.due == due and sid in sessions:
                changed.append(sid)
        moved = False
        for sid in gone:
            moved |= self._unplace(rows.pop(sid))
        out = Update(None)
        for sid in dict.fromkeys(changed):  # once each
            old = rows.get(sid)
            row = rows[sid] = self._make(sid, now)
            out.made += 1
            if old is None or old.place != row.place:
                if old is not None:
                    moved |= self._unplace(old)
                if row.place is not None:
                    insort(self._ranked, row.place)
                    moved = True
            if row.place is not None:
                out.cells[sid] = row.cells
        if moved:
            out.order = self.order()
        return out

    def _make(self, sid: str, now: float) -> Row:
        st = self.model.sessions[sid]
        version = st.version
        cells = self.cells(sid, now)  # may mark the session broken (a row that cannot be drawn)
        due = now if self.model.timed(sid) else ago_changes_at(st.summary.last_seen_ts, now)
        if due != float("inf"):
            heapq.heappush(self._due, (due, sid))
        place = rank(self.model, sid, now, self.sort.column) if self.shows(sid, now) else None
        return Row(st, version, due, cells, place)

    def _unplace(self, row: Row) -> bool:
        """Take the row out of the shown order; True when it was shown."""
        if row.place is None:
            return False
        del self._ranked[bisect_left(self._ranked, row.place)]
        return True
