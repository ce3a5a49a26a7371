"""Pruning from the dashboard (pilot, real files): `C`, an age, the list, `y`; the ended
sessions leave the store and the table, the others stay, and what was done is said."""

from pathlib import Path

import pytest
from tui_support import (
    FROZEN_NOW,
    load,
    make_app,
    press,
    screen_text,
    start,
    told,
    until,
    write_events,
)

from supervisor.host.records import RunRecord, save
from supervisor.store.paths import session_dir
from supervisor.tui.screens.modals import ConfirmScreen
from supervisor.tui.screens.prune import PruneScreen
from supervisor.tui.screens.sessions import SessionsScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
DAY = 86_400.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def ended(root: Path, sid: str, age_days: float, status: str = "completed") -> None:
    write_events(root, sid, [start(), {"type": "session_end", "status": status,
                                       "reason": None}],
                 t0=FROZEN_NOW - age_days * DAY - 10)


async def test_prune_from_the_dashboard_removes_only_old_ended_sessions(root: Path) -> None:
    ended(root, "old-done", 10)
    ended(root, "old-failed", 40, "failed")
    ended(root, "yesterday", 1.5)
    ended(root, "old-run", 12)
    save(root, RunRecord(session="old-run", agent="cmd", command=["bash"], cwd="/w",
                         socket="s", tmux_session="t"))
    write_events(root, "live", [start()], t0=FROZEN_NOW - 30)
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "C")
        assert isinstance(app.screen, PruneScreen)
        text = screen_text(app)
        assert "ended 30 days ago or more: 1 session" in text
        assert "ended 7 days ago or more: 2 sessions" in text
        assert "ended at any time: 3 sessions" in text
        await press(pilot, "down", "enter")  # 7 days
        assert isinstance(app.screen, ConfirmScreen)
        text = app.screen.question.plain
        assert "Remove 2 sessions ended 7 days ago or more" in text
        assert "old-failed (failed" in text and "old-done (completed" in text
        assert "kept old-run: supervisor run still remembers its run" in text
        assert "yesterday" not in text and session_dir(root, "old-done").is_dir()
        await press(pilot, "y")
        await until(pilot, lambda: any(m.startswith("removed 2") for m in told(app)))
        assert not session_dir(root, "old-done").exists()
        assert not session_dir(root, "old-failed").exists()
        await load(pilot)
        assert isinstance(app.screen, SessionsScreen)
        assert sorted(app.model.sessions) == ["live", "old-run", "yesterday"]
        said = " ".join(told(app))
        assert "removed 2 sessions: old-failed, old-done" in said
        assert "vanished" not in said and "vanished" not in screen_text(app)


async def test_prune_asks_nothing_of_a_read_only_dashboard(root: Path) -> None:
    ended(root, "old-done", 10)
    app = make_app(root, read_only=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "C")
        assert isinstance(app.screen, SessionsScreen)
    assert session_dir(root, "old-done").is_dir()
