"""The Redis store: the store interface over the streams the relays fill (see `layout`).

Sessions are named `host/id`. A reader is an XRANGE from a cursor (a packed stream id), then
XREAD BLOCK while it waits; the follower does one blocking XREAD of the activity stream and then
reads the sessions it names from their cursors (one pipelined round trip), with a re-scan of the
registry every few seconds (new, vanished and quiet sessions, trimmed activity). Its first load
is delivered in pieces, the most recently active sessions first, as the local follower's is
(`loading` says how far it got), so a dashboard shows rows as they are read. Decisions are
appended to a session's control stream by a script that refuses unknown sessions; the relay of
the session's host brings them into its `control.jsonl`.

Every client error becomes a `StoreError` with one line for people (never the password).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from supervisor.protocol.bad_line import BadLine, LineKind
from supervisor.protocol.codec import parse_line
from supervisor.protocol.names import MAX_LINE_BYTES
from supervisor.store.base import Consumer, Cursor, SessionBatch, Store
from supervisor.store.errors import SessionNotFound, StoreError
from supervisor.store.redis import replies, scripts
from supervisor.store.redis.connect import RedisTarget, parse_url, store_error
from supervisor.store.redis.layout import (
    ACTIVITY_MAXLEN,
    PREVIEW_BYTES,
    Layout,
    arrival,
    pack,
    session_name,
    split_name,
    unpack,
)

READ_COUNT = 5000
"""Entries per XRANGE: a long session arrives in several batches."""
PAGE_BYTES = 4 * 1024 * 1024
"""Bytes a page holds at most (`scripts.RANGE`, never fewer than one entry): a relay's
credentials may write entries of any size into its host's streams."""
BLOCK_MS = 500
"""Longest a blocking read waits before looking at its stop flag again."""
RESCAN_S = 5.0
"""How often the follower re-reads the registry and every session's stream end."""
FIRST_LOAD_SESSIONS = 20
"""Sessions read per piece of the follower's first load (one pipelined round trip each)."""
FIRST_LOAD_COUNT = 500
"""Entries of each stream read for a session's first page in the first load: a long
session's start comes with its piece, the rest in `READ_COUNT` pages right after it."""


class RedisStore(Store):
    """Sessions of every host, in Redis. See the module docstring."""

    def __init__(self, target: RedisTarget) -> None:
        self.target = target
        self.layout = Layout(target.prefix)
        self.client = target.client()
        self._decide = self.client.register_script(scripts.DECIDE)
        self._range = self.client.register_script(scripts.RANGE)

    def describe(self) -> str:
        return self.target.describe()

    @contextlib.contextmanager
    def errors(self) -> Iterator[None]:
        """Client errors as `StoreError`s (one line, no password)."""
        import redis

        try:
            yield
        except redis.RedisError as exc:
            raise store_error(self.target, exc) from None

    def check_session_id(self, session_id: str) -> str:
        split_name(session_id)
        return session_id

    def session_ids(self) -> list[str]:
        with self.errors():
            hosts = sorted(replies.text(h) for h in self.client.smembers(self.layout.hosts))
            pipe = self.client.pipeline(transaction=False)
            for host in hosts:
                pipe.hkeys(self.layout.host(host))
            found: list[list[bytes | str]] = pipe.execute()
        return sorted(session_name(host, replies.text(sid))
                      for host, sids in zip(hosts, found, strict=True) for sid in sids)

    def exists(self, session_id: str) -> bool:
        host, sid = split_name(session_id)
        with self.errors():
            return bool(self.client.hexists(self.layout.host(host), sid))

    def require(self, session_id: str) -> str:
        if not self.exists(session_id):
            raise SessionNotFound(f"no session '{session_id}' in {self.describe()}")
        return session_id

    def page(self, key: str, start: str, end: str, count: int, *, reverse: bool = False,
             client: Any = None) -> Any:
        """A page of stream `key` (`read_page` with the store's script and client)."""
        return read_page(self._range, client or self.client, key, start, end, count,
                         reverse=reverse)

    def reader(self, session_id: str, kind: LineKind = "events",
               start: Cursor | None = None) -> RedisReader:
        split_name(session_id)
        return RedisReader(self, session_id, kind, start)

    def follower(self, *, chunk_bytes: int | None = None) -> RedisFollower:
        return RedisFollower(self)

    def log(self, session_id: str) -> RedisLog:
        split_name(session_id)
        return RedisLog(self, self.layout.events(session_id))

    def end_cursor(self, session_id: str) -> Cursor:
        """One past the last entry's id: a reader started there sees only news."""
        split_name(session_id)
        with self.errors():
            _, last = replies.paged(self.page(self.layout.events(session_id), "+", "-", 1,
                                              reverse=True))
        return pack(last[0][0]) + 1 if last else 0

    def append_decision(self, session_id: str, line: dict[str, Any]) -> dict[str, Any]:
        import redis

        host, sid = split_name(session_id)
        fields = {k: v for k, v in line.items() if k not in ("v", "seq", "ts")}
        tail = "".join(f",{json.dumps(k)}:{json.dumps(v, ensure_ascii=False)}"
                       for k, v in fields.items())
        ts = line.get("ts") or time.time()
        try:
            _, written = self._decide(
                keys=[self.layout.control(session_id), self.layout.activity],
                args=[self.layout.host(host), sid, session_id, repr(float(ts)), tail,
                      ACTIVITY_MAXLEN])
        except redis.ResponseError as exc:
            if "NOSESSION" in str(exc):
                raise SessionNotFound(f"no session '{session_id}' in {self.describe()}") \
                    from None
            raise store_error(self.target, exc) from None
        except redis.RedisError as exc:
            raise store_error(self.target, exc) from None
        return json.loads(written)

    def close(self) -> None:
        self.client.close()


