"""Checkpoints in the dashboard, on a session the real guard wrote over real git: what each
checkpoint changed (from its event, no git), what a rollback throws away (git, off the UI
thread), and the diff (`d`) in the Checkpoints tab and the rollback picker."""

import threading
from pathlib import Path

import pytest
from tui_support import load, make_app, press, screen_text, until

from supervisor.guard import Session
from supervisor.guard.checkpoints.repo import ShadowRepo
from supervisor.tui.screens.diff import DiffScreen
from supervisor.tui.screens.modals import CheckpointPicker
from supervisor.tui.screens.session import SessionScreen
from supervisor.tui.widgets.checkpoint_detail import CheckpointDetail

SIZE = (140, 45)
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def guarded_session(root: Path, work: Path) -> Session:
    """The guard takes cp-1 at the start; the agent edits; cp-2; more edits after it. The
    session is still open (the caller closes it)."""
    work.mkdir()
    (work / "app.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "notes.txt").write_text("todo\n")
    s = Session("test-agent", task="fix add", cwd=work, root=root, session_id="s1",
                heartbeat_s=None)
    (work / "app.py").write_text("def add(a, b):\n    return a + b\n")
    (work / "test_app.py").write_text("from app import add\n\n\ndef test_add():\n"
                                      "    assert add(1, 2) == 3\n")
    (work / "notes.txt").unlink()
    s.checkpoint("after the fix")
    (work / "app.py").write_text("def add(a, b):\n    return a + b + 0  # why?\n")
    s.message("assistant", "done")
    return s


@pytest.fixture
def git_threads(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The thread of every git command the checkpoint store runs."""
    seen: list[threading.Thread] = []
    real = ShadowRepo.git

    def recording(self, *args, **kwargs):
        seen.append(threading.current_thread())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ShadowRepo, "git", recording)
    return seen


@pytest.mark.slow
async def test_checkpoints_tab_and_diff_never_run_git_on_the_ui_thread(
        root: Path, tmp_path: Path, git_threads: list[threading.Thread]) -> None:
    guarded_session(root, tmp_path / "work").close()
    git_threads.clear()
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await pilot.press("c")
        detail = screen.query_one(CheckpointDetail)
        await until(pilot, lambda: detail.since is not None)
        text = screen_text(app)
        assert "cp-1" in text and "first, 2 files" in text  # the list: changed since previous
        assert "+2 ~1 -1" not in text
        await pilot.press("down")
        await until(pilot, lambda: detail.checkpoint is not None
                    and detail.checkpoint.checkpoint_id == "cp-2" and detail.since is not None)
        text = screen_text(app)
        # from the event: what cp-2 changed since cp-1, with its lines
        assert "Changed since cp-1: 3 file(s)  +1 ~1 -1  lines +6 -2" in text
        assert "notes.txt" in text and "test_app.py" in text
        # from git over the work tree now: what a rollback to cp-2 throws away
        assert "A rollback to cp-2 throws away (since it, in the work" in text
        assert "tree now): 1 file(s)" in text and "~ app.py" in text
        await pilot.press("v")
        await pilot.pause()
        diff = app.screen
        assert isinstance(diff, DiffScreen)
        await until(pilot, lambda: diff.patch is not None)
        text = diff.pager.plain_text()
        assert "-    return a + b\n+    return a + b + 0  # why?" in text
        state = str(app.screen.query_one("#pager-state").render())
        assert "1 file(s)" in state, state
        await pilot.press("slash", *"why", "enter")
        await pilot.pause()
        assert '"why": match 1/1' in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen
    assert git_threads, "git ran for the rollback view and the diff"
    assert all(t is not threading.main_thread() for t in git_threads)


@pytest.mark.slow
async def test_rollback_picker_offers_the_diff(root: Path, tmp_path: Path) -> None:
    live = guarded_session(root, tmp_path / "work")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        await press(pilot, "B")  # the operator command: roll back (a deliberate key)
        await pilot.pause()
        assert isinstance(app.screen, CheckpointPicker)
        detail = app.screen.query_one(CheckpointDetail)
        await until(pilot, lambda: detail.since is not None)
        assert detail.checkpoint is not None and detail.checkpoint.checkpoint_id == "cp-2"
        await pilot.press("down", "v")  # cp-1, then its diff
        await pilot.pause()
        diff = app.screen
        assert isinstance(diff, DiffScreen) and diff.checkpoint_id == "cp-1"
        await until(pilot, lambda: diff.patch is not None)
        text = diff.pager.plain_text()
        assert "deleted file mode" in text and "+todo" not in text and "-todo" in text
        assert "new file mode" in text and "+def test_add():" in text
    live.close()


@pytest.mark.slow
async def test_rollback_picker_names_the_sessions_in_the_same_folder(root: Path,
                                                                      tmp_path: Path) -> None:
    """Two agents in one repository: a rollback of one puts back the other's files too, and
    the picker said nothing of it (`supervisor rollback` refuses; here the operator is told)."""
    from textual.widgets import Static
    from tui_support import FROZEN_NOW, start, write_events

    live = guarded_session(root, tmp_path / "work")
    write_events(root, "neighbour", [start(agent="codex", cwd=str(tmp_path / "work"))],
                 t0=FROZEN_NOW - 20)
    write_events(root, "s1.sub-7", [start(cwd=str(tmp_path / "work"))], t0=FROZEN_NOW - 20)
    write_events(root, "apart", [start(cwd=str(tmp_path / "elsewhere"))], t0=FROZEN_NOW - 20)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        await press(pilot, "B")
        await pilot.pause()
        assert isinstance(app.screen, CheckpointPicker)
        await until(pilot, lambda: "not ended work" in screen_text(app))  # drawn
        said = str(app.screen.query_one("#shared-folder", Static).content)
        assert said == ("1 other session(s) not ended work in this folder, and a rollback puts "
                        "back their files too: neighbour (codex, running, last activity 18s "
                        "ago)")  # not its own sub-agent s1.sub-7, nor one elsewhere
    live.close()
