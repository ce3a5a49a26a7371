"""The fleet's totals, kept as sessions change: who waits for an answer, the day's cost, loops.

The sessions screen shows on each tick the "Needs you" queue and, on its root line, what the
agents spent today and inside their loops. Summing these over every session at each tick cost
a walk of the whole store four times a second (unseen at 1,000 sessions, felt at 10,000), while
only a few sessions change between two ticks. `FleetTotals` holds each session's share of the
totals as it was last counted; `count(sid, state)` is called for every session the model
touched (and `drop` for one it forgot): the share counted before is taken out of the totals and
the new one put in. The queue then only looks at the sessions that have something pending
(their liveness still judged at each call: it changes with time alone).

`tests/test_tui_fleet_totals.py` checks the totals against a full recount after random
changes.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the model imports this module
    from supervisor.tui.model import SessionState


@dataclass(frozen=True, slots=True)
class Share:
    """One session's part of the totals, as counted."""

    waiting: bool
    """It has escalations that wait for an answer (and its folder is there)."""
    cost_by_day: tuple[tuple[str, float], ...]
    loop_cost: float
    looping: bool
    """Its loops spent something (tokens or cost)."""
    loop_unknown: bool


NOTHING = Share(False, (), 0.0, False, False)


def share_of(state: "SessionState") -> Share:
    """What `state` adds to the totals now."""
    loops = state.loops
    looping = bool(loops.tokens or loops.cost)
    return Share(
        waiting=not state.gone and bool(state.summary.pending) and bool(state.summary.needs_you()),
        cost_by_day=tuple(state.cost_by_day.items()),
        loop_cost=loops.cost if looping else 0.0,
        looping=looping,
        loop_unknown=looping and bool(loops.unknown),
    )


class FleetTotals:
    """The totals over every session of the model, kept by difference."""

    def __init__(self) -> None:
        self._shares: dict[str, Share] = {}
        self.waiting: set[str] = set()
        """Sessions with escalations waiting for an answer (the queue's candidates)."""
        self._day_cost: dict[str, float] = {}
        self._day_spenders: dict[str, int] = {}
        self.loop_cost = 0.0
        self.loopers = 0
        self.loop_unknown = 0

    def count(self, session_id: str, state: "SessionState") -> None:
        """Count the session as it is now (instead of as it was last counted)."""
        share = share_of(state)
        if self._shares.get(session_id) != share:
            self._move(session_id, share)

    def drop(self, session_id: str) -> None:
        """The session is no longer in the model."""
        if session_id in self._shares:
            self._move(session_id, NOTHING)
            del self._shares[session_id]

    def day_cost(self, day: str) -> tuple[float, int]:
        """(the known cost of `day` over every session, the sessions that spent that day)."""
        spenders = self._day_spenders.get(day, 0)
        return (max(0.0, self._day_cost[day]) if spenders else 0.0), spenders

    def _move(self, session_id: str, new: Share) -> None:
        old = self._shares.get(session_id, NOTHING)
        self._shares[session_id] = new
        if new.waiting:
            self.waiting.add(session_id)
        else:
            self.waiting.discard(session_id)
        for sign, share in ((-1, old), (1, new)):
            for day, cost in share.cost_by_day:
                spenders = self._day_spenders.get(day, 0) + sign
                if spenders:
                    self._day_spenders[day] = spenders
                    self._day_cost[day] = self._day_cost.get(day, 0.0) + sign * cost
                else:  # nobody spent that day any more: no rounding left behind
                    self._day_spenders.pop(day, None)
                    self._day_cost.pop(day, None)
            self.loop_cost += sign * share.loop_cost
            self.loopers += sign * share.looping
            self.loop_unknown += sign * share.loop_unknown
        if not self.loopers:
            self.loop_cost = 0.0
