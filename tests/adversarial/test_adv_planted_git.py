"""The operator's git never runs the agent's code (issue 41, high).

An agent that can write only inside its work tree replaces the worktree's `.git` file with a git
dir of its own whose config sets `core.fsmonitor` and `diff.external`, and a `pre-commit` hook;
or plants a nested repository, or a `.gitattributes` naming a filter its own config defines.
`supervisor worktree list|diff|merge`, the dashboard's Terminal panel (the same diffstat) and
checkpoints and rollbacks of a work tree used to run all of them as the operator. Now the
operator's git uses the git dir and work tree of the run's record, refuses a `.git` that no
longer points where it should, and runs no program a tree the agent writes can name. Real git.
"""

import subprocess
from pathlib import Path

import pytest

from supervisor.guard.checkpoints import CheckpointStore
from supervisor.host import HostError, worktree
from supervisor.host.records import Worktree


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.invalid")
    git(path, "config", "user.name", "Dev")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def tree(repo: Path) -> Worktree:
    return worktree.create(worktree.plan(repo, "w1", None, None))


def _program(tmp: Path, name: str) -> tuple[str, Path]:
    """A script that leaves a marker when it runs, and the marker."""
    marker = tmp / f"ran-{name}"
    script = tmp / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    script.chmod(0o755)
    return str(script), marker


def _plant_git_dir(where: Path, tmp: Path, *, commit: bool = False) -> list[Path]:
    """Make `where/.git` a git dir of the agent's, whose config runs programs; the markers.
    With `commit`, the repository has a commit (so that git adds it as a gitlink)."""
    fsmonitor, m1 = _program(tmp, "fsmonitor")
    external, m2 = _program(tmp, "external")
    hook, m3 = _program(tmp, "hook")
    clean, m4 = _program(tmp, "clean")
    textconv, m5 = _program(tmp, "textconv")
    dot = where / ".git"
    if dot.is_file():
        dot.unlink()
    subprocess.run(["git", "init", "-q", str(where)], check=True, capture_output=True)
    if commit:
        git(where, "-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-q",
            "--allow-empty", "-m", "agent")
    for key, value in (("core.fsmonitor", fsmonitor), ("diff.external", external),
                       ("filter.evil.clean", clean), ("filter.evil.smudge", clean),
                       ("diff.evil.textconv", textconv)):
        git(where, "config", key, value)
    (dot / "hooks" / "pre-commit").write_text(Path(hook).read_text())
    (dot / "hooks" / "pre-commit").chmod(0o755)
    (where / ".gitattributes").write_text("* filter=evil diff=evil\n")
    return [m1, m2, m3, m4, m5]


def _ran(markers: list[Path]) -> list[str]:
    return [m.name for m in markers if m.exists()]


def test_a_replaced_dot_git_is_refused_and_runs_nothing(tree: Worktree,
                                                          tmp_path: Path) -> None:
    path = Path(tree.path)
    (path / "README.md").write_text("changed by the agent\n")
    markers = _plant_git_dir(path, tmp_path)
    assert "no longer points" in worktree.diffstat(tree)  # `worktree list`, Terminal panel
    with pytest.raises(HostError, match="no longer points to its repository"):
        worktree.diff(tree)
    with pytest.raises(HostError, match="no longer points to its repository"):
        worktree.merge(tree, "w1")
    assert _ran(markers) == []
    assert git(Path(tree.repo), "log", "--format=%s") == "initial\n"  # nothing merged


def test_a_replaced_dot_git_can_still_be_discarded(repo: Path, tree: Worktree,
                                                   tmp_path: Path) -> None:
    markers = _plant_git_dir(Path(tree.path), tmp_path)
    worktree.remove(tree)
    assert not Path(tree.path).exists()
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]
    assert _ran(markers) == []


def test_attributes_and_a_nested_repository_name_no_program(tree: Worktree,
                                                            tmp_path: Path) -> None:
    """The `.git` file is intact; the tree holds a nested repository with hostile config and
    attributes naming drivers; the repository's own config defines none of them."""
    path = Path(tree.path)
    (path / "README.md").write_text("changed by the agent\n")
    markers = _plant_git_dir(path / "sub", tmp_path, commit=True)
    (path / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (path / "sub" / "x.txt").write_text("x\n")
    assert "1 file changed" in worktree.diffstat(tree)
    text = worktree.diff(tree)
    assert "+changed by the agent" in text  # git's own diff, not the agent's driver
    assert worktree.merge(tree, "w1").startswith("merged run/w1 into main")
    assert _ran(markers) == []


def test_checkpoints_and_rollbacks_run_nothing_the_tree_names(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("one\n")
    markers = _plant_git_dir(work, tmp_path)
    _plant_git_dir(work / "nested", tmp_path)
    store = CheckpointStore(tmp_path / "cp.git", work)
    first = store.create("first")
    (work / "a.txt").write_text("two\n")
    (work / "b.txt").write_text("new\n")
    store.diff(first.checkpoint_id)
    result = store.restore(first.checkpoint_id)
    assert not result.failed
    assert (work / "a.txt").read_text() == "one\n" and not (work / "b.txt").exists()
    assert _ran(markers) == []


def test_a_merge_refused_for_untracked_files_says_so_not_conflicts(repo: Path,
                                                                   tree: Worktree) -> None:
    (Path(tree.path) / "notes.txt").write_text("the agent's\n")
    (repo / "notes.txt").write_text("the operator's, untracked\n")
    with pytest.raises(HostError) as refused:
        worktree.merge(tree, "w1")
    assert "conflict" not in str(refused.value)
    assert "would overwrite files it does not track in the checkout (notes.txt)" in str(
        refused.value)
    assert (repo / "notes.txt").read_text() == "the operator's, untracked\n"