def read_page(script: Any, client: Any, key: str, start: str, end: str, count: int, *,
              reverse: bool = False, largest: int = MAX_LINE_BYTES) -> Any:
    """A page of stream `key` (XRANGE from `start` to `end`, or XREVRANGE), read through
    `scripts.RANGE` (`script`: it, registered on a client): an entry holding a value over
    `largest` bytes comes as its line's first 4 KiB marked too large (as a relay ships a line
    too long to read), and the page stops at `PAGE_BYTES`. `client`: the client or a pipeline
    to queue it on (its reply then comes with the pipeline's); read the reply with
    `replies.paged`."""
    return script(keys=[], client=client, args=[
        "XREVRANGE" if reverse else "XRANGE", start, end, count, largest, PAGE_BYTES, key,
        PREVIEW_BYTES])


class RedisReader:
    """A `SessionReader` over one stream: XRANGE from the cursor on, XREAD BLOCK to wait."""

    def __init__(self, store: RedisStore, name: str, kind: LineKind,
                 start: Cursor | None, count: int = READ_COUNT) -> None:
        self.store = store
        self.name = name
        self.kind: LineKind = kind
        self.key = (store.layout.events if kind == "events" else store.layout.control)(name)
        self.after: str | None = unpack(start - 1) if start else None
        """The id of the last entry read (an exclusive lower bound); None: from the start."""
        self.count = count
        self.more = False
        """The last poll stopped at `count` entries: poll again for the rest."""

    def poll(self, timeout: float = 0.0) -> SessionBatch:
        client = self.store.client
        with self.store.errors():
            low = f"({self.after}" if self.after else "-"
            pipe = client.pipeline(transaction=False)
            self.store.page(self.key, low, "+", self.count, client=pipe)
            pipe.exists(self.key)
            found, exists = pipe.execute()
            more, entries = replies.paged(found)
            if not entries and timeout > 0:  # woken by one entry, then read as a page
                got = replies.xread(client, {self.key: self.after or "0-0"}, count=1,
                                    block=max(1, int(timeout * 1000)))
                if got:
                    more, entries = replies.paged(
                        self.store.page(self.key, low, "+", self.count))
                exists = exists or bool(entries)
        batch = decode(self.name, self.kind, entries)
        batch.missing = not exists
        self.more = more or len(entries) >= self.count
        if entries:
            self.after = replies.text(entries[-1][0])
        return batch

    def close(self) -> None:
        """The store's connection pool outlives its readers."""


