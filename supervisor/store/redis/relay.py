"""The relay: ships one host's sessions to Redis and brings operators' decisions back.

    relay = Relay(root, RedisStore(target), host="ci-runner-3")
    asyncio.run(relay.run(stop_event))

The agent side never talks to the network: it writes its local session directory, and the relay
follows the local root (one watchfiles watcher, a raw tailer per session) and appends each line
of each `events.jsonl` to the session's event stream with the `SHIP` script, which makes it
exactly once and in order: Redis keeps every session's position (generation of the file, byte
offset shipped up to, last `seq`), refuses a run with a gap and skips what it already has. The
local file is the buffer: while Redis cannot be reached (down, cut off, out of memory) the relay
holds a bounded run of lines in memory, leaves the rest in the file, retries with exponential
backoff, and reports its backlog; nothing is lost and the agents notice nothing.

Decisions come back the other way: one blocking XREAD over the control streams of the host's
live sessions, each decision appended to the session's `control.jsonl` unless its `decision_id`
is already there (so exactly once across crashes), where the guard already reads it.

The relay's state (positions, control cursors, connection, last error) is saved under
`<root>/relay/` about once a second; `supervisor relay --status` reads it and computes the
backlog from the local files. A lock file keeps a second relay of the same root and store out.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from supervisor.store.errors import StoreError
from supervisor.store.paths import (
    SESSION_ID_RE,
    ensure_private_dir,
    list_session_ids,
    session_files,
    sessions_dir,
)
from supervisor.store.provenance import SEAL_FIELD, sealed
from supervisor.store.redis import replies, scripts
from supervisor.store.redis.backend import RedisStore
from supervisor.store.redis.budget_sync import BudgetSync
from supervisor.store.redis.connect import store_error
from supervisor.store.redis.layout import ACTIVITY_MAXLEN, PREVIEW_BYTES, session_name
from supervisor.store.redis.memory_sync import MemorySync
from supervisor.store.relay_lock import RELAY_DIR
from supervisor.store.tailer import RawTailer
from supervisor.store.voice import resume_seal, voucher
from supervisor.store.writer import LineWriter

CHUNK_LINES = 500
CHUNK_BYTES = 1024 * 1024
"""At most this much of one session goes into one script call."""
READ_AHEAD_LINES = 5000
"""Lines of one session held in memory while Redis has not confirmed them; the rest waits in
the file."""
RESCAN_S = 2.0
SAVE_EVERY_S = 1.0
HEAL_S = 10.0
MEMORY_EVERY_S = 2.0
"""How often the projects' failure memory is exchanged with the fleet (`memory_sync`)."""
BUDGET_EVERY_S = 1.0
"""How often this host's shares of the fleet's budgets are renewed (`budget_sync`)."""
"""How often a relay puts its host back into the host registry (see `_heal_registry`)."""
BACKOFF_MIN_S, BACKOFF_MAX_S = 0.2, 10.0
CONTROL_BLOCK_MS = 500


@dataclass(slots=True)
class Position:
    """Where one session stands between its local file and Redis (saved in the state file)."""

    gen: int = 1
    """Generation of the local file: +1 each time it is truncated or replaced."""
    next: int = 0
    """Byte offset up to which Redis has confirmed the lines."""
    seq: int = 0
    """The `seq` of the last event Redis confirmed."""
    sealed: int = 0
    """The `seq` of the last line before `next` whose seal held (`store.voice`): a relay
    restarted here goes on checking from it, so a copy of an earlier sealed line appended
    later is still the agent's, without reading the file from its start."""
    vouched: str = ""
    """`sealed`'s own seal (`voice.resume_seal`, with `gen` and `next`); without a valid one
    the file is checked from its start up to `next` (the state written by hand)."""
    ino: int | None = None
    ctl: str | None = None
    """Id of the last control entry brought into `control.jsonl` (None: not known yet)."""
    ended: bool = False
    """A `session_end` was shipped: its control stream is no longer watched."""


@dataclass(slots=True)
class Line:
    """One line of a local events file, as shipped."""

    offset: int
    data: bytes
    seq: int | None = None
    sealed: int | None = None
    """The `seq` of the last line whose seal held, this one included (None: a bad line)."""
    reason: str = ""
    """Why the line is unusable (too long); empty for a whole line."""
    size: int = 0


