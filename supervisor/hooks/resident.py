"""The sessions the resident hook server keeps open between calls, their state in memory.

Loading a session's state and saving it again was most of a hook step (parsing and writing the
engine's snapshot, a rename per call). The resident server (`supervisor.hooks.server`) keeps
each live session's `Guard` open instead, its state and engine in memory, and saves the state
lazily: at most every `SAVE_EVERY_S` while the session is busy, once it has had no call for
`IDLE_SAVE_S`, when it is put away (`EVICT_S` without a call, or more than `KEPT` sessions)
and when the server stops. A decision, an escalation, a refusal or the end of the session is
still saved by the step that makes it.

Nothing is lost when the server is killed: every step's events are in the session's log before
its answer leaves, and a state loaded behind the log has the missing steps done again on it
(`supervisor.guard.catch_up`). Nothing is owned twice: each step holds the session's lock
(`flock`) and starts by taking in what any other process saved or logged since (a direct
Python hook, a second call of the same session, which gets a guard of its own while the kept
one is in use), so a state kept here is never saved over a newer one.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from supervisor.guard.core import Guard

SAVE_EVERY_S = 30.0
IDLE_SAVE_S = 5.0
EVICT_S = 300.0
KEPT = 256


@dataclass(slots=True)
class _Kept:
    guard: Guard
    used: float
    busy: bool = False


class Resident:
    """The guards a server keeps open, one per session; each used by one call at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: dict[tuple[Path, str], _Kept] = {}

    def take(self, root: Path, session_id: str) -> Guard | None:
        """The session's kept guard, this caller's alone until `give_back`; None when none is
        kept or another call is using it (the caller opens one of its own)."""
        with self._lock:
            kept = self._kept.get((root, session_id))
            if kept is None or kept.busy:
                return None
            kept.busy = True
            return kept.guard

    def give_back(self, guard: Guard) -> None:
        """A call is done with `guard`: kept for the session's next call, or closed when the
        session already has one kept."""
        key = (guard.root, guard.session_id)
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept.guard is guard:
                kept.busy, kept.used = False, time.monotonic()
                return
            keep = kept is None and not guard.ended
            if keep:
                self._kept[key] = _Kept(guard, time.monotonic())
        if not keep:
            guard.close()

    def drop(self, guard: Guard) -> None:
        """Forget a kept guard whose state could not be brought up to date, unsaved."""
        with self._lock:
            kept = self._kept.get((guard.root, guard.session_id))
            if kept is not None and kept.guard is guard:
                del self._kept[(guard.root, guard.session_id)]
        guard.journal.discard()

    def tidy(self, now: float | None = None) -> None:
        """Save the idle sessions' states, and close those not called for `EVICT_S` (the
        oldest first while more than `KEPT` are kept). Run now and then by the server."""
        now = time.monotonic() if now is None else now
        with self._lock:
            idle = sorted((k for k in self._kept.items() if not k[1].busy),
                          key=lambda item: item[1].used)
            surplus = len(self._kept) - KEPT
            evict, save = [], []
            for key, kept in idle:
                if surplus > 0 or now - kept.used >= EVICT_S or kept.guard.ended:
                    surplus -= 1
                    del self._kept[key]
                    evict.append(kept.guard)
                elif now - kept.used >= IDLE_SAVE_S and kept.guard.journal.dirty:
                    kept.busy = True
                    save.append(kept)
        for guard in evict:
            guard.close()
        for kept in save:
            try:
                kept.guard.journal.flush()
            finally:
                with self._lock:
                    kept.busy = False

    def close_all(self) -> None:
        """Save and close every kept session (the server stops)."""
        with self._lock:
            kept, self._kept = list(self._kept.values()), {}
        for item in kept:
            item.guard.close()
