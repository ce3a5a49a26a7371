"""Follow every session under a root: one watchfiles watcher, a tailer per file, batches out.

One `awatch` over `<root>/sessions` (recursive, filtered to the two protocol files and the
session directories themselves) tells us which files changed; each change means "read from my
offset", never "one new line". A slow safety re-scan catches anything the watcher missed
(network file systems, overflowing inotify queues) and notices vanished sessions. Reading and
parsing run in a worker thread so a large first load never blocks the consumer's event loop.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from supervisor.protocol.codec import BadLine, LineKind
from supervisor.protocol.models import Event
from supervisor.protocol.names import CONTROL_FILE, EVENTS_FILE
from supervisor.store.paths import SESSION_ID_RE, list_session_ids, sessions_dir
from supervisor.store.tailer import Tailer

_FILES: dict[str, LineKind] = {EVENTS_FILE: "events", CONTROL_FILE: "control"}
DEFAULT_POLL_BUDGET = 8 * 1024 * 1024
"""Bytes read per file per delivery: a huge first load arrives in several batches."""


@dataclass(slots=True)
class SessionBatch:
    """New lines of one file of one session, as delivered to the consumer."""

    session_id: str
    kind: LineKind
    events: list[Event] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)
    reset: bool = False
    """The file was truncated or replaced: drop what was built from it before."""
    gone: bool = False
    """The session's directory vanished."""


Consumer = Callable[[list[SessionBatch]], Awaitable[None]]


class Follower:
    """Tails `events.jsonl` and `control.jsonl` of every session under `root`."""

    def __init__(
        self,
        root: Path,
        *,
        rescan_interval: float = 1.5,
        step_ms: int = 50,
        force_polling: bool | None = None,
        poll_budget: int = DEFAULT_POLL_BUDGET,
    ) -> None:
        self.root = Path(root)
        self.sessions = sessions_dir(self.root)
        self.rescan_interval = rescan_interval
        self.step_ms = step_ms
        self.force_polling = force_polling
        self.poll_budget = poll_budget
        self._tailers: dict[tuple[str, LineKind], Tailer] = {}
        self._known: set[str] = set()
        self._behind: set[str] = set()
        """Sessions whose last poll stopped at the budget (a large file still loading)."""

    def scan(self) -> list[SessionBatch]:
        """Discover sessions and read every file once; synchronous, usable without watching."""
        current = set(list_session_ids(self.root))
        batches = [SessionBatch(sid, "events", gone=True) for sid in sorted(self._known - current)]
        for sid in self._known - current:
            self._behind.discard(sid)
            self._tailers.pop((sid, "events"), None)
            self._tailers.pop((sid, "control"), None)
        self._known = current
        for sid in sorted(current):
            batches.extend(self.poll_session(sid))
        return batches

    def poll_session(self, session_id: str) -> list[SessionBatch]:
        """Read whatever is new in one session's files (up to the poll budget each)."""
        self._known.add(session_id)
        self._behind.discard(session_id)
        out = []
        for name, kind in _FILES.items():
            tailer = self._tailers.get((session_id, kind))
            if tailer is None:
                tailer = Tailer(self.sessions / session_id / name, kind)
                self._tailers[(session_id, kind)] = tailer
            polled = tailer.poll(self.poll_budget)
            if polled.more:
                self._behind.add(session_id)
            if polled:
                out.append(
                    SessionBatch(
                        session_id, kind, polled.events, polled.offsets, polled.bad_lines,
                        polled.reset,
                    )
                )
        return out

    async def run(self, consumer: Consumer, stop_event: asyncio.Event | None = None) -> None:
        """Deliver batches to `consumer` until `stop_event` is set (or forever)."""
        from watchfiles import awatch  # imported here: only long-running readers need it

        stop = stop_event or asyncio.Event()
        if not self.sessions.is_dir():
            try:
                self.sessions.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError:
                await self._poll_forever(consumer, stop)
                return
        await self._deliver(consumer, await asyncio.to_thread(self._scan_all))
        last_scan = time.monotonic()
        watcher = awatch(
            self.sessions,
            watch_filter=self._filter,
            step=self.step_ms,
            debounce=1600,
            stop_event=stop,
            rust_timeout=int(self.rescan_interval * 1000),
            yield_on_timeout=True,
            force_polling=self.force_polling,
            recursive=True,
        )
        async for changes in watcher:
            touched = {sid for _, path in changes if (sid := self._session_of(path))}
            full = time.monotonic() - last_scan >= self.rescan_interval
            if full:
                last_scan = time.monotonic()
                batches = await asyncio.to_thread(self._scan_all)
            elif touched:
                batches = await asyncio.to_thread(self._poll_all, sorted(touched))
            else:
                continue
            await self._deliver(consumer, batches)

    async def _poll_forever(self, consumer: Consumer, stop: asyncio.Event) -> None:
        """Fallback when the root cannot be watched: re-scan on the safety interval."""
        while not stop.is_set():
            await self._deliver(consumer, await asyncio.to_thread(self._scan_all))
            try:
                await asyncio.wait_for(stop.wait(), self.rescan_interval)
            except TimeoutError:
                pass

    def _scan_all(self) -> list[SessionBatch]:
        return self.scan()

    def _poll_all(self, session_ids: list[str]) -> list[SessionBatch]:
        batches = []
        for sid in session_ids:
            if (self.sessions / sid).is_dir():
                batches.extend(self.poll_session(sid))
            else:
                self._behind.discard(sid)
        return batches

    async def _deliver(self, consumer: Consumer, batches: list[SessionBatch]) -> None:
        """Hand batches over; then keep reading files that stopped at the budget."""
        while True:
            if batches:
                await consumer(batches)
            if not self._behind:
                return
            batches = await asyncio.to_thread(self._poll_all, sorted(self._behind))

    def _session_of(self, path: str) -> str | None:
        try:
            rel = Path(path).relative_to(self.sessions).parts
        except ValueError:
            return None
        return rel[0] if rel and SESSION_ID_RE.fullmatch(rel[0]) else None

    def _filter(self, _change: object, path: str) -> bool:
        try:
            rel = Path(path).relative_to(self.sessions).parts
        except ValueError:
            return False
        return len(rel) == 1 or (len(rel) == 2 and rel[1] in _FILES)