@dataclass(slots=True)
class Chunk:
    """A run of lines of one session: the byte range [start, end) of its file they cover."""

    start: int
    end: int
    lines: list[Line]


class Shipper:
    """One session's side of the relay: its tailer, its unconfirmed lines, its position."""

    def __init__(self, root: Path, session_id: str, pos: Position) -> None:
        self.session_id = session_id
        self.root = root
        self.files = session_files(root, session_id)
        self.pos = pos
        self._check_generation()
        found = voucher(root, session_id)
        self.key = found.key if found is not None else None
        """The root's key, to check seals with (None: a recording, or no key: nothing is
        checked, as by a reader)."""
        if self.key is not None and pos.next and not hmac.compare_digest(
                pos.vouched, resume_seal(self.key, session_id, pos.gen, pos.next, pos.sealed)):
            pos.sealed = self._sealed_between(0, 0, pos.next)  # not ours: checked from 0
        self._restart(pos.next)

    def _check_generation(self) -> None:
        """A file replaced or truncated while no relay ran is a new generation."""
        try:
            st = os.stat(self.files.events)
        except OSError:
            return
        if (self.pos.ino is not None and st.st_ino != self.pos.ino) or st.st_size < self.pos.next:
            self.pos.gen += 1
            self.pos.next = self.pos.seq = self.pos.sealed = 0
        self.pos.ino = st.st_ino

    def _restart(self, offset: int) -> None:
        """Read on from `offset`, where `pos.sealed` is the last seal that held."""
        self.tailer = RawTailer(self.files.events, start=offset)
        self.vouch = None if self.key is None else voucher(
            self.root, self.session_id, offset, key=self.key, last=self.pos.sealed)
        """Checks the seals of the lines that speak in the supervisor's voice: a reader of
        the Redis store has no key to (`store.voice`)."""
        self.pending: list[Line] = []
        self.pending_from = offset
        """Where the unconfirmed run starts (a line boundary)."""
        self.read_to = offset

    def rewind(self, gen: int, offset: int) -> None:
        """Ship again from `offset` of generation `gen` (what Redis says it has). The last
        seal that held before it is checked on from where it is known (where Redis confirmed
        up to, when that is not past `offset`), else from the file's start."""
        pos = self.pos
        if self.key is not None:
            pos.sealed = self._sealed_between(pos.next, pos.sealed, offset) \
                if gen == pos.gen and pos.next <= offset else self._sealed_between(0, 0, offset)
        pos.gen, pos.next = gen, offset
        self._restart(offset)

    def _sealed_between(self, start: int, last: int, end: int) -> int:
        """The `seq` of the last line before `end` whose seal held, checking the lines from
        `start` (where it was `last`) on, as they would be shipped."""
        vouch = None if self.key is None else voucher(self.root, self.session_id, start,
                                                      key=self.key, last=last)
        if vouch is None or start >= end:
            return last if vouch is not None else 0
        try:
            with open(self.files.events, "rb") as f:
                f.seek(start)
                left, rest = end - start, b""
                while left > 0:
                    block = f.read(min(left, CHUNK_BYTES))
                    if not block:
                        break
                    left -= len(block)
                    *lines, rest = (rest + block).split(b"\n")
                    for raw in lines:
                        vouch.note(raw)
        except OSError:
            return 0  # nothing read: no earlier seal is known (a copy then passes, as before)
        return vouch.last

    def read(self) -> bool:
        """Take in new lines (up to the read-ahead bound); True when there is more to read."""
        if len(self.pending) >= READ_AHEAD_LINES:
            return True
        batch = self.tailer.poll(CHUNK_BYTES * 4)
        if batch.reset:
            self.pos.gen += 1
            self.pos.next = self.pos.seq = self.pos.sealed = 0
            self.pending = []
            self.pending_from = 0
            if self.vouch is not None:
                self.vouch.restart()
        if self.tailer.inode is not None:
            self.pos.ino = self.tailer.inode
        vouch = self.vouch
        lines = []
        for offset, raw in zip(batch.offsets, batch.raw, strict=True):
            shipped = raw if vouch is None else vouch.relayed(raw)
            lines.append(Line(offset, shipped, _seq_noting_end(shipped, self.pos),
                              None if vouch is None else vouch.last))
        lines += [Line(b.offset or 0, b.raw[:PREVIEW_BYTES], None, None, b.reason, b.size or 0)
                  for b in batch.bad_lines if b.offset is not None]
        lines.sort(key=lambda line: line.offset)
        self.pending += lines
        self.read_to = self.tailer.offset
        return batch.more

    def chunks(self) -> list[Chunk]:
        """The unconfirmed lines in script-sized runs; a run of blank lines alone ships as an
        empty chunk that only moves the position."""
        if not self.pending:
            return [Chunk(self.pending_from, self.read_to, [])] \
                if self.read_to > self.pending_from else []
        out: list[Chunk] = []
        run: list[Line] = []
        size = 0
        start = self.pending_from
        for line in self.pending:
            if run and (len(run) >= CHUNK_LINES or size + len(line.data) > CHUNK_BYTES):
                out.append(Chunk(start, line.offset, run))
                start, run, size = line.offset, [], 0
            run.append(line)
            size += len(line.data)
        out.append(Chunk(start, self.read_to, run))
        return out

    def confirmed(self, gen: int, upto: int) -> None:
        """Redis has every line before `upto` of generation `gen`."""
        self.pos.gen, self.pos.next = gen, upto
        kept = [line for line in self.pending if line.offset >= upto]
        for line in self.pending[:len(self.pending) - len(kept)]:
            if line.seq is not None:
                self.pos.seq = line.seq
            if line.sealed is not None:
                self.pos.sealed = line.sealed
        self.pending = kept
        self.pending_from = max(self.pending_from, upto)

    def saved(self) -> Position:
        """The position as the state file keeps it: `sealed` under its seal."""
        pos = self.pos
        if self.key is not None:
            pos.vouched = resume_seal(self.key, self.session_id, pos.gen, pos.next, pos.sealed)
        return pos

    def backlog(self) -> tuple[int, int]:
        """Events and bytes of the local file that Redis has not confirmed."""
        return file_backlog(self.files.events, self.pos.next)

    def known_decisions(self) -> set[str]:
        """Decision ids in the local control file, read afresh (decisions are rare, and the
        file may have been replaced); `StoreError` when it cannot be read."""
        try:
            data = self.files.control.read_bytes()
        except FileNotFoundError:
            return set()
        except OSError as exc:
            raise StoreError(f"cannot read {self.files.control}: {exc.strerror}") from None
        found = set()
        for raw in data.splitlines():
            with contextlib.suppress(ValueError, RecursionError):
                line = json.loads(raw)
                if isinstance(line, dict) and isinstance(line.get("decision_id"), str):
                    found.add(line["decision_id"])
        return found


