"""Follow every session under a root: one watchfiles watcher, a tailer per file, batches out.

The local store's `follower()` (see `supervisor.store.base.Follow`); batches carry each line's
byte offset as its cursor.

One `awatch` over `<root>/sessions` (recursive, filtered to the two protocol files and the
session directories themselves) tells us which files changed; each change means "read from my
offset", never "one new line". A slow safety re-scan catches anything the watcher missed
(network file systems, overflowing inotify queues) and notices vanished sessions. Reading and
parsing run in a worker thread so a large first load never blocks the consumer's event loop.

The first load is delivered in pieces (`FIRST_LOAD_BYTES` each), the most recently written
sessions first, and `loading` says how far it got: a consumer (the dashboard) shows the first
sessions while the rest are read, instead of waiting for every file of a large root.
"""

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from supervisor.protocol.bad_line import LineKind
from supervisor.protocol.names import CONTROL_FILE, EVENTS_FILE
from supervisor.store.base import Consumer, SessionBatch
from supervisor.store.errors import UnreadableStore
from supervisor.store.local import local_batch
from supervisor.store.paths import (
    SESSION_ID_RE,
    ensure_private_dir,
    list_session_ids,
    sessions_dir,
)
from supervisor.store.tailer import Tailer
from supervisor.store.voice import root_key, voucher

_FILES: dict[str, LineKind] = {EVENTS_FILE: "events", CONTROL_FILE: "control"}
DEFAULT_POLL_BUDGET = 8 * 1024 * 1024
"""Bytes read per file per delivery: a huge first load arrives in several batches."""
FIRST_LOAD_BYTES = 64 * 1024
"""Bytes of the first load read per delivery (at least one session each, and at most this
much of each file): a few short sessions, or the start of a long one, folded by the consumer
in well under a second even on a loaded machine, so its screen shows them at once and answers
keys between pieces (256 KB held a key back 1.4 s at a load of 17 on 2 cores)."""


