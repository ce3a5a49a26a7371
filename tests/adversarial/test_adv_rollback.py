"""Rollbacks never destroy work (issue 18, items 3-6 and the picker): on real git repositories,
with ignored files, nested repositories, files that cannot be removed, and another directory."""

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_support import checkpoint, load, make_app, start, write_events

from supervisor.guard.checkpoints import CheckpointError, CheckpointStore, snapshot
from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.store.provenance import sealed
from tests.conftest import run_cli


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                   check=True, capture_output=True)


def _project(path: Path) -> Path:
    """An agent's project: a git repository with a commit, an ignored `.env` and `data/`."""
    path.mkdir(parents=True)
    (path / "app.py").write_text("print('v1')\n")
    (path / ".gitignore").write_text(".env\ndata/\n")
    (path / ".env").write_text("API_KEY=secret\n")
    (path / "data").mkdir()
    (path / "data" / "big.csv").write_text("1,2,3\n")
    _git(path, "init", "-q")
    _git(path, "add", ".")
    _git(path, "commit", "-qm", "init")
    return path


def _store(session: Path, work: Path, **kwargs: object) -> CheckpointStore:
    return CheckpointStore(session / "checkpoints.git", work, **kwargs)  # type: ignore[arg-type]


@contextlib.contextmanager
def unremovable(path: Path) -> Iterator[None]:
    """Make `path` impossible to remove or rewrite: the immutable flag as root (root ignores
    permissions), a read-only directory otherwise."""
    if os.geteuid() == 0:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
        if done.returncode:
            pytest.skip(f"chattr +i not supported here: {done.stderr.decode().strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        mode = path.parent.stat().st_mode
        path.parent.chmod(0o555)
        path.chmod(0o444)
        try:
            yield
        finally:
            path.parent.chmod(mode)
            path.chmod(0o644)


# -- item 4: never delete a file the checkpoint did not track ------------------------------

def test_rollback_keeps_ignored_files_whose_ignore_rule_the_agent_removed(tmp_path: Path
                                                                          ) -> None:
    work = _project(tmp_path / "work")
    store = _store(tmp_path / "session", work)
    cp = store.create("before the agent")
    (work / ".gitignore").write_text("")            # the agent un-ignores everything
    (work / "new.py").write_text("x = 1\n")         # and creates a file
    (work / "app.py").write_text("print('v2')\n")
    result = store.restore(cp.checkpoint_id)
    assert (work / ".env").read_text() == "API_KEY=secret\n"   # never tracked: kept
    assert (work / "data" / "big.csv").read_text() == "1,2,3\n"
    assert not (work / "new.py").exists()                       # created since: removed
    assert (work / "app.py").read_text() == "print('v1')\n"
    assert (work / ".gitignore").read_text() == ".env\ndata/\n"
    assert {".env", "data/big.csv"} <= set(result.kept)
    assert result.removed == ["new.py"] and result.complete


def test_rollback_keeps_a_file_that_was_too_big_to_track(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "model.bin").write_bytes(b"x" * 2000)
    store = _store(tmp_path / "session", work, max_file_bytes=1000)
    cp = store.create("start")
    (work / "model.bin").write_bytes(b"small now")  # now small enough to be checkpointed
    result = store.restore(cp.checkpoint_id)
    assert (work / "model.bin").read_bytes() == b"small now"
    assert "model.bin" in result.kept


# -- item 5: nested repositories --------------------------------------------------------------

@pytest.mark.slow
def test_nested_repositories_are_left_out_named_and_never_break_checkpoints(tmp_path: Path
                                                                            ) -> None:
    work = _project(tmp_path / "work")
    store = _store(tmp_path / "session", work)
    first = store.create("start")
    (work / "empty").mkdir()
    _git(work / "empty", "init", "-q")                          # no commit at all
    (work / "vendored").mkdir()
    (work / "vendored" / "lib.py").write_text("v = 1\n")
    _git(work / "vendored", "init", "-q")
    _git(work / "vendored", "add", ".")
    _git(work / "vendored", "commit", "-qm", "vendored")         # with commits (a gitlink)
    (work / "app.py").write_text("print('v2')\n")
    second = store.create("after nested repositories")           # used to fail for good
    assert second.nested == ("empty", "vendored")
    assert store.get(second.checkpoint_id).nested == ("empty", "vendored")
    (work / "app.py").write_text("print('v3')\n")
    (work / "vendored" / "lib.py").write_text("v = 2\n")
    store.restore(second.checkpoint_id)
    assert (work / "app.py").read_text() == "print('v2')\n"
    assert (work / "vendored" / "lib.py").read_text() == "v = 2\n"  # not ours to touch
    assert (work / "vendored" / ".git").is_dir() and (work / "empty" / ".git").is_dir()
    store.restore(first.checkpoint_id)  # earlier checkpoints still restore
    assert (work / "app.py").read_text() == "print('v1')\n"
    assert (work / "vendored" / "lib.py").read_text() == "v = 2\n"


@pytest.mark.slow
def test_the_operator_is_told_what_nested_repositories_a_checkpoint_left_out(
        root: Path, tmp_path: Path) -> None:
    work = _project(tmp_path / "work")
    (work / "vendored").mkdir()
    _git(work / "vendored", "init", "-q")
    with Guard.open(root, "s1", cwd=work, settings=GuardSettings(checkpoint_every=0)) as guard:
        guard.start("agent")
    events = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_bytes()
              .splitlines()]
    assert [e.get("nested") for e in events if e["type"] == "checkpoint"] == [["vendored"]]
    done = run_cli("checkpoints", "s1", "--root", str(root))
    assert "not checkpointed (nested git repositories" in done.stdout and "vendored" in \
        done.stdout, done.stdout + done.stderr