def _seq_noting_end(raw: bytes, pos: Position) -> int | None:
    """The `seq` of a line (None when it has none); notes a `session_end` in `pos`."""
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    if value.get("type") == "session_end":
        pos.ended = True
    seq = value.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def file_backlog(path: Path, shipped_to: int) -> tuple[int, int]:
    """Complete lines, and their bytes, of `path` after offset `shipped_to`."""
    try:
        with open(path, "rb") as f:
            f.seek(shipped_to)
            data = f.read()
    except OSError:
        return 0, 0
    end = data.rfind(b"\n") + 1
    return data.count(b"\n", 0, end), end


@dataclass(slots=True)
class RelayStatus:
    """What `supervisor relay --status` shows (saved with the positions)."""

    host: str
    store: str
    identity: str
    pid: int = 0
    started: float = 0.0
    updated: float = 0.0
    connected: bool = False
    error: str | None = None
    error_since: float | None = None
    last_ok: float | None = None
    shipped: int = 0
    """Lines shipped since this relay started."""
    decisions: int = 0
    """Decisions brought into control files since this relay started."""
    sessions: dict[str, Position] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["version"] = 1
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RelayStatus:
        sessions = {sid: Position(**{k: v for k, v in pos.items()
                                     if k in Position.__dataclass_fields__})
                    for sid, pos in (data.get("sessions") or {}).items()
                    if isinstance(pos, dict) and SESSION_ID_RE.fullmatch(sid)}
        fields = {k: v for k, v in data.items()
                  if k in cls.__dataclass_fields__ and k != "sessions"}
        return cls(**fields, sessions=sessions)


