"""The git worktree of a run: made on a new branch for `supervisor run --worktree`, so parallel
agents never write into one checkout; finished with `supervisor worktree merge|discard`.

Refused, with nothing made: a directory outside a git repository; a repository with
uncommitted changes to tracked files (the worktree starts from the last commit, so the agent
would not see them and a merge could fight them); a branch or directory that already exists.
The default place is beside the repository (`<repo>.worktrees/<session>`), else `--worktree-dir`
or `$SUPERVISOR_WORKTREES`.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from supervisor.host import HostError
from supervisor.host.records import Worktree

ENV_DIR = "SUPERVISOR_WORKTREES"
COMMIT_IDENTITY = ("-c", "user.name=Agent Supervisor", "-c", "user.email=supervisor@localhost")
"""Used for the commit of a run's uncommitted work only when git knows no identity."""


def git(cwd: Path | str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              errors="replace", timeout=120)
    except FileNotFoundError:
        raise HostError("git is not installed (not on PATH)") from None
    if check and done.returncode != 0:
        raise HostError(f"git {args[0]} in {cwd}: {done.stderr.strip() or 'failed'}")
    return done


@dataclass(frozen=True, slots=True)
class Planned:
    """A worktree that `create` will make, checked: nothing is made until then."""

    repo: Path
    path: Path
    branch: str
    base: str
    subdir: Path
    """Where the caller stood inside the repository (the agent starts there in the worktree)."""


def plan(cwd: Path, session: str, branch: str | None, where: str | None) -> Planned:
    """Check that a worktree can be made for `session` from `cwd`; `HostError` otherwise."""
    top = git(cwd, "rev-parse", "--show-toplevel", check=False)
    if top.returncode != 0:
        raise HostError(f"--worktree needs a git repository, and {cwd} is not in one")
    repo = Path(top.stdout.strip())
    head = git(repo, "rev-parse", "--verify", "-q", "HEAD", check=False)
    if head.returncode != 0:
        raise HostError(f"{repo} has no commit yet: commit once before --worktree")
    dirty = git(repo, "status", "--porcelain", "--untracked-files=no").stdout
    if dirty.strip():
        raise HostError(f"{repo} has uncommitted changes the worktree would not have: commit "
                        "or stash them first")
    branch = branch or f"run/{session}"
    if git(repo, "check-ref-format", "--branch", branch, check=False).returncode != 0:
        raise HostError(f"{branch!r} is not a valid branch name")
    if git(repo, "rev-parse", "--verify", "-q", f"refs/heads/{branch}",
           check=False).returncode == 0:
        raise HostError(f"branch {branch} already exists in {repo}: name another with "
                        "--worktree BRANCH")
    base_dir = Path(where or os.environ.get(ENV_DIR) or repo.parent / f"{repo.name}.worktrees")
    path = base_dir.expanduser().absolute() / session
    if path.exists():
        raise HostError(f"{path} already exists")
    return Planned(repo, path, branch, head.stdout.strip(), Path(cwd).resolve().relative_to(
        repo.resolve()) if Path(cwd).resolve().is_relative_to(repo.resolve()) else Path())


def create(planned: Planned) -> Worktree:
    planned.path.parent.mkdir(parents=True, exist_ok=True)
    git(planned.repo, "worktree", "add", "-q", "-b", planned.branch, str(planned.path),
        planned.base)
    return Worktree(str(planned.repo), str(planned.path), planned.branch, planned.base)


def remove(tree: Worktree) -> None:
    """Remove the worktree and its branch, whatever they hold (discard)."""
    if Path(tree.path).exists():
        git(tree.repo, "worktree", "remove", "--force", tree.path)
    git(tree.repo, "worktree", "prune", check=False)
    git(tree.repo, "branch", "-D", tree.branch, check=False)


def diffstat(tree: Worktree) -> str:
    """One line: the branch's change against its base, committed or not, plus new files."""
    if not Path(tree.path).is_dir():
        return "worktree missing"
    stat = git(tree.path, "diff", "--shortstat", tree.base, check=False).stdout.strip()
    new = _untracked(tree)
    parts = [stat or "no changes"]
    if new:
        parts.append(f"{len(new)} new file{'s' if len(new) != 1 else ''}")
    return ", ".join(parts)


def diff(tree: Worktree) -> str:
    """The branch's change against its base (committed and not), then its new files."""
    text = git(tree.path, "diff", tree.base).stdout
    new = _untracked(tree)
    if new:
        text += "".join(f"new file (untracked): {name}\n" for name in new)
    return text


def merge(tree: Worktree, session: str) -> str:
    """Commit the run's uncommitted work on its branch, merge the branch into the repository's
    current branch, then remove the worktree and the branch. A conflict aborts the merge and
    leaves everything as it was. Returns one line saying what happened."""
    repo = Path(tree.repo)
    if git(repo, "status", "--porcelain", "--untracked-files=no").stdout.strip():
        raise HostError(f"{repo} has uncommitted changes: commit or stash them before merging")
    if git(tree.path, "status", "--porcelain").stdout.strip():
        git(tree.path, "add", "-A")
        identity = () if git(tree.path, "config", "user.email", check=False).stdout.strip() \
            else COMMIT_IDENTITY
        git(tree.path, *identity, "commit", "-q", "-m", f"supervisor run {session}: work left "
            "uncommitted by the agent")
    current = git(repo, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
    done = git(repo, "merge", "--no-ff", "--no-edit", tree.branch, check=False)
    if done.returncode != 0:
        git(repo, "merge", "--abort", check=False)
        raise HostError(f"merging {tree.branch} into {current} conflicts; nothing was changed "
                        f"(merge it by hand: git merge {tree.branch}, or discard it)")
    remove(tree)
    return f"merged {tree.branch} into {current}; the worktree and its branch were removed"


def _untracked(tree: Worktree) -> list[str]:
    out = git(tree.path, "ls-files", "--others", "--exclude-standard", check=False).stdout
    return [line for line in out.splitlines() if line]
