"""Another host's relay cannot make an operator's reader swallow its entries whole (attack
round 5), on a real redis-server with the ACL of docs/fleet.md.

A relay's credentials may add any entry to its own host's event streams, and the operators'
readers (the dashboard's follower, `tail`, `answer`, the web view) read those streams with
XRANGE, 5,000 entries a page: 12 entries of 8 MB were 96 MB in one reply, held at once by every
dashboard, and one entry whose offset was not a number (`o`: `x`) raised out of the reader. Now
every page is read through `scripts.RANGE`: an entry over the line limit is handed as the head
of its line, marked too large (a bad line, as a relay ships a line too long to read), a page
ends at 4 MiB, and an entry's fields are read as untrusted.
"""

import json
import tracemalloc
from pathlib import Path

import pytest
from redis_helpers import RedisServer, RelayThread, wait_for

from supervisor.store.open import open_store
from supervisor.store.redis.backend import RedisFollower
from tests.test_fleet_security import SECRETS, add_users, as_user, start

pytestmark = pytest.mark.slow

HUGE = 8 * 1024 * 1024
ENTRIES = 12


def test_oversize_entries_of_another_host_are_read_bounded(
        tmp_path: Path, redis_server: RedisServer) -> None:
    add_users(redis_server)
    h1 = tmp_path / "h1"
    start(h1)
    relay = RelayThread(h1, redis_server.url("relay-h1", SECRETS["relay-h1"]), "h1")
    operator = open_store(redis_server.url("operator", SECRETS["operator"]))
    try:
        wait_for(lambda: operator.session_ids() == ["h1/s"], 30, "the host shipped")
        mallory = as_user(redis_server, "relay-h1")
        blob = b"{" + b"x" * HUGE + b"}"
        for n in range(ENTRIES):
            mallory.xadd("sv:ev:h1/s", {"o": str(10_000 + n), "l": blob})
        mallory.xadd("sv:ev:h1/s", {"o": "x", "l": b'{"v":1}'})
        mallory.xadd("sv:ev:h1/s", {"o": "1", "l": b"{}", "z": "many"})
        tracemalloc.start()
        try:
            reader = operator.reader("h1/s")
            batches = [reader.poll()]
            while reader.more:
                batches.append(reader.poll())
            follower = RedisFollower(operator, rescan_interval=3600, block_ms=200)
            followed = follower.scan()
            log = operator.log("h1/s")
            found = log.find("never there", 0)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 40 * 1024 * 1024, f"the readers held {peak / 2**20:.0f} MiB at once"
        bad = [b for batch in batches for b in batch.bad_lines]
        assert len(bad) >= ENTRIES
        assert all(len(b.raw) <= 4096 for b in bad[:ENTRIES])  # the head, as a relay ships
        assert all("too large" in b.reason for b in bad[:ENTRIES]), bad[0].reason
        assert [e.type for e in batches[0].events][:1] == ["session_start"]  # the rest as ever
        assert any(b.bad_lines for b in followed) and found == []
    finally:
        relay.stop()
        operator.close()


def test_an_oversize_memory_record_of_another_host_reaches_no_host(
        tmp_path: Path, redis_server: RedisServer) -> None:
    """The failure memory's streams (`sv:mem:*`) are shared by every relay: a record another
    host's relay added of 8 MB was pulled whole by every host (its relay's XREAD took 1,000
    entries at once) and appended to every host's memory log, which each agent's hook reads.
    Now a record over 16 KiB is left out, and the others still arrive."""
    from supervisor.store.memory_log import MemoryLog, log_path
    from supervisor.store.redis.memory_sync import MemorySync, digest

    add_users(redis_server)
    project = "git:github.com/acme/widget"
    mallory = as_user(redis_server, "relay-h1")
    mallory.hset("sv:memprojects", digest(project), project)
    stream = f"sv:mem:{digest(project)}"
    record = {"k": "fail", "sig": "s", "session": "x", "text": "y" * HUGE}
    for _ in range(ENTRIES):
        mallory.xadd(stream, {"r": json.dumps(record), "o": "h1"})
    mallory.xadd(stream, {"r": json.dumps({"k": "fail", "sig": "s", "session": "s1"}),
                          "o": "h1"})
    root = tmp_path / "h2"
    root.mkdir(mode=0o700)
    sync = MemorySync(root, as_user(redis_server, "relay-h2"), "sv", "h2", tmp_path / "state")
    tracemalloc.start()
    try:
        sync.round()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    records, _, _ = MemoryLog(root, project).read()
    assert [r.get("session") for r in records] == ["s1"]
    assert log_path(root, project).stat().st_size < 64 * 1024  # what every hook reads
    assert peak < 40 * 1024 * 1024, f"the relay held {peak / 2**20:.0f} MiB at once"
