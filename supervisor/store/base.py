"""The store interface: what operators and tools do with sessions, whatever holds them.

Two implementations: the local directory tree (`supervisor.store.local`, the default) and Redis
Streams (`supervisor.store.redis`), chosen by URL in `supervisor.store.open`. Everything above
the store (the dashboard, the CLI, the operator's side of the guard) goes through this seam:

- `session_ids()`, `summaries()`, `summary(sid)`: what sessions there are and how they stand
  (`kept_summary(sid)`: the same row when the store keeps it, without reading the events);
- `reader(sid, kind, start)`: a session's events (or control lines) from a cursor, incrementally;
- `follower()`: new lines of every session, delivered in batches to an async consumer;
- `log(sid)`: random access by cursor, for the dashboard's virtual history view;
- `append_decision(sid, line)` and `wait_outcome(...)`: an operator's decision and what became
  of it.

A **cursor** is an opaque integer naming the position of one line in one session's log: the byte
offset of the line locally, the packed stream id in Redis. Cursors increase along a log; nothing
above the store computes one, it only hands back what the store gave it.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from supervisor.protocol.bad_line import BadLine, LineKind

if TYPE_CHECKING:
    import asyncio

    from supervisor.protocol.models import Event
    from supervisor.store.paths import SessionFiles
    from supervisor.store.summary import SessionSummary

Cursor = int
"""The position of one line in a session's log (see the module docstring); opaque."""

OUTCOME_TYPES = ("decision_applied", "decision_ignored")


@dataclass(slots=True)
class SessionBatch:
    """New lines of one log of one session, in log order."""

    session_id: str
    kind: LineKind
    events: list[Event] = field(default_factory=list)
    cursors: list[Cursor] = field(default_factory=list)
    """The cursor of each event, parallel to `events`."""
    bad_lines: list[BadLine] = field(default_factory=list)
    bad_cursors: list[Cursor] = field(default_factory=list)
    """The cursor of each bad line, parallel to `bad_lines` (their `offset` is where they are
    in the agent's file)."""
    reset: bool = False
    """The log was truncated or replaced: drop what was built from it before."""
    gone: bool = False
    """The session vanished."""
    missing: bool = False
    """The log does not exist (yet, or any more)."""
    arrived: list[float] = field(default_factory=list)
    """When the store received each event (epoch seconds by the store's clock), parallel to
    `events`; empty when the store cannot say (a local file). Liveness across hosts is judged
    by it: an agent's own time stamps carry its clock, which may be behind."""

    def __bool__(self) -> bool:
        return bool(self.events or self.bad_lines or self.reset or self.gone)


Consumer = Callable[[list[SessionBatch]], Awaitable[None]]


class SessionReader(Protocol):
    """Reads one log of one session from a cursor on, a batch at a time."""

    def poll(self, timeout: float = 0.0) -> SessionBatch:
        """What was appended since the last poll; waits up to `timeout` s for something."""
        ...

    def close(self) -> None: ...


class SessionLog(Protocol):
    """Random access to one session's event log by cursor (the dashboard's history view)."""

    def lines_at(self, cursors: Sequence[Cursor]) -> list[dict[str, Any] | str]:
        """The event at each cursor as a JSON dict, or a reason (str) when it is unreadable."""
        ...

    def find(self, needle: str, start: Cursor) -> list[Cursor]:
        """Cursors from `start` on of the lines whose raw JSON contains `needle` (any case):
        candidates, to be confirmed on the shown text."""
        ...


class Follow(Protocol):
    """Follows every session of a store (see `Store.follower`)."""

    def scan(self) -> list[SessionBatch]:
        """Read everything new once, synchronously."""
        ...

    async def run(self, consumer: Consumer, stop_event: asyncio.Event | None = None) -> None:
        """Deliver batches to `consumer` until `stop_event` is set."""
        ...