def test_a_failed_checkpoint_never_disables_rollback_to_earlier_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = _project(tmp_path / "work")
    store = _store(tmp_path / "session", work)
    good = store.create("good")
    (work / "app.py").write_text("print('v2')\n")
    original = snapshot.stage

    def broken(repo: object, index_env: object = None) -> object:
        raise CheckpointError("git add failed: disk trouble")

    monkeypatch.setattr(snapshot, "stage", broken)
    with pytest.raises(CheckpointError):
        store.create("fails")
    monkeypatch.setattr(snapshot, "stage", original)
    store.restore(good.checkpoint_id)
    assert (work / "app.py").read_text() == "print('v1')\n"


# -- item 3: a checkpoint records its work tree -----------------------------------------------

def test_a_checkpoint_is_never_restored_into_another_directory(tmp_path: Path) -> None:
    first = _project(tmp_path / "first")
    other = _project(tmp_path / "other")
    (other / "app.py").write_text("print('other work')\n")
    (other / "mine.py").write_text("precious = True\n")
    session = tmp_path / "session"
    cp = _store(session, first).create("start")
    assert cp.work_tree == str(first.resolve())
    with pytest.raises(CheckpointError, match="another directory is refused"):
        _store(session, other).restore(cp.checkpoint_id)
    assert (other / "mine.py").exists()
    assert (other / "app.py").read_text() == "print('other work')\n"


def test_after_a_state_reset_in_another_directory_a_rollback_is_refused(root: Path,
                                                                         tmp_path: Path) -> None:
    """The hook's reset: the state is lost, the next payload's cwd becomes the work tree while
    the old checkpoints stay. The old rollback must not touch the new directory."""
    first = _project(tmp_path / "first")
    other = _project(tmp_path / "other")
    (other / "mine.py").write_text("precious = True\n")
    settings = GuardSettings(checkpoint_every=0)
    with Guard.open(root, "s1", cwd=first, settings=settings) as guard:
        guard.start("agent")
        cp = guard.checkpoint("start")
    (root / "sessions" / "s1" / "state.json").unlink()   # state unreadable or gone
    control = root / "sessions" / "s1" / "control.jsonl"
    control.write_text(json.dumps({"v": 1, "seq": 1, "ts": 1.0, "type": "decision", **sealed(
        root, "s1", {"decision_id": "d-rb", "escalation_id": None, "action": "rollback",
                     "checkpoint_id": cp.checkpoint_id, "operator": "ana"})}) + "\n")
    with Guard.open(root, "s1", cwd=other, settings=settings) as guard:
        verdict = guard.pre_call("bash", {"cmd": "ls"})
    assert (other / "mine.py").exists()
    events = [json.loads(x) for x in (root / "sessions" / "s1" / "events.jsonl").read_bytes()
              .splitlines()]
    outcome = [e for e in events if e.get("decision_id") == "d-rb"]
    assert outcome and "another directory" in json.dumps(outcome), outcome
    assert verdict.action != "stop"


# -- item 6 (checkpoint side): what cannot be removed is reported, the rest restored ----------

@pytest.mark.slow
def test_a_file_that_cannot_be_removed_or_rewritten_is_reported_not_raised(tmp_path: Path
                                                                           ) -> None:
    work = _project(tmp_path / "work")
    store = _store(tmp_path / "session", work)
    cp = store.create("start")
    (work / "app.py").write_text("print('v2')\n")
    (work / "stuck.py").write_text("created since\n")
    (work / "sub").mkdir()
    (work / "sub" / "gone.py").write_text("created since\n")
    with unremovable(work / "stuck.py"):
        result = store.restore(cp.checkpoint_id)
    assert not result.complete
    assert [p for p, _ in result.failed] == ["stuck.py"]
    assert "stuck.py" in result.summary()
    assert (work / "app.py").read_text() == "print('v1')\n"   # the rest was restored
    assert not (work / "sub").exists()
    with unremovable(work / "app.py"):
        (work / "stuck.py").unlink()
        result = store.restore(result.safety.checkpoint_id)   # undo: app.py must be rewritten
    assert [p for p, _ in result.failed] == ["app.py"]
    assert (work / "stuck.py").exists()


# -- the picker: two checkpoint events with the same id ---------------------------------------

@pytest.mark.slow
@pytest.mark.anyio
async def test_duplicate_checkpoint_ids_do_not_crash_the_picker(root: Path) -> None:
    from supervisor.tui.screens.modals import CheckpointPicker

    write_events(root, "s1", [start(), checkpoint("cp-1", 1), checkpoint("cp-2", 2),
                              checkpoint("cp-1", 3)])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        app.run_worker(app.pick_checkpoint("s1"))
        for _ in range(50):
            await pilot.pause()
            if isinstance(app.screen, CheckpointPicker):
                break
        assert isinstance(app.screen, CheckpointPicker)
        # one option per id, newest first as the picker lists them
        assert [cp.checkpoint_id for cp in app.screen.checkpoints] == ["cp-2", "cp-1"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
