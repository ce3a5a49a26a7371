"""Snapshots of the sessions, session and escalation screens on the shipped recordings.

Fixed size (120x40), fixed theme, frozen clock and UTC times, so nothing depends on the wall
clock. Update with `pytest tests/test_tui_snapshots.py --snapshot-update` after checking the
SVGs by eye.
"""



import pytest
from tui_support import REPO, load, make_app, until

SAMPLES = REPO / "sample_sessions"
NOW = 1767225600.0 + 12 * 3600  # an hour after the last recording started
SIZE = (120, 40)


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sessions screen shows the root's absolute path, `~/...` under the home directory:
    the repository as the home makes it `~/sample_sessions` wherever the repository is."""
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("HOME", str(REPO))


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


@pytest.mark.slow
def test_session_screen(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        pilot.app.open_session("exact-repeat-approve")
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=run_before)


@pytest.mark.slow
def test_session_detections_tab(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        pilot.app.open_session("exact-repeat-approve")
        await pilot.pause()
        await pilot.press("d")
        await pilot.app.workers.wait_for_complete()  # the evidence and its results
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=run_before)


def test_escalation_screen(snap_compare) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("e")
        await pilot.app.workers.wait_for_complete()  # the evidence and its results
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=SIZE, run_before=run_before)







# -- the views of reading: each at 80x24 and 160x45 -----------------------------------------

SIZES = {"80x24": (80, 24), "160x45": (160, 45)}


@pytest.fixture(params=sorted(SIZES))
def size(request: pytest.FixtureRequest) -> tuple[int, int]:
    return SIZES[request.param]


@pytest.mark.slow
def test_event_detail(snap_compare, size) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        pilot.app.open_session("waiting-for-operator")
        await pilot.pause()
        pilot.app.screen.query_one("#history-view").jump_to_seq(12)  # a failing result
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=size, run_before=run_before)


def _quiet_root(tmp_path) -> object:
    from tui_support import call, start, write_events

    root = tmp_path / "store"
    events = [start(), *call(1), *call(2)]
    events += [{"type": "verdict", "call_id": "c2", "action": "allow", "level": 0,
                "reason": None, "message": None}]
    events += [{"type": "heartbeat"} for _ in range(30)]
    events += [*call(3, cmd="pytest -x tests/test_a_rather_long_test_module_name.py::test_case"),
               {"type": "verdict", "call_id": "c3", "action": "allow", "level": 0,
                "reason": None, "message": None}]
    write_events(root, "quiet", events)
    return root


@pytest.mark.slow
def test_quiet_filtered_history(snap_compare, size, tmp_path) -> None:
    async def run_before(pilot) -> None:
        await load(pilot)
        pilot.app.open_session("quiet")
        await pilot.pause()
        await pilot.press("f", *"-verdict allow", "enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = make_app(_quiet_root(tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.slow
def test_wide_history(snap_compare, size, tmp_path) -> None:
    """The side bar hidden: by `w`, or by itself on a narrow terminal."""
    from supervisor.tui.screens.session import NARROW_WIDTH

    async def run_before(pilot) -> None:
        await load(pilot)
        pilot.app.open_session("quiet")
        await pilot.pause()
        if size[0] >= NARROW_WIDTH:
            await pilot.press("w")
        history = pilot.app.screen.query_one("#history-view")
        await until(pilot, lambda: history.size.height > 0 and history.row_count > 0)
        await pilot.press("up", "up")
        await pilot.pause()

    app = make_app(_quiet_root(tmp_path))
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.slow
def test_checkpoint_diff(snap_compare, size, tmp_path) -> None:
    """What a rollback throws away, on a session the real guard wrote over real git."""
    from test_tui_checkpoints import guarded_session

    from supervisor.tui.screens.diff import DiffScreen

    guarded_session(tmp_path / "store", tmp_path / "work").close()

    async def run_before(pilot) -> None:
        await load(pilot)
        pilot.app.open_session("s1")
        await pilot.pause()
        pilot.app.push_screen(DiffScreen(pilot.app.store, pilot.app.model.sessions["s1"],
                                         "cp-1"))
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(make_app(tmp_path / "store"), terminal_size=size, run_before=run_before)


# -- the views of triage: each at 80x24 and 160x45 ------------------------------------------

def test_sessions_sorted_with_queue(snap_compare, size) -> None:
    """The table sorted (waiting first), its columns fitted to the width, the queue's aligned
    columns one line per entry."""
    assert snap_compare(_frozen_app(), terminal_size=size, run_before=_loaded)


def test_escalation_evidence_with_results(snap_compare, size) -> None:
    """The escalation modal: each evidence call with its result, recent steps without the
    engine's rows."""
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        await pilot.press("e")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=size, run_before=run_before)


@pytest.mark.slow
def test_detections_evidence_with_results(snap_compare, size) -> None:
    async def run_before(pilot) -> None:
        await _loaded(pilot)
        pilot.app.open_session("exact-repeat-approve")
        await pilot.pause()
        await pilot.press("d")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(_frozen_app(), terminal_size=size, run_before=run_before)
