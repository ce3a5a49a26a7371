"""The failure memory across a fleet: each host's relay shares its projects' memory logs.

Every project has one stream in Redis, `sv:mem:<digest>` (an entry per record: `r` the record,
`o` the host that learned it), and `sv:memprojects` maps each digest to the project's name. A
relay, every few seconds (`MemorySync.round`, in the relay's worker thread):

- ships the records appended to its root's memory logs since the last round (its position in
  each log is kept in its state), except those it brought in itself (marked `"via": "redis"`);
- reads every project's stream from where it last got to, and appends the records other hosts
  learned to the local log of that project (created when the host has never seen it), so a
  session on this host is told what failed on another. A record that forgets everything
  replaces the local log (with what came after it), as `forget --all` does on its own host.

The operator reaches the shared memory with `supervisor memory --store redis://...`
(`FleetMemory`): it reads a project's stream, and adds its `forget` and `off`/`on` records
with the origin `operator:<host>` (no relay's host name has a colon, so every relay brings them
in, this host's too); `forget --all` adds the record that forgets everything and trims the
stream to it, so what the fleet had learned is gone from Redis too.

The guard never talks to the network: it reads and writes the local log, as without a fleet.
What a record says is only ever shown quoted (docs/memory.md): a host that writes the memory
streams can make another host's agents read a warning, never speak in the supervisor's voice,
and never refuse a call. An operator's `forget` and `off`/`on` are records and travel the same
way; `forget --all` replaces the local log by one record that forgets everything, which does.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from supervisor.store.memory_log import Cursor, MemoryLog, projects
from supervisor.store.paths import write_private
from supervisor.store.redis import replies, scripts

VIA = "redis"
READ_COUNT = 1000
RECORD_BYTES = 16 * 1024
"""The largest record read from the fleet: a record keeps a few fields of at most 160
characters; any relay may add one of any size (it lands in every host's memory log)."""
OPERATOR = "operator"
"""The origin of an operator's records (`operator:<host>`): never a relay's host name."""


def digest(project: str) -> str:
    return hashlib.blake2b(project.encode("utf-8", "replace"), digest_size=12).hexdigest()


class MemorySync:
    """Ships and fetches one root's memory logs (see the module docstring)."""

    def __init__(self, root: Path, client: Any, prefix: str, host: str, state: Path) -> None:
        self.root = Path(root)
        self.client = client
        self.prefix = prefix
        self.host = host
        self.state_path = state
        self.shipped: dict[str, list[int]] = {}
        """Project -> [inode, offset] of its local log shipped so far."""
        self.pulled: dict[str, str] = {}
        """Project digest -> the last stream id read."""
        self._range = client.register_script(scripts.RANGE)
        self._load()

    def stream(self, project: str) -> str:
        return f"{self.prefix}:mem:{digest(project)}"

    @property
    def names(self) -> str:
        return f"{self.prefix}:memprojects"

    def _load(self) -> None:
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if isinstance(data, dict):
            self.shipped = {k: v for k, v in (data.get("shipped") or {}).items()
                            if isinstance(v, list) and len(v) == 2}
            self.pulled = {k: v for k, v in (data.get("pulled") or {}).items()
                           if isinstance(v, str)}

    def save(self) -> None:
        data = json.dumps({"shipped": self.shipped, "pulled": self.pulled}).encode()
        write_private(self.state_path, data)

    def round(self) -> int:
        """One exchange; how many records moved (either way). Raises `redis.RedisError`."""
        moved = self._ship()
        moved += self._pull()
        if moved:
            self.save()
        return moved

    def _ship(self) -> int:
        moved = 0
        for project in projects(self.root):
            log = MemoryLog(self.root, project)
            inode, offset = self.shipped.get(project, [0, 0])
            records, cursor, _fresh = log.read(Cursor(inode, offset))
            mine = [r for r in records if r.get("via") != VIA]
            pipe = self.client.pipeline(transaction=False)
            pipe.hset(self.names, digest(project), project)
            for r in mine:
                pipe.xadd(self.stream(project), {"r": json.dumps(r, ensure_ascii=False),
                                                 "o": self.host})
            pipe.execute()
            moved += len(mine)
            self.shipped[project] = [cursor.inode, cursor.offset]
        return moved

    def _pull(self) -> int:
        names = {replies.text(k): replies.text(v)
                 for k, v in (self.client.hgetall(self.names) or {}).items()}
        if not names:
            return 0
        from supervisor.store.redis.backend import read_page

        digests = sorted(names)
        pipe = self.client.pipeline(transaction=False)
        for d in digests:  # pages bounded in bytes, a record over RECORD_BYTES left out
            read_page(self._range, pipe, f"{self.prefix}:mem:{d}",
                      f"({self.pulled.get(d, '0-0')}", "+", READ_COUNT, largest=RECORD_BYTES)
        moved = 0
        for d, reply in zip(digests, pipe.execute(), strict=True):
            _, entries = replies.paged(reply)
            project = names[d]
            theirs = []
            for entry_id, fields in entries:
                self.pulled[d] = replies.text(entry_id)
                if b"b" in fields or replies.text(fields.get(b"o", b""), "replace") == self.host:
                    continue
                try:
                    record = json.loads(fields.get(b"r", b""))
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict):
                    theirs.append({**record, "via": VIA})
            if theirs:
                self._bring(project, theirs)
                moved += len(theirs)
        return moved

    def _bring(self, project: str, theirs: list[dict[str, Any]]) -> None:
        """Add other hosts' records to the project's local log. A record that forgets
        everything replaces the log by itself and what came after it, so the operator's
        `forget --all` empties every host's log, not only what its index shows. (What this
        host learned in the seconds between that record and this round is in Redis for the
        others, but no longer here: the price of not trusting hosts' clocks to order it.)"""
        log = MemoryLog(self.root, project)
        last = max((n for n, r in enumerate(theirs) if forgets_all(r)), default=None)
        if last is None:
            log.append(theirs)
            return
        log.replace(theirs[last:])
        _records, cursor, _fresh = log.read()
        self.shipped[project] = [cursor.inode, cursor.offset]  # nothing in it is new


