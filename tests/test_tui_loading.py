"""The dashboard on a root whose sessions have no kept summaries (issue 40): rows show as the
follower reads the sessions, piece by piece, the most recent first; the operator can move
meanwhile; the root line says the sessions are still being read, and stops saying it when they
all are. Nothing of the first load is announced as news, and what it found is said once.

The follower here reads one session per piece and waits for the test before each piece after
the first: what the table shows meanwhile is what the operator sees while a large root loads."""

import os
import threading
from pathlib import Path

import pytest
from textual.widgets import Label, Static
from tui_support import (
    FROZEN_NOW,
    call,
    escalation,
    followed_app,
    start,
    until,
    write_events,
)

from supervisor.store import follower as follower_module
from supervisor.store.follower import Follower
from supervisor.store.paths import session_files
from supervisor.tui.app import SupervisorApp
from supervisor.tui.widgets.session_table import SessionTable

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class PacedFollower(Follower):
    """Reads its first piece at once, then one piece per `allow.release()`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, rescan_interval=60)
        self.allow = threading.Semaphore(0)

    def _read_piece(self, session_ids, start):  # type: ignore[no-untyped-def]
        if start > 0:
            assert self.allow.acquire(timeout=60)
        return super()._read_piece(session_ids, start)


def _root_line(app: SupervisorApp) -> str:
    return str(app.screen.query_one("#root-line", Label).render())


async def test_rows_show_as_the_sessions_are_read(root: Path, monkeypatch) -> None:
    monkeypatch.setattr(follower_module, "FIRST_LOAD_BYTES", 1)  # one session per piece
    for n in range(4):  # s3 written last: read first; s0 waits for an answer
        events = [start(task=f"task {n}"), *call(1)]
        write_events(root, f"s{n}", events + ([escalation("esc-1")] if n == 0 else []),
                     t0=FROZEN_NOW - 600 + 60 * n)
        os.utime(session_files(root, f"s{n}").events, (1e9 + n, 1e9 + n))
    follower = PacedFollower(root)
    app = followed_app(root, table_tick=0.0, follower=follower)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            table = app.screen.query_one(SessionTable)
            await until(pilot, lambda: table.row_count == 1)
            assert table.keys == ["s3"]
            assert "reading the sessions: 1 of 4…" in _root_line(app)
            assert not app.screen.query_one("#empty-help", Static).has_class("-shown")
            follower.allow.release()
            await until(pilot, lambda: table.row_count == 2)
            assert table.keys == ["s3", "s2"]  # most recently active first, as read
            await pilot.press("down")  # the operator moves while the rest is read
            assert table.cursor_key == "s2"
            assert "reading the sessions: 2 of 4…" in _root_line(app)
            follower.allow.release()
            follower.allow.release()
            await until(pilot, lambda: table.row_count == 4
                        and "reading" not in _root_line(app))
            assert table.keys == ["s0", "s3", "s2", "s1"]  # waiting first
            assert table.cursor_key == "s2"  # the cursor stayed on its session
            assert app._arrivals == []  # found by the first load: not news
            told = [n.message for n in app._notifications]
            assert told.count("1 escalation(s) need you (e: answer the oldest)") == 1
            assert "Needs you: 1" in str(app.screen.query_one("#needs-title", Label).render())
    finally:
        for _ in range(4):
            follower.allow.release()


class HeldFollower(Follower):
    """Holds its first load (every session in one piece) until `allow.release()`."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, rescan_interval=60)
        self.allow = threading.Semaphore(0)

    def _read_piece(self, session_ids, start):  # type: ignore[no-untyped-def]
        assert self.allow.acquire(timeout=60)
        return super()._read_piece(session_ids, start)


async def test_the_reading_line_goes_when_the_first_load_is_in(root: Path) -> None:
    """The rows were shown (from the kept summaries) while the sessions were read; when the
    last piece was in, the root line still said "reading the sessions: 0 of 6…" until the
    table's own tick (a second, seconds on a loaded machine; an hour here): it is redrawn when
    what it says changes."""
    from supervisor.store.local import LocalStore

    for n in range(6):
        write_events(root, f"s{n}", [start(task=f"task {n}"), *call(1)],
                     t0=FROZEN_NOW - 600 + 60 * n)
        LocalStore(root).keep_summary(f"s{n}")  # `supervisor sessions` ran before
    follower = HeldFollower(root)
    app = followed_app(root, table_tick=3600.0, follower=follower)
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            table = app.screen.query_one(SessionTable)
            await until(pilot, lambda: table.row_count == 6)  # the kept summaries, at once
            await until(pilot, lambda: "reading the sessions: 0 of 6…" in _root_line(app))
            follower.allow.release()
            await until(pilot, lambda: not any(st.preview for st in app.model.sessions.values()))
            await until(pilot, lambda: "reading the sessions" not in _root_line(app))
            assert "root: " in _root_line(app)
    finally:
        follower.allow.release()
