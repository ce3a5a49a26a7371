"""The order of the sessions table: the sessions that need the operator first, as in htop or
k9s a key cycles the sort column and a click on a header sorts by it (again: reversed).

The default, `status`: sessions waiting for an answer first, the oldest escalation first; then
unsupervised ones (their hooks stopped reaching us); then paused ones (an operator holds them);
then every other session, most recently active first.
UI-free: `rank(model, sid, now, column)` is where a session goes (ascending; the table shows
the ranks reversed for a reversed sort), kept per row by `supervisor.tui.session_rows`.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from supervisor.tui.model import DashboardModel

CYCLE = ("status", "last activity", "errors", "level", "agent")
"""The columns the sort key cycles through, in order."""


@dataclass(frozen=True, slots=True)
class Sort:
    """A sort column (a column name of the table) and its direction."""

    column: str = "status"
    reverse: bool = False

    def cycled(self) -> "Sort":
        """The next column of `CYCLE` (from another column: the first)."""
        index = CYCLE.index(self.column) + 1 if self.column in CYCLE else 0
        return Sort(CYCLE[index % len(CYCLE)])

    def clicked(self, column: str) -> "Sort":
        """A click on a header: sort by it, or reverse when it is already the sort column."""
        if column == self.column:
            return Sort(column, not self.reverse)
        return Sort(column)


def rank(model: DashboardModel, sid: str, now: float, column: str) -> tuple[Any, str]:
    """Where `sid` goes when sorted by `column` (ascending; ties by session id, so the order is
    stable): kept per row by `supervisor.tui.session_rows`, which places only the rows that
    changed."""
    return (_KEYS.get(column, _KEYS["status"])(model, sid, now), sid)


def _status(model: DashboardModel, sid: str, now: float) -> tuple[Any, ...]:
    st = model.sessions[sid]
    status = model.status(sid, now)
    last = -(st.summary.last_seen_ts or 0.0)
    if status == "waiting":
        oldest = min((e.get("ts") or 0.0 for e in st.summary.pending.values()), default=0.0)
        return (0, oldest, last)
    if status == "unsupervised":
        return (1, 0.0, last)
    if status == "paused":
        return (2, 0.0, last)
    return (3, 0.0, last)


_KEYS: dict[str, Callable[[DashboardModel, str, float], Any]] = {
    "status": _status,
    "last activity": lambda m, sid, now: -(m.sessions[sid].summary.last_seen_ts or 0.0),
    "errors": lambda m, sid, now: -m.sessions[sid].summary.errors,
    "level": lambda m, sid, now: -m.sessions[sid].summary.level,
    "events": lambda m, sid, now: -m.sessions[sid].summary.events,
    "agent": lambda m, sid, now: (m.sessions[sid].summary.agent or "").lower(),
    "task": lambda m, sid, now: (m.sessions[sid].summary.task or "").lower(),
    "session": lambda m, sid, now: sid.lower(),
}
"""Per column, a key that puts what matters first (most errors, highest level, latest)."""