def decode(name: str, kind: LineKind, entries: list[replies.Entry]) -> SessionBatch:
    """Stream entries as a batch: lines parsed as the local tailer parses them, unusable lines
    as bad lines with their place in the agent's file, a generation mark as a reset."""
    batch = SessionBatch(name, kind)
    for entry_id, fields in entries:
        cursor = pack(entry_id)
        if b"r" in fields:  # the file was truncated or replaced: what came before is gone
            batch.events.clear()
            batch.cursors.clear()
            batch.arrived.clear()
            batch.bad_lines.clear()
            batch.bad_cursors.clear()
            batch.reset = True
            continue
        raw = replies.raw(fields.get(b"l", b""))
        offset = _number(fields.get(b"o"))
        reason = fields.get(b"b")
        if reason is not None:
            bad = BadLine(replies.text(reason, "replace")[:200], raw, offset,
                          _number(fields.get(b"z")) or None)
        else:
            parsed = parse_line(raw, kind)
            if type(parsed) is not BadLine:
                batch.events.append(parsed)  # type: ignore[arg-type]
                batch.cursors.append(cursor)
                batch.arrived.append(arrival(cursor))
                continue
            bad = BadLine(parsed.reason, parsed.raw, offset, parsed.size)
        batch.bad_lines.append(bad)
        batch.bad_cursors.append(cursor)
    return batch


def _number(value: bytes | str | None) -> int | None:
    """A count field of an entry (`o`, `z`): written by another host's relay, so anything."""
    try:
        number = int(value) if value is not None else None
    except ValueError:
        return None
    return number if number is not None and 0 <= number < 2**63 else None


class RedisLog:
    """Random access to one event stream by cursor (stream id)."""

    def __init__(self, store: RedisStore, key: str) -> None:
        self.store = store
        self.key = key

    def lines_at(self, cursors: Sequence[Cursor]) -> list[dict[str, Any] | str]:
        """One pipelined round trip for all of them."""
        if not cursors:
            return []
        try:
            with self.store.errors():
                pipe = self.store.client.pipeline(transaction=False)
                for cursor in cursors:
                    entry_id = unpack(cursor)
                    self.store.page(self.key, entry_id, entry_id, 1, client=pipe)
                found = pipe.execute()
        except StoreError as exc:
            return [f"the store is unreachable ({exc})"] * len(cursors)
        return [_line(replies.paged(reply)[1]) for reply in found]

    def find(self, needle: str, start: Cursor) -> list[Cursor]:
        """A scan of the stream from `start`, a page at a time."""
        raw = needle.lower().encode("utf-8")
        hits: list[Cursor] = []
        low = unpack(max(start, 0))
        while True:
            try:
                with self.store.errors():
                    more, page = replies.paged(self.store.page(self.key, low, "+", READ_COUNT))
            except StoreError:
                return hits
            for entry_id, fields in page:
                if raw and raw in replies.raw(fields.get(b"l", b"")).lower():
                    hits.append(pack(entry_id))
            if not more and len(page) < READ_COUNT:
                return hits
            low = "(" + replies.text(page[-1][0])


def _line(entries: list[replies.Entry]) -> dict[str, Any] | str:
    if not entries:
        return "the entry is gone from the stream"
    fields = entries[0][1]
    if b"b" in fields:
        return f"an unusable line ({replies.text(fields[b'b'], 'replace')})"
    try:
        value = json.loads(fields.get(b"l", b""))
    except (ValueError, RecursionError):
        return "not JSON"
    return value if isinstance(value, dict) else {"value": value}


