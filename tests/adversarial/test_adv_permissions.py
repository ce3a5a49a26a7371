"""Ownership and modes of the store, for any user (the two-user attack itself is in
test_adv_two_users.py): a store directory others may write to is refused everywhere, one of
ours that others may read is made private, and every entry point creates the root 0700."""

import json
import stat
from pathlib import Path

import pytest

from supervisor.guard.core import Guard
from supervisor.store.errors import UnsafeStore
from supervisor.store.local import LocalStore
from supervisor.store.paths import ensure_session_dir, require_private
from tests.conftest import run_cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [0o777, 0o775, 0o1777])
def test_a_root_others_may_write_to_is_refused_by_writers_and_readers(tmp_path: Path,
                                                                      mode: int) -> None:
    root = tmp_path / "sv"
    root.mkdir()
    root.chmod(mode)
    with pytest.raises(UnsafeStore, match="writable by other users"):
        Guard.open(root, "s1")
    with pytest.raises(UnsafeStore):
        LocalStore(root)
    done = run_cli("sessions", "--root", str(root))
    assert done.returncode == 2 and "writable by other users" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (root / "sessions").exists()


def test_a_session_directory_others_may_write_to_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "sv"
    ensure_session_dir(root, "s1")
    (root / "sessions" / "s1").chmod(0o777)
    with pytest.raises(UnsafeStore):
        Guard.open(root, "s1")
    done = run_cli("answer", "s1", "--approve", "--root", str(root))
    assert done.returncode == 2 and "writable by other users" in done.stderr


def test_our_own_readable_root_is_made_private(tmp_path: Path) -> None:
    root = tmp_path / "sv"
    root.mkdir(mode=0o755)
    root.chmod(0o755)  # as an older version's hook client made it
    with Guard.open(root, "s1") as guard:
        guard.start("agent")
    assert _mode(root) == 0o700 and _mode(root / "sessions") == 0o700
    for path in (root / "sessions" / "s1").iterdir():
        if path.is_file():
            assert _mode(path) & 0o077 == 0, path


def test_a_symlinked_root_must_lead_to_a_private_directory(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    target.chmod(0o777)
    link = tmp_path / "sv"
    link.symlink_to(target)
    with pytest.raises(UnsafeStore):
        require_private(link)


@pytest.mark.slow
def test_every_entry_point_creates_the_root_private(tmp_path: Path) -> None:
    """The hook client made the root 0755 through `os.makedirs`."""
    payload = json.dumps({"session_id": "s", "cwd": str(tmp_path), "transcript_path": "/x",
                          "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "ls"}, "tool_use_id": "t1"})
    for name, args in {
        "hook": ["hook", "claude-code", "--timeout", "20"],
        "answer": ["answer", "nope", "--approve"],
        "sessions": ["sessions"],
    }.items():
        root = tmp_path / name / "deep" / "sv"
        done = run_cli(*args, "--root", str(root), input=payload if name == "hook" else None,
                       SUPERVISOR_HOOKD_IDLE_S="2")
        assert "Traceback" not in done.stderr, (name, done.stderr)
        for level in (root, root.parent, root.parent.parent):
            if level.exists():
                assert _mode(level) == 0o700, (name, level, oct(_mode(level)))
    assert (tmp_path / "hook" / "deep" / "sv" / "run").exists()  # the server was started


def test_git_checkpoints_are_private(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.py").write_text("x = 1\n")
    root = tmp_path / "sv"
    with Guard.open(root, "s1", cwd=work) as guard:
        guard.start("agent")
    git_dir = root / "sessions" / "s1" / "checkpoints.git"
    assert git_dir.is_dir()
    for path in [git_dir, *git_dir.rglob("*")]:
        mode = _mode(path)
        assert mode & 0o077 == 0, (path, oct(mode))
