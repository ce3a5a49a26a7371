"""Prune: remove the sessions that are over and older than an age, said before and after.

Sessions pile up under a root (every agent run is one) and the dashboard and `supervisor
sessions` list them all. `supervisor sessions --prune DAYS` and the dashboard's prune (`C`)
remove the ones an operator no longer needs, with one rule for both:

- only a session that **ended** (`session_end`: completed, aborted, failed, terminated, or
  stopped by a hard limit) and whose latest event is at least the age old; never one that is
  running, idle, waiting, paused, dead (no `session_end`: its agent may only be unreachable),
  unsupervised, broken, empty or recorded, and never one with an escalation still pending;
- never one a caller says must stay (`held`: a run `supervisor run` still remembers, whose
  worktree may wait for a merge);
- each is judged again from the store right before it is removed (an agent could have written
  in the meantime), and what was removed and what was kept, and why, is said.

The store does the removal (`Store.remove_session`): a local root deletes the session's folder;
a shared store (Redis) is pruned on each agent's host, whose relay then removes the sessions
that vanished there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from supervisor.store.base import Store
from supervisor.store.errors import StoreError
from supervisor.store.render import ago
from supervisor.store.summary import ENDED_STATUSES, SessionSummary

DAY_S = 86_400.0
Held = Callable[[str], str | None]
"""Why a session must stay although it is over (None: it may go)."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A session that may be removed, as it was judged."""

    session_id: str
    status: str
    last_ts: float
    events: int

    def describe(self, now: float) -> str:
        """`s1 (completed, last event 9 days ago, 120 events)`."""
        return (f"{self.session_id} ({self.status}, last event {ago(self.last_ts, now)}, "
                f"{self.events} event{'s' if self.events != 1 else ''})")


@dataclass(slots=True)
class Pruned:
    """What a prune did: the sessions removed, those kept with the reason, and those whose
    removal failed with the error."""

    removed: list[Candidate] = field(default_factory=list)
    kept: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


def prunable(summary: SessionSummary, now: float, older_than_s: float) -> str | None:
    """The session's status when it may be pruned, else None (see the module docstring)."""
    status = summary.status(now)
    if status not in ENDED_STATUSES or summary.pending or summary.last_ts is None:
        return None
    return status if now - summary.last_ts >= older_than_s else None


def candidates(summaries: Iterable[SessionSummary], now: float, older_than_s: float,
               held: Held | None = None) -> tuple[list[Candidate], list[tuple[str, str]]]:
    """The sessions a prune would remove, the oldest first, and those over and old enough that
    stay all the same, with the reason (`held`)."""
    chosen: list[Candidate] = []
    kept: list[tuple[str, str]] = []
    for s in summaries:
        status = prunable(s, now, older_than_s)
        if status is None or s.last_ts is None:
            continue
        why = held(s.session_id) if held is not None else None
        if why is not None:
            kept.append((s.session_id, why))
            continue
        chosen.append(Candidate(s.session_id, status, s.last_ts, s.events))
    chosen.sort(key=lambda c: c.last_ts)
    return chosen, kept


def prune(store: Store, chosen: Sequence[Candidate], now: float, older_than_s: float,
          held: Held | None = None) -> Pruned:
    """Remove each of `chosen` that is still prunable when read again; say what became of
    each."""
    done = Pruned()
    for candidate in chosen:
        sid = candidate.session_id
        try:
            status = prunable(store.summary(sid), now, older_than_s)
            why = held(sid) if held is not None else None
            if status is None:
                done.kept.append((sid, "it changed since it was listed (not over, or newer)"))
            elif why is not None:
                done.kept.append((sid, why))
            else:
                store.remove_session(sid)
                done.removed.append(candidate)
        except (StoreError, OSError) as exc:
            done.failed.append((sid, str(exc)))
    return done