class Store(ABC):
    """Sessions, wherever they are kept. See the module docstring."""

    noun = "store"
    """What `describe()` names, for a label such as `root: ~/runs` or `store: redis://...`."""

    @abstractmethod
    def describe(self) -> str:
        """Where the sessions are, for people (never with a password in it)."""

    @abstractmethod
    def check_session_id(self, session_id: str) -> str:
        """`session_id` when it is a valid name in this store, else `InvalidSessionId`."""

    @abstractmethod
    def session_ids(self) -> list[str]:
        """Every session, sorted."""

    @abstractmethod
    def exists(self, session_id: str) -> bool: ...

    def require(self, session_id: str) -> str:
        """`session_id` when the session exists, else `SessionNotFound` (or `InvalidSessionId`)."""
        from supervisor.store.errors import SessionNotFound

        self.check_session_id(session_id)
        if not self.exists(session_id):
            raise SessionNotFound(f"no session '{session_id}' in {self.describe()}")
        return session_id

    @abstractmethod
    def reader(self, session_id: str, kind: LineKind = "events",
               start: Cursor | None = None) -> SessionReader:
        """A reader of the session's events (or control lines) from `start` (None: the
        beginning)."""

    @abstractmethod
    def follower(self, *, chunk_bytes: int | None = None) -> Follow:
        """A follower of every session; `chunk_bytes` bounds one delivery per log, so a huge
        first load arrives in several batches."""

    @abstractmethod
    def log(self, session_id: str) -> SessionLog:
        """Random access to the session's events by cursor."""

    @abstractmethod
    def end_cursor(self, session_id: str) -> Cursor:
        """Where the session's event log ends now (a reader started there sees only news)."""

    def tail_cursor(self, session_id: str, lines: int) -> Cursor | None:
        """Where the last `lines` lines of the event log start, for a reader that wants only
        them (`supervisor tail -n`); None: from the beginning (the log is not longer, or this
        store cannot tell without reading it)."""
        return None

    @abstractmethod
    def append_decision(self, session_id: str, line: dict[str, Any]) -> dict[str, Any]:
        """Append one operator decision (already validated) to the session's control channel;
        return it as written."""

    def removal_refusal(self) -> str | None:
        """Why this store does not remove sessions (`remove_session`), or None when it does.
        A shared store is pruned where its sessions are written: on each agent's host."""
        return (f"sessions are not removed from {self.describe()} directly: prune them on the "
                "agent's host (`supervisor sessions --prune DAYS` there); its relay then "
                "removes them here")

    def remove_session(self, session_id: str) -> None:
        """Remove one session, its events, control lines and files, from the store
        (`supervisor.operator.prune` decides which)."""
        from supervisor.store.errors import StoreError

        raise StoreError(self.removal_refusal() or "sessions are not removed here")

    def is_recording(self, session_id: str | None = None) -> bool:
        """True when the store (or that one session) holds recordings: shown as recorded, and
        `append_decision` refuses to write there (`supervisor.store.recordings`)."""
        return False

    def local_files(self, session_id: str) -> SessionFiles | None:
        """The session's files when they are on this machine (checkpoints, the guard's state),
        else None: what needs them (a checkpoint diff, a manual rollback) runs on the agent's
        host."""
        return None

    def close(self) -> None:  # noqa: B027 - a store without connections has nothing to do
        """Release connections; the store may not be used after."""

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- built on the primitives above -------------------------------------------------------

    def read_all(self, session_id: str, kind: LineKind = "events") -> SessionBatch:
        """Every line of one log, as one batch."""
        reader = self.reader(session_id, kind)
        try:
            whole = reader.poll()
            while True:
                more = reader.poll()
                if not more:
                    return whole
                if more.reset:
                    whole = more
                    continue
                whole.events += more.events
                whole.cursors += more.cursors
                whole.arrived += more.arrived
                whole.bad_lines += more.bad_lines
                whole.bad_cursors += more.bad_cursors
        finally:
            reader.close()

    def summary(self, session_id: str) -> SessionSummary:
        """The session folded into its one-row summary."""
        from supervisor.store.summary import SessionSummary

        summary = SessionSummary(session_id)
        batch = self.read_all(session_id)
        arrivals = iter(batch.arrived)
        for event in batch.events:
            summary.apply(event, next(arrivals, None))
        summary.bad_lines = len(batch.bad_lines)
        return summary

    def kept_summary(self, session_id: str) -> SessionSummary | None:
        """The session's summary if the store keeps one that is cheap to have (a few small
        reads, not its events); None when it does not. The dashboard shows these rows first,
        then reads every session whole. This store keeps none."""
        return None

    def keep_summary(self, session_id: str) -> None:
        """Bring the session's kept summary up to date (read what is new, keep the fold), so
        that the next `kept_summary` has it. This store keeps none: nothing to do."""
        return None

    def summaries(self) -> list[SessionSummary]:
        """Summaries of every session, most recently active first."""
        found = [self.summary(sid) for sid in self.session_ids()]
        found.sort(key=lambda s: s.last_ts or 0.0, reverse=True)
        return found

    def wait_outcome(self, session_id: str, decision_id: str, after: Cursor,
                     timeout: float) -> dict[str, Any] | None:
        """Wait up to `timeout` s for the agent side to record `decision_applied` or
        `decision_ignored` for `decision_id` after cursor `after`; that event as a dict, or the
        `session_end` when the session ended first (the decision will never be read), or None
        when neither came in time (the agent may pick it up later)."""
        reader = self.reader(session_id, "events", start=after)
        end = time.monotonic() + timeout
        try:
            while True:
                batch = reader.poll(timeout=max(0.0, min(0.5, end - time.monotonic())))
                for event in batch.events:
                    if (event.type in OUTCOME_TYPES and
                            getattr(event, "decision_id", None) == decision_id) or \
                            event.type == "session_end":
                        return event.model_dump(mode="json")
                if time.monotonic() >= end:
                    return None
        finally:
            reader.close()