class RedisFollower:
    """Follows every session of a Redis store (the store interface's `Follow`)."""

    def __init__(self, store: RedisStore, *, rescan_interval: float = RESCAN_S,
                 block_ms: int = BLOCK_MS, count: int = READ_COUNT) -> None:
        self.store = store
        self.rescan_interval = rescan_interval
        self.block_ms = block_ms
        self.count = count
        self._readers: dict[tuple[str, LineKind], RedisReader] = {}
        self._known: set[str] = set()
        self._behind: set[str] = set()
        self._activity: str | None = None
        """The id of the last activity entry seen."""
        self.problem: str | None = None
        """Why the store cannot be read right now (None while it can): for the dashboard."""
        self.loading: tuple[int, int] | None = (0, 0)
        """Until the first load is read: (sessions read, sessions found; 0 before they are
        listed); None from the delivery of the piece that completes it on (and when the store
        could not be read then: the re-scans read everything at once), as `Follower.loading`."""

    def _activity_from_now(self) -> None:
        """Follow the activity stream from its present end (once): what is written while the
        sessions are read is read again after, never missed."""
        if self._activity is None:
            with self.store.errors():
                _, last = replies.paged(self.store.page(self.store.layout.activity, "+", "-",
                                                        1, reverse=True))
            self._activity = replies.text(last[0][0]) if last else "0-0"

    def scan(self) -> list[SessionBatch]:
        """Read the registry and every session's news once, synchronously."""
        self._activity_from_now()
        current = set(self.store.session_ids())
        batches = [self._forget(name) for name in sorted(self._known - current)]
        batches += self.poll(sorted(current))
        return batches

    def poll(self, names: Sequence[str], count: int | None = None) -> list[SessionBatch]:
        """What is new in these sessions' streams (one pipelined round trip), up to `count`
        entries of each (by default the readers' own count)."""
        readers = []
        for name in names:
            self._known.add(name)
            self._behind.discard(name)
            for kind in ("events", "control"):
                reader = self._readers.get((name, kind))
                if reader is None:
                    reader = self._readers[(name, kind)] = RedisReader(
                        self.store, name, kind, None, self.count)
                readers.append(reader)
        if not readers:
            return []
        with self.store.errors():
            pipe = self.store.client.pipeline(transaction=False)
            for reader in readers:
                low = f"({reader.after}" if reader.after else "-"
                self.store.page(reader.key, low, "+", count or reader.count, client=pipe)
            found = pipe.execute()
        out = []
        for reader, reply in zip(readers, found, strict=True):
            more, entries = replies.paged(reply)
            if entries:
                reader.after = replies.text(entries[-1][0])
                if more or len(entries) >= (count or reader.count):
                    self._behind.add(reader.name)
                batch = decode(reader.name, reader.kind, entries)
                if batch:
                    out.append(batch)
        return out

    def _forget(self, name: str) -> SessionBatch:
        self._known.discard(name)
        self._behind.discard(name)
        self._readers.pop((name, "events"), None)
        self._readers.pop((name, "control"), None)
        return SessionBatch(name, "events", gone=True)

    def _really_gone(self, names: set[str]) -> set[str]:
        """The sessions of `names` that are gone: their host's position hash (only that host's
        relay may write it) no longer has them. Anyone who may write the activity stream can
        say "gone"; only the owning host can make it so."""
        if not names:
            return names
        ordered = sorted(n for n in names if _valid(n))
        with self.store.errors():
            pipe = self.store.client.pipeline(transaction=False)
            for name in ordered:
                host, sid = split_name(name)
                pipe.hexists(self.store.layout.host(host), sid)
            still = pipe.execute()
        return {name for name, there in zip(ordered, still, strict=True) if not there}

    def _wait(self) -> tuple[set[str], set[str]]:
        """Block on the activity stream; the sessions it names as moved, and as gone (woken by
        one entry, then read as a page: a relay may write entries of any size there too)."""
        activity = self.store.layout.activity
        moved: set[str] = set()
        gone: set[str] = set()
        with self.store.errors():
            if not replies.xread(self.store.client, {activity: self._activity or "0-0"},
                                 count=1, block=self.block_ms):
                return moved, gone
            _, entries = replies.paged(self.store.page(
                activity, f"({self._activity or '0-0'}", "+", 10_000))
        for entry_id, fields in entries:
            self._activity = replies.text(entry_id)
            name = replies.text(fields.get(b"s", b""), "replace")
            (gone if fields.get(b"k") == b"g" else moved).add(name)
        return moved, gone

    def _step(self, rescan: bool) -> list[SessionBatch]:
        """One round: wait for activity (or rescan), then read what moved."""
        if rescan:
            return self.scan()
        moved, gone = self._wait()
        gone = self._really_gone(gone & self._known)
        batches = [self._forget(n) for n in sorted(gone)]
        moved -= gone
        valid = [n for n in sorted(moved) if _valid(n)]
        batches += self.poll(valid)
        if self._behind:
            batches += self.poll(sorted(self._behind - moved))
        return batches

    async def run(self, consumer: Consumer, stop_event: asyncio.Event | None = None) -> None:
        """Deliver batches until `stop_event` is set; a store that cannot be reached is retried
        with backoff (and said so in `problem`), never raised."""
        stop = stop_event or asyncio.Event()
        last_scan = 0.0
        if await self._first_load(consumer, stop):
            last_scan = time.monotonic()
        backoff = 0.2
        while not stop.is_set():
            rescan = time.monotonic() - last_scan >= self.rescan_interval or bool(self.problem)
            try:
                batches = await asyncio.to_thread(self._step, rescan)
            except StoreError as exc:
                self.problem = str(exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), backoff)
                backoff = min(backoff * 2, 5.0)
                continue
            self.problem = None
            backoff = 0.2
            if rescan:
                last_scan = time.monotonic()
            if batches:
                await consumer(batches)


    async def _first_load(self, consumer: Consumer, stop: asyncio.Event) -> bool:
        """Read every session once, `FIRST_LOAD_SESSIONS` at a time, the most recently active
        first, each piece delivered (and the rest of its long sessions, page by page) before
        the next is read: the consumer shows the first rows at once and answers its keys
        between pieces. False when the store could not be read (`problem` says why; the
        re-scans read it all later)."""
        try:
            found = await asyncio.to_thread(self._newest_first)
            done = 0
            self.loading = (done, len(found))
            while done < len(found) and not stop.is_set():
                piece = found[done:done + FIRST_LOAD_SESSIONS]
                batches = await asyncio.to_thread(self.poll, piece, FIRST_LOAD_COUNT)
                done += len(piece)
                self.loading = (done, len(found)) if done < len(found) else None
                while True:
                    if batches:
                        await consumer(batches)
                    if not self._behind or stop.is_set():
                        break
                    batches = await asyncio.to_thread(self.poll, sorted(self._behind))
            return True
        except StoreError as exc:
            self.problem = str(exc)
            return False
        finally:
            self.loading = None

    def _newest_first(self) -> list[str]:
        """The sessions of the registry, the most recently active first (the time of the last
        entry of each events stream: one pipelined round trip)."""
        self._activity_from_now()
        names = sorted(self.store.session_ids())
        with self.store.errors():
            pipe = self.store.client.pipeline(transaction=False)
            for name in names:
                self.store.page(self.store.layout.events(name), "+", "-", 1, reverse=True,
                                client=pipe)
            lasts = pipe.execute()

        def last_ms(reply: Any) -> int:
            _, entries = replies.paged(reply)
            return int(replies.text(entries[0][0]).split("-")[0]) if entries else 0

        return [name for _, name in sorted(
            (-last_ms(reply), name) for name, reply in zip(names, lasts, strict=True))]


def _valid(name: str) -> bool:
    try:
        split_name(name)
    except ValueError:
        return False
    return True


def open_url(url: str, options: Any) -> RedisStore:
    """`redis://` and `rediss://` (the registry entry of `supervisor.store.open`)."""
    try:
        import redis  # noqa: F401 - a clear message when the client is missing
    except ImportError:
        raise StoreError("the Redis store needs the 'redis' package (pip install redis)") \
            from None
    return RedisStore(parse_url(url, options))