def state_paths(root: Path, host: str, identity: str) -> tuple[Path, Path]:
    """The state file and the lock file of the relay of `root` as `host` to one store."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
    base = Path(root) / RELAY_DIR / f"{host}@{digest}"
    return base.with_suffix(".json"), base.with_suffix(".lock")


def load_status(path: Path) -> RelayStatus | None:
    try:
        data = json.loads(path.read_bytes())
        return RelayStatus.from_json(data) if isinstance(data, dict) else None
    except (OSError, ValueError, TypeError):
        return None


def save_status(path: Path, status: RelayStatus) -> None:
    """Atomically (write aside, rename), private to the user."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = json.dumps(status.to_json(), separators=(",", ":")).encode()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


class RelayBusy(StoreError):
    """Another relay already relays this root to this store."""


class Relay:
    """Relays the sessions under `root` (this host's) to a Redis store. See the module doc."""

    def __init__(self, root: Path, store: RedisStore, host: str, *,
                 log: Callable[[str], None] | None = None, step_ms: int = 50,
                 debounce_ms: int = 100, rescan_s: float = RESCAN_S) -> None:
        from supervisor.store.redis.layout import check_part

        self.root = Path(root)
        self.store = store
        self.host = check_part(host, "host name")
        self.layout = store.layout
        self.log = log or (lambda text: print(f"supervisor relay: {text}", file=sys.stderr,
                                              flush=True))
        self.step_ms, self.debounce_ms, self.rescan_s = step_ms, debounce_ms, rescan_s
        self.state_path, self.lock_path = state_paths(self.root, self.host,
                                                      store.target.identity())
        old = load_status(self.state_path)
        self.status = RelayStatus(self.host, store.describe(), store.target.identity(),
                                  os.getpid(), time.time(),
                                  sessions=old.sessions if old else {})
        self.shippers: dict[str, Shipper] = {}
        self._healed = time.monotonic()
        self._ship = store.client.register_script(scripts.SHIP)
        self._forget = store.client.register_script(scripts.FORGET)
        self._dirty: set[str] = set()
        self._gone: set[str] = set(self.status.sessions)
        """Sessions to remove from the store; at the start, those of the saved state (each
        one found under the root again is taken off by the first look)."""
        self._discover_due = True
        self._wake = asyncio.Event()
        self._reconcile = True
        self._backoff = BACKOFF_MIN_S
        self._lock_fd: int | None = None
        self._changed = True
        self.memory = MemorySync(self.root, store.client, self.layout.prefix, self.host,
                                 self.state_path.with_name(f"{self.state_path.stem}.memory"))
        self.budgets = BudgetSync(self.root, store.client, self.layout.prefix, self.host)

    # -- life cycle ----------------------------------------------------------------------------

    def acquire(self) -> None:
        """Take the relay's lock (`RelayBusy` when another relay holds it)."""
        ensure_private_dir(self.lock_path.parent)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RelayBusy(f"another relay already relays {self.root} as host '{self.host}' "
                            f"to {self.store.describe()}") from None
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    async def run(self, stop: asyncio.Event) -> None:
        """Relay until `stop` is set; then save the state and return."""
        self.acquire()
        try:
            ensure_private_dir(sessions_dir(self.root))
            self.log(f"relaying {self.root} as host '{self.host}' to {self.store.describe()}")
            tasks = [asyncio.create_task(t) for t in (
                self._watch(stop), self._ship_loop(stop), self._control_loop(stop),
                self._save_loop(stop), self._memory_loop(stop), self._budget_loop(stop))]
            await stop.wait()
            self._wake.set()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(task, 5.0)
        finally:
            self.save()
            self.release()

    def save(self) -> None:
        self.status.updated = time.time()
        self.status.sessions = {sid: s.saved() for sid, s in list(self.shippers.items())}
        try:
            save_status(self.state_path, self.status)
        except OSError as exc:  # a full disk: keep relaying, say it once
            self._problem(f"cannot save the relay state ({exc.strerror})")
        self._changed = False

    # -- local side --------------------------------------------------------------------------

    def _discover(self) -> set[str]:
        """Sessions that appeared or vanished under the root since the last look (in the
        round's worker thread, the only one that changes `shippers`); returns them all."""
        current = set(list_session_ids(self.root))
        self._gone -= current
        for sid in sorted(current - self.shippers.keys()):
            pos = self.status.sessions.get(sid) or Position()
            self.shippers[sid] = Shipper(self.root, sid, pos)
        for sid in sorted(self.shippers.keys() - current):
            del self.shippers[sid]
            self._gone.add(sid)
        self._discover_due = False
        return current

    async def _watch(self, stop: asyncio.Event) -> None:
        from watchfiles import awatch

        base = sessions_dir(self.root)
        last_scan = time.monotonic()
        async for changes in awatch(base, step=self.step_ms, debounce=self.debounce_ms,
                                    stop_event=stop, rust_timeout=int(self.rescan_s * 1000),
                                    yield_on_timeout=True, recursive=True,
                                    watch_filter=self._filter):
            for _, path in changes:
                parts = Path(path).relative_to(base).parts
                if parts and SESSION_ID_RE.fullmatch(parts[0]):
                    self._dirty.add(parts[0])
                    if parts[0] not in self.shippers or len(parts) == 1:
                        self._discover_due = True  # a session appeared or vanished
            if time.monotonic() - last_scan >= self.rescan_s:
                # the periodic look: new or vanished sessions here, and where Redis stands
                # (it may have restarted with less than it had, even while we were idle)
                last_scan = time.monotonic()
                self._discover_due = self._reconcile = True
            self._wake.set()

    def _filter(self, _change: object, path: str) -> bool:
        try:
            rel = Path(path).relative_to(sessions_dir(self.root)).parts
        except ValueError:
            return False
        return len(rel) == 1 or (len(rel) == 2 and rel[1] == "events.jsonl")

    # -- shipping ----------------------------------------------------------------------------

    async def _ship_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.rescan_s)
            self._wake.clear()
            if stop.is_set():
                return
            todo = set(self._dirty)
            self._dirty.clear()
            try:
                more = await asyncio.to_thread(self._round, todo)
            except StoreError as exc:
                self._dirty |= todo
                self._problem(str(exc))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self._pause())
                self._wake.set()
                continue
            self._ok()
            if more:
                self._dirty |= more
                self._wake.set()

    def _round(self, todo: set[str]) -> set[str]:
        """Read what is new, ship it, apply what Redis answered (in a worker thread); the
        sessions with more to do. A failure raises `StoreError` (and the next round starts by
        asking Redis where each session stands)."""
        import redis

        try:
            return self._round_unguarded(todo)
        except redis.RedisError as exc:
            self._reconcile = True
            raise store_error(self.store.target, exc) from None

    def _round_unguarded(self, todo: set[str]) -> set[str]:
        if self._discover_due:
            todo |= self._discover()
        if self._reconcile:
            self._reconcile_positions()
        self._forget_gone()
        todo = {sid for sid in todo if sid in self.shippers}
        todo |= {sid for sid, s in self.shippers.items() if s.pending}
        more = {sid for sid in sorted(todo) if self.shippers[sid].read()}
        calls: list[tuple[Shipper, Chunk]] = []
        pipe = self.store.client.pipeline(transaction=False)
        for sid in sorted(todo):
            shipper = self.shippers[sid]
            for chunk in shipper.chunks():
                self._ship(keys=self._keys(sid), args=self._args(shipper, chunk), client=pipe)
                calls.append((shipper, chunk))
        if not calls:
            return more
        results = pipe.execute(raise_on_error=False)
        failed = None
        for (shipper, chunk), result in zip(calls, results, strict=True):
            if isinstance(result, Exception):
                failed = failed or result
                continue
            self._apply(shipper, chunk, result)
        if failed is not None:
            self._reconcile = True
            raise store_error(self.store.target, failed)
        return more | {sid for sid in todo if self.shippers[sid].pending}

    def _keys(self, sid: str) -> list[str]:
        name = session_name(self.host, sid)
        return [self.layout.events(name), self.layout.host(self.host), self.layout.activity,
                self.layout.hosts]

    def _args(self, shipper: Shipper, chunk: Chunk) -> list[Any]:
        sid = shipper.session_id
        args: list[Any] = [self.host, sid, self.layout.control(session_name(self.host, sid)),
                           shipper.pos.gen, chunk.start, chunk.end, ACTIVITY_MAXLEN]
        for line in chunk.lines:
            args += [line.offset, "" if line.seq is None else line.seq, line.reason, line.data,
                     line.size]
        return args

    def _apply(self, shipper: Shipper, chunk: Chunk, result: list[Any]) -> None:
        verdict = result[0].decode() if isinstance(result[0], bytes) else str(result[0])
        gen, upto, shipped = int(result[1]), int(result[2]), int(result[3])
        if shipper.pos.ctl is None:
            shipper.pos.ctl = result[4].decode() if isinstance(result[4], bytes) \
                else str(result[4])
        if verdict == "ok":
            if gen == shipper.pos.gen and upto >= shipper.pending_from:
                shipper.confirmed(gen, upto)
                self.status.shipped += shipped
        elif (gen, upto) != (shipper.pos.gen, shipper.pending_from):
            # Redis has less than we thought (it lost data) or a later generation (we lost
            # our state): ship again from where it stands
            self.log(f"session {shipper.session_id}: Redis is at generation {gen} offset "
                     f"{upto}; shipping again from there")
            shipper.rewind(gen, upto)
            self._dirty.add(shipper.session_id)
        self._changed = True

    def _reconcile_positions(self) -> None:
        """After a start or a failure: what Redis has of each session decides where to go on
        (it may have restarted with less than was shipped, or have more than our state)."""
        import redis

        try:
            known = self.store.client.hgetall(self.layout.host(self.host))
        except redis.RedisError as exc:
            raise store_error(self.store.target, exc) from None
        for sid, shipper in list(self.shippers.items()):
            raw = known.get(sid.encode())
            pos = shipper.pos
            if raw is None:
                if pos.next or shipper.pending_from:
                    shipper.rewind(pos.gen, 0)
                continue
            gen_s, next_s, seq_s, ctl0 = replies.text(raw).split(" ")
            gen, upto = int(gen_s), int(next_s)
            if pos.ctl is None:
                pos.ctl = ctl0
            if gen > pos.gen or (gen == pos.gen and upto != shipper.pending_from):
                shipper.rewind(gen, upto)
                pos.seq = int(seq_s)
        self._reconcile = False

    def _heal_registry(self) -> None:
        """Put this host back into the host registry (`sv:hosts`), should it have been lost
        (deleted by hand, a restore from an old dump): operators list sessions from it."""
        import redis

        with contextlib.suppress(redis.RedisError):
            self.store.client.sadd(self.layout.hosts, self.host)

    def _forget_gone(self) -> None:
        """Sessions whose directory vanished: their stream and position go too."""
        for sid in sorted(self._gone):
            name = session_name(self.host, sid)
            self._forget(keys=[self.layout.events(name), self.layout.host(self.host),
                               self.layout.activity], args=[self.host, sid, ACTIVITY_MAXLEN])
            self._gone.discard(sid)
            self.log(f"session {sid} vanished from {self.root}: removed from the store")

    # -- decisions ---------------------------------------------------------------------------

    async def _control_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            streams = {self.layout.control(session_name(self.host, sid)): s.pos.ctl
                       for sid, s in list(self.shippers.items())
                       if s.pos.ctl is not None and not s.pos.ended}
            if not streams:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
                continue
            try:
                got = await asyncio.to_thread(self._read_control, streams)
            except StoreError as exc:
                # Redis may come back with less than it had: the next round asks it
                self._reconcile = True
                self._wake.set()
                self._problem(str(exc))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self._pause())
                continue
            for key, entries in got:
                sid = replies.text(key).rpartition("/")[2]
                shipper = self.shippers.get(sid)
                if shipper is None:
                    continue
                for entry_id, fields in entries:
                    try:
                        await asyncio.to_thread(self._deliver, shipper, fields)
                    except StoreError as exc:  # the local disk: try again later
                        self._problem(f"session {sid}: decision not written locally: {exc}")
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(stop.wait(), self._pause())
                        break
                    shipper.pos.ctl = replies.text(entry_id)
                    self._changed = True

    def _read_control(self, streams: dict[str, str]) -> list[replies.StreamNews]:
        import redis

        try:
            return replies.xread(self.store.client, streams, count=100, block=CONTROL_BLOCK_MS)
        except redis.RedisError as exc:
            raise store_error(self.store.target, exc) from None

    def _deliver(self, shipper: Shipper, fields: replies.Fields) -> None:
        """Append one decision to the local control file, unless it is already there."""
        try:
            decision = json.loads(fields.get(b"l", b""))
        except (ValueError, RecursionError):
            decision = None
        did = decision.get("decision_id") if isinstance(decision, dict) else None
        if not isinstance(did, str):
            self.log(f"session {shipper.session_id}: skipped a control entry that is not a "
                     "decision")
            return
        if did in shipper.known_decisions():
            return
        line = {k: v for k, v in decision.items() if k not in ("v", "seq", SEAL_FIELD)}
        line = sealed(self.root, shipper.session_id, line)  # a remote operator's: an operator path
        with LineWriter(shipper.files.control) as writer:
            writer.append(line)
        self.status.decisions += 1

    async def _memory_loop(self, stop: asyncio.Event) -> None:
        """The projects' failure memory, shared with the fleet (`memory_sync`)."""
        await self._every(stop, MEMORY_EVERY_S, self.memory.round,
                          "the failure memory was not exchanged")

    async def _budget_loop(self, stop: asyncio.Event) -> None:
        """This host's shares of the fleet's daily budgets (`budget_sync`)."""
        await self._every(stop, BUDGET_EVERY_S, self.budgets.round,
                          "the fleet's budgets were not shared")

    async def _every(self, stop: asyncio.Event, period: float, work: Callable[[], object],
                     failed: str) -> None:
        """Run `work` in a thread every `period` seconds until `stop`; a store or local-disk
        error is a problem to show, and the next round tries again."""
        import redis

        while not stop.is_set():
            try:
                await asyncio.to_thread(work)
            except redis.RedisError as exc:
                self._problem(str(store_error(self.store.target, exc)))
            except OSError as exc:  # the local disk: try again at the next round
                self._problem(f"{failed}: {exc}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), period)

    # -- bookkeeping -------------------------------------------------------------------------

    async def _save_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), SAVE_EVERY_S)
            if self._changed:
                await asyncio.to_thread(self.save)
            if self.shippers and time.monotonic() - self._healed >= HEAL_S:
                self._healed = time.monotonic()
                await asyncio.to_thread(self._heal_registry)

    def _problem(self, text: str) -> None:
        if text != self.status.error:
            events, _ = self.backlog()
            self.log(f"{text}; retrying (backlog {events} events)")
            self.status.error_since = time.time()
        self.status.error = text
        self.status.connected = False
        self._changed = True

    def _ok(self) -> None:
        if not self.status.connected:
            self.log(f"connected to {self.store.describe()}")
            self._changed = True  # saved: `--status` and the guard (fleet budgets) read it
        self.status.connected = True
        self.status.error = None
        self.status.error_since = None
        self.status.last_ok = time.time()
        self._backoff = BACKOFF_MIN_S

    def _pause(self) -> float:
        """The next backoff delay (exponential, with jitter)."""
        delay = self._backoff * random.uniform(0.8, 1.2)
        self._backoff = min(self._backoff * 2, BACKOFF_MAX_S)
        return delay

    def backlog(self) -> tuple[int, int]:
        """Events and bytes not yet confirmed by Redis, over every session."""
        totals = [s.backlog() for s in list(self.shippers.values())]
        return sum(t[0] for t in totals), sum(t[1] for t in totals)


def status_files(root: Path) -> Iterator[Path]:
    """Every relay state file under `root`."""
    base = Path(root) / RELAY_DIR
    with contextlib.suppress(OSError):
        yield from sorted(p for p in base.iterdir() if p.suffix == ".json")