class Follower:
    """Tails `events.jsonl` and `control.jsonl` of every session under `root`."""

    def __init__(
        self,
        root: Path,
        *,
        rescan_interval: float = 1.5,
        step_ms: int = 50,
        debounce_ms: int = 100,
        force_polling: bool | None = None,
        poll_budget: int = DEFAULT_POLL_BUDGET,
    ) -> None:
        self.root = Path(root)
        self.sessions = sessions_dir(self.root)
        self.rescan_interval = rescan_interval
        self.step_ms = step_ms
        self.debounce_ms = debounce_ms
        """Longest the watcher groups changes before yielding. It yields earlier, after any step
        in which no new path changed; this bounds the lag when new paths keep appearing (many
        sessions starting at once)."""
        self.force_polling = force_polling
        self.poll_budget = poll_budget
        self._tailers: dict[tuple[str, LineKind], Tailer] = {}
        self._key: bytes | None = None
        self._known: set[str] = set()
        self._behind: set[str] = set()
        self.problem: str | None = None
        """Why the sessions folder could not be read at the last scan (None: it could)."""
        self.loading: tuple[int, int] | None = (0, 0)
        """Until the first load is read: (sessions read, sessions found; 0 before they are
        listed); None from the delivery of the piece that completes it on (and when the root
        cannot be watched: each re-scan then reads everything at once)."""

    def scan(self) -> list[SessionBatch]:
        """Discover sessions and read every file once; synchronous, usable without watching.
        A sessions folder that cannot be read (any more) is said in `problem`; the sessions
        known so far are kept as they were, and the next scan tries again."""
        try:
            current = set(list_session_ids(self.root))
        except UnreadableStore as exc:
            self.problem = str(exc)
            return []
        self.problem = None
        batches = [self._forget(sid) for sid in sorted(self._known - current)]
        for sid in sorted(current):
            batches.extend(self.poll_session(sid))
        return batches

    def _voice_key(self) -> bytes | None:
        """The root's key for checking seals (`store.voice`), read once."""
        if self._key is None:
            self._key = root_key(self.root)
        return self._key

    def _forget(self, session_id: str) -> SessionBatch:
        """Drop a vanished session's state; the batch that tells the consumer so."""
        self._known.discard(session_id)
        self._behind.discard(session_id)
        self._tailers.pop((session_id, "events"), None)
        self._tailers.pop((session_id, "control"), None)
        return SessionBatch(session_id, "events", gone=True)

    def poll_session(self, session_id: str, budget: int | None = None) -> list[SessionBatch]:
        """Read whatever is new in one session's files (up to `budget` bytes each, by default
        the poll budget)."""
        self._known.add(session_id)
        self._behind.discard(session_id)
        out = []
        for name, kind in _FILES.items():
            tailer = self._tailers.get((session_id, kind))
            if tailer is None:
                vouch = (voucher(self.root, session_id, key=self._voice_key())
                         if kind == "events" else None)
                tailer = Tailer(self.sessions / session_id / name, kind, vouch=vouch)
                self._tailers[(session_id, kind)] = tailer
            polled = tailer.poll(self.poll_budget if budget is None else budget)
            if polled.more:
                self._behind.add(session_id)
            if polled:
                out.append(local_batch(session_id, kind, polled))
        return out

    async def run(self, consumer: Consumer, stop_event: asyncio.Event | None = None) -> None:
        """Deliver batches to `consumer` until `stop_event` is set (or forever)."""
        from watchfiles import awatch  # imported here: only long-running readers need it

        stop = stop_event or asyncio.Event()
        try:
            if not self.sessions.is_dir():
                ensure_private_dir(self.sessions)
            await self._watch(awatch, consumer, stop)
        except OSError as exc:  # cannot be watched (unreadable, replaced): re-scan instead
            self.problem = self.problem or f"cannot watch {self.sessions}: {exc.strerror or exc}"
        await self._poll_forever(consumer, stop)

    async def _watch(self, awatch: Any, consumer: Consumer, stop: asyncio.Event) -> None:
        await self._first_load(consumer, stop)
        last_scan = time.monotonic()
        watcher = awatch(
            self.sessions,
            watch_filter=self._filter,
            step=self.step_ms,
            debounce=self.debounce_ms,
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
            await self._deliver(consumer, batches, stop)

    async def _poll_forever(self, consumer: Consumer, stop: asyncio.Event) -> None:
        """Fallback when the root cannot be watched: re-scan on the safety interval."""
        self.loading = None  # each scan reads everything at once
        while not stop.is_set():
            await self._deliver(consumer, await asyncio.to_thread(self._scan_all), stop)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.rescan_interval)

    async def _first_load(self, consumer: Consumer, stop: asyncio.Event) -> None:
        """Read every session once, in pieces of about `FIRST_LOAD_BYTES`, the most recently
        written first (the sessions an operator looks at first, and in the table's default
        order rows that arrive later mostly go below them); `loading` counts them."""
        try:
            found = await asyncio.to_thread(self._newest_first)
            self.problem = None
            done = 0
            self.loading = (done, len(found))
            while done < len(found) and not stop.is_set():
                batches, read = await asyncio.to_thread(self._read_piece, found, done)
                done += read
                self.loading = (done, len(found)) if done < len(found) else None
                await self._deliver(consumer, batches, stop)
        except UnreadableStore as exc:  # said as a scan says it; the re-scans read it later
            self.problem = str(exc)
        finally:
            self.loading = None

    def _newest_first(self) -> list[str]:
        def written(sid: str) -> float:
            try:
                return (self.sessions / sid / EVENTS_FILE).stat().st_mtime
            except OSError:  # no events yet (or unreadable): its batches say so
                return 0.0

        ids = list_session_ids(self.root)
        return sorted(ids, key=lambda sid: (-written(sid), sid))

    def _read_piece(self, session_ids: list[str], start: int) -> tuple[list[SessionBatch], int]:
        """The next piece of the first load from `start`: (its batches, sessions read)."""
        batches: list[SessionBatch] = []
        size = 0
        read = 0
        for sid in session_ids[start:]:
            if read and size >= FIRST_LOAD_BYTES:
                break
            read += 1
            try:
                if not (self.sessions / sid).is_dir():
                    continue  # vanished since it was listed: never shown, nothing to say
            except OSError:  # unreadable now: the next full scan says why
                continue
            # a huge session gives the piece its first `FIRST_LOAD_BYTES` only (its end is
            # read at once after it, at the poll budget): its screen is up after that much
            batches.extend(self.poll_session(sid, FIRST_LOAD_BYTES))
            size += sum(self._tailers[(sid, kind)].read_position for kind in _FILES.values())
        return batches, read

    def _scan_all(self) -> list[SessionBatch]:
        return self.scan()

    def _poll_all(self, session_ids: list[str]) -> list[SessionBatch]:
        batches = []
        for sid in session_ids:
            try:
                is_dir = (self.sessions / sid).is_dir()
            except OSError:  # unreadable now: the next full scan says why
                continue
            if is_dir:
                batches.extend(self.poll_session(sid))
            elif sid in self._known:
                batches.append(self._forget(sid))
        return batches

    async def _deliver(
        self, consumer: Consumer, batches: list[SessionBatch], stop: asyncio.Event | None = None
    ) -> None:
        """Hand batches over; then keep reading files that stopped at the budget."""
        while True:
            if batches:
                await consumer(batches)
            if not self._behind or (stop is not None and stop.is_set()):
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

