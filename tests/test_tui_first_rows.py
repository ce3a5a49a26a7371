"""The dashboard's first screen (issue 40): rows from the store's kept summaries show before the
follower has read any session's events, then each session's own fold replaces its row.

The follower here waits for the test before it reads a session (its slow part, made
observable): whatever the table shows before the gate opens came from the kept summaries."""

import threading
from pathlib import Path

import pytest
from tui_support import (
    FROZEN_NOW,
    call,
    escalation,
    followed_app,
    screen_text,
    start,
    until,
    write_events,
)

from supervisor.store import summary_cache
from supervisor.store.base import Store
from supervisor.store.follower import Follower
from supervisor.store.local import LocalStore
from supervisor.store.paths import session_files
from supervisor.tui.model import DashboardModel
from supervisor.tui.widgets.session_table import SessionTable

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class GatedFollower(Follower):
    """A follower that reads no session until the gate opens, and notes what it read."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.gate = threading.Event()
        self.read: list[str] = []

    def poll_session(self, session_id: str, budget=None):  # type: ignore[no-untyped-def]
        self.gate.wait(60)  # in the follower's thread: the dashboard goes on meanwhile
        self.read.append(session_id)
        return super().poll_session(session_id, budget)


def _sessions(root: Path) -> None:
    """s1 waits for an answer, s2 ended, s3 has no kept summary."""
    write_events(root, "s1", [start(task="fix the parser"), *call(1), *call(2),
                              escalation("esc-1", evidence=[2, 4])])
    write_events(root, "s2", [start(task="write the docs"), *call(1),
                              {"type": "session_end", "status": "completed", "reason": "done"}])
    write_events(root, "s3", [start(task="not summarised yet"), *call(1)])
    store = LocalStore(root)
    store.summary("s1")  # as `supervisor sessions` (or `notify watch`) leaves them
    store.summary("s2")


async def test_kept_summaries_show_before_any_events_are_read(root: Path) -> None:
    _sessions(root)
    follower = GatedFollower(root)
    app = followed_app(root, table_tick=0.0, follower=follower)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            table = app.screen.query_one(SessionTable)
            await until(pilot, lambda: table.row_count == 2)
            assert follower.read == []  # not one session's events read yet
            assert set(table.keys) == {"s1", "s2"}
            assert all(app.model.sessions[sid].preview for sid in ("s1", "s2"))
            text = screen_text(app)
            row = next(line for line in text.splitlines() if "fix the parser" in line)
            assert row.split()[:5] == ["s1", "demo-agent", "fix", "the", "parser"]
            assert row.split()[5:9] == ["WAITING", "3", "escalate", "6"]
            assert "Needs you: 1" in text  # the kept summary's pending escalation
            follower.gate.set()
            await until(pilot, lambda: table.row_count == 3
                        and not any(st.preview for st in app.model.sessions.values()))
            for sid in ("s1", "s2", "s3"):  # each session's own fold, not added to the preview
                assert app.model.sessions[sid].summary == Store.summary(LocalStore(root), sid)
            assert app.model.sessions["s1"].summary.events == 6
            assert len(app.model.sessions["s1"].history) == 6  # its history is there now
    finally:
        follower.gate.set()


async def test_the_first_paint_has_the_kept_rows(root: Path, monkeypatch) -> None:
    """A local root's first screenful of kept summaries is read before the sessions screen is
    composed: the table is never painted empty first (a second paint later, as it was)."""
    _sessions(root)
    follower = GatedFollower(root)
    painted: list[int] = []
    original = SessionTable.render_line

    def noting(table: SessionTable, y: int):  # type: ignore[no-untyped-def]
        painted.append(table.row_count)
        return original(table, y)

    monkeypatch.setattr(SessionTable, "render_line", noting)
    app = followed_app(root, follower=follower)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: bool(painted))
            assert painted[0] == 2  # s1 and s2, kept; s3 waits for the follower
            assert follower.read == []
    finally:
        follower.gate.set()


def test_a_previewed_escalation_is_not_news_when_its_session_is_read(root: Path) -> None:
    _sessions(root)
    model = DashboardModel(root)
    store = LocalStore(root)
    kept = [store.kept_summary(sid) for sid in ("s1", "s2", "s3")]
    assert kept[2] is None  # none kept: left to the follower, which reads it anyway
    assert model.preview([s for s in kept if s is not None]) == ["s1", "s2"]
    assert [entry.session_id for entry in model.queue(FROZEN_NOW)] == ["s1"]
    changes = model.apply(Follower(root).scan())
    assert changes.new_escalations == []
    assert model.sessions["s1"].summary.events == 6 and not model.sessions["s1"].preview
    assert model.preview([store.summary("s1")]) == []  # a folded session keeps its own row


def test_kept_reads_at_most_its_fold_limit(root: Path) -> None:
    write_events(root, "s1", [start(), *call(1)])
    store = LocalStore(root)
    assert summary_cache.kept(root, "s1") is None  # none kept: not folded here
    assert not (session_files(root, "s1").dir / summary_cache.SUMMARY_FILE).exists()
    assert store.summary("s1").events == 3
    assert summary_cache.kept(root, "s1", fold_limit=0).events == 3  # as kept: nothing read
    write_events(root, "s1", [*call(2), *call(3)])
    grown = session_files(root, "s1").events.stat().st_size
    assert summary_cache.kept(root, "s1", fold_limit=100) is None  # too far behind
    caught_up = summary_cache.kept(root, "s1", fold_limit=grown)
    assert caught_up == Store.summary(store, "s1") and caught_up.events == 7
    assert summary_cache.kept(root, "s1", fold_limit=0) == caught_up  # and kept again


async def test_after_its_first_load_the_dashboard_keeps_the_summaries_it_lacked(
        root: Path) -> None:
    _sessions(root)
    kept_before = (session_files(root, "s1").dir / summary_cache.SUMMARY_FILE).read_bytes()
    missing = session_files(root, "s3").dir / summary_cache.SUMMARY_FILE
    assert not missing.exists()
    app = followed_app(root, table_tick=0.0)
    async with app.run_test(size=(120, 30)) as pilot:
        await until(pilot, missing.exists)
    kept = LocalStore(root).kept_summary("s3")  # what the next start shows first
    assert kept is not None and kept == Store.summary(LocalStore(root), "s3")
    assert (session_files(root, "s1").dir / summary_cache.SUMMARY_FILE).read_bytes() \
        == kept_before  # a current summary is left as it was


async def test_a_store_that_kept_no_summary_of_the_first_screenful_is_left_to_the_follower(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """None of the first screenful kept (an older store): the rest of the summaries are not
    looked for, the follower starts at once (its rows come as it reads them), and what the
    preview skipped is kept after the first load like the rest."""
    from supervisor.tui import app as app_module

    monkeypatch.setattr(app_module, "PREVIEW_FIRST", 1)
    write_events(root, "s1", [start(task="never summarised"), *call(1)])
    write_events(root, "s2", [start(task="summarised"), *call(1)])
    LocalStore(root).summary("s2")  # kept, but after the first screenful
    follower = GatedFollower(root)
    app = followed_app(root, table_tick=0.0, follower=follower)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: follower.loading == (0, 2))  # listed, reading
            assert app.model.sessions == {}  # s2's kept summary was not looked for
            follower.gate.set()
            table = app.screen.query_one(SessionTable)
            await until(pilot, lambda: table.row_count == 2 and follower.loading is None)
            assert app._unkept == ["s1", "s2"]
    finally:
        follower.gate.set()