def forgets_all(record: dict[str, Any]) -> bool:
    return record.get("k") == "forget" and record.get("id") == "*"


class FleetMemory:
    """One project's memory as a fleet shares it in Redis, for the operator's commands (see
    the module docstring); the same three operations as a local `MemoryLog`."""

    def __init__(self, client: Any, prefix: str, project: str, host: str) -> None:
        self.client = client
        self.prefix = prefix
        self.project = project
        self.origin = f"{OPERATOR}:{host}"
        self.key = f"{prefix}:mem:{digest(project)}"

    def projects(self) -> list[str]:
        """Every project with a memory in the fleet (whatever this one's `project`)."""
        names = self.client.hgetall(f"{self.prefix}:memprojects") or {}
        return sorted(replies.text(v) for v in names.values())

    def records(self) -> list[dict[str, Any]]:
        """Every record of the project's stream, in the order the fleet added them."""
        out: list[dict[str, Any]] = []
        low = "-"
        from supervisor.store.redis.backend import read_page

        script = self.client.register_script(scripts.RANGE)
        while True:
            more, got = replies.paged(read_page(script, self.client, self.key, low, "+",
                                                READ_COUNT, largest=RECORD_BYTES))
            for entry_id, fields in got:
                low = "(" + replies.text(entry_id)
                if b"b" in fields:  # too large to be a record
                    continue
                try:
                    record = json.loads(fields.get(b"r", b""))
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict):
                    out.append(record)
            if not more and len(got) < READ_COUNT:
                return out

    def append(self, records: list[dict[str, Any]]) -> None:
        """Add the operator's records: every relay brings them into its host's log."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(f"{self.prefix}:memprojects", digest(self.project), self.project)
        for r in records:
            pipe.xadd(self.key, {"r": json.dumps(r, ensure_ascii=False), "o": self.origin})
        pipe.execute()

    def replace(self, records: list[dict[str, Any]]) -> None:
        """Replace the project's stream with `records` (the first of which forgets
        everything, so every relay empties its host's log too)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hset(f"{self.prefix}:memprojects", digest(self.project), self.project)
        for r in records:
            pipe.xadd(self.key, {"r": json.dumps(r, ensure_ascii=False), "o": self.origin})
        first = pipe.execute()[1]
        self.client.xtrim(self.key, minid=replies.text(first), approximate=False)
