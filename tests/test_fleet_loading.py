"""The Redis follower's first load comes in pieces, as the local follower's does (issue 40): the
most recently active sessions first, a long session's first page with its piece and the rest
page by page right after, `loading` counting the sessions read; every event delivered once, in
order. The dashboard shows the first rows, answers keys and says it is still reading meanwhile.

A private redis-server, filled by a real relay from a local root."""

import asyncio
import threading
import time
from pathlib import Path

import pytest
from redis_helpers import RedisServer, RelayThread, wait_for
from textual.widgets import Label
from tui_support import FROZEN_NOW, REPO, call, start, until, write_events

from supervisor.store.base import SessionBatch
from supervisor.store.open import open_store
from supervisor.store.redis import backend
from supervisor.store.redis.backend import RedisFollower, RedisStore
from supervisor.tui.app import SupervisorApp
from supervisor.tui.widgets.session_table import SessionTable

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
HOST = "h1"
LONG = 130  # events of the long session: three pages of 50 in the first load


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _fill(root: Path, server: RedisServer) -> list[str]:
    """Five sessions shipped by a real relay one after the other (s1 is long), then one more
    event of s2: s2 is the most recently active. Returns their names, the most recent first."""
    relay = RelayThread(root, server.url(), HOST)
    try:
        with server.admin() as admin:
            for n in (0, 1, 2, 3, 4, 2):
                events = [start(task=f"task {n}")] if n != 2 or _lines(root, "s2") == 0 else []
                for k in range(1, (LONG // 2 if n == 1 else 2)):
                    events += call(k)
                write_events(root, f"s{n}", events, t0=FROZEN_NOW - 600 + 60 * n)
                wait_for(lambda n=n: admin.xlen(f"sv:ev:{HOST}/s{n}") == _lines(root, f"s{n}"),
                         what=f"the relay shipping s{n}")
                time.sleep(0.01)  # its stream's last id is later than the previous one's
    finally:
        relay.stop()
    return [f"{HOST}/s2", f"{HOST}/s4", f"{HOST}/s3", f"{HOST}/s1", f"{HOST}/s0"]


def _lines(root: Path, sid: str) -> int:
    path = root / "sessions" / sid / "events.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


async def test_the_first_load_comes_in_pieces_most_recent_first_each_event_once(
        root: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "FIRST_LOAD_SESSIONS", 2)
    monkeypatch.setattr(backend, "FIRST_LOAD_COUNT", 20)
    newest = _fill(root, redis_server)
    store = open_store(redis_server.url())
    assert isinstance(store, RedisStore)
    follower = RedisFollower(store, count=50)
    deliveries: list[tuple[tuple[int, int] | None, list[SessionBatch]]] = []
    stop = asyncio.Event()

    async def consumer(batches: list[SessionBatch]) -> None:
        deliveries.append((follower.loading, batches))
        if follower.loading is None:
            stop.set()

    try:
        assert follower.loading == (0, 0)  # a dashboard knows pieces will come
        await asyncio.wait_for(follower.run(consumer, stop), 60)
    finally:
        store.close()
    # pieces of two sessions, most recent first; the long one's rest right after its piece
    order = list(dict.fromkeys(b.session_id for _, bs in deliveries for b in bs))
    assert order == newest
    assert [loading for loading, _ in deliveries] == [
        (2, 5), (4, 5), (4, 5), (4, 5), (4, 5), None]
    long_sizes = [len(b.events) for _, bs in deliveries for b in bs
                  if b.session_id == f"{HOST}/s1"]
    assert long_sizes == [20, 50, 50, LONG - 1 - 120]  # its first page, then full pages
    for name in newest:  # every event once, in order
        seqs = [e.seq for _, bs in deliveries for b in bs if b.session_id == name
                for e in b.events]
        assert seqs == list(range(1, len(seqs) + 1)) and seqs


class PacedFollower(RedisFollower):
    """Reads its first piece at once, then one piece per `allow.release()`."""

    def __init__(self, store: RedisStore) -> None:
        super().__init__(store, rescan_interval=60)
        self.allow = threading.Semaphore(0)
        self.pieces = 0

    def poll(self, names, count=None):  # type: ignore[no-untyped-def]
        if count is not None:  # a piece of the first load
            self.pieces += 1
            if self.pieces > 1:
                assert self.allow.acquire(timeout=60)
        return super().poll(names, count)


def _root_line(app: SupervisorApp) -> str:
    return str(app.screen.query_one("#root-line", Label).render())


async def test_the_dashboard_shows_rows_as_the_redis_store_is_read(
        root: Path, redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "FIRST_LOAD_SESSIONS", 2)
    newest = _fill(root, redis_server)
    store = open_store(redis_server.url())
    assert isinstance(store, RedisStore)
    follower = PacedFollower(store)
    app = SupervisorApp(store, theme="supervisor-dark", theme_folders=[REPO / "themes"],
                        table_tick=0.0, follower=follower)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            table = app.screen.query_one(SessionTable)
            await until(pilot, lambda: table.row_count == 2)
            assert set(table.keys) == set(newest[:2])  # the first piece: the most recent
            assert "reading the sessions: 2 of 5…" in _root_line(app)
            await pilot.press("down")  # the operator moves while the rest is read
            chosen = table.keys[1]
            assert table.cursor_key == chosen
            follower.allow.release()
            follower.allow.release()
            await until(pilot, lambda: table.row_count == 5
                        and "reading" not in _root_line(app))
            assert table.cursor_key == chosen  # the cursor stayed on its session
            assert len(app.model.sessions[f"{HOST}/s1"].history) == LONG - 1
    finally:
        for _ in range(3):
            follower.allow.release()
        store.close()
