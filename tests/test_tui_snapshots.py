"""Snapshots of the sessions, session and escalation screens on the shipped recordings.

Fixed size (120x40), fixed theme, frozen clock and UTC times, so nothing depends on the wall
clock. Update with `pytest tests/test_tui_snapshots.py --snapshot-update` after checking the
SVGs by eye.
"""



import pytest
from tui_support import REPO, load, make_app

SAMPLES = REPO / "sample_sessions"
NOW = 1767225600.0 + 12 * 3600  # an hour after the last recording started
SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sessions screen shows the root relative to the working directory: keep it fixed."""
    monkeypatch.chdir(REPO)


def _frozen_app():
    app = make_app(SAMPLES, read_only=True)
    app.clock = lambda: NOW
    return app


async def _loaded(pilot) -> None:
    await load(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


def test_sessions_screen(snap_compare) -> None:
    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=_loaded)


def test_session_screen(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=run_before)


def test_session_detections_tab(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("down", "enter", "d")
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=run_before)


def test_escalation_screen(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("e")
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=run_before)


def test_sessions_screen_small_terminal(snap_compare) -> None:
    assert snap_compare(_frozen_app(), terminal_size=(80, 24), run_before=_loaded)



