"""The git worktree of a run: made on a new branch for `supervisor run --worktree`, so parallel
agents never write into one checkout; finished with `supervisor worktree merge|discard`.

Refused, with nothing made: a directory outside a git repository; a repository with
uncommitted changes to tracked files (the worktree starts from the last commit, so the agent
would not see them and a merge could fight them); a branch or directory that already exists.
The default place is beside the repository (`<repo>.worktrees/<session>`), else `--worktree-dir`
or `$SUPERVISOR_WORKTREES`.

The agent writes its worktree, `.git` file included, so every git command run in it for the
operator (list, diff, merge, the dashboard's Terminal panel) goes through
`supervisor.guard.safe_git` with the worktree's own git dir, found from the repository's side and
checked against the worktree's `.git`: one that no longer points there is refused
(`Tampered`), never followed (docs/security.md, "The operator's git").
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from supervisor.guard import safe_git
from supervisor.host import HostError
from supervisor.host.records import Worktree

ENV_DIR = "SUPERVISOR_WORKTREES"
COMMIT_IDENTITY = ("-c", "user.name=Agent Supervisor", "-c", "user.email=supervisor@localhost")
"""Used for the commit of a run's uncommitted work only when git knows no identity."""


class Tampered(HostError):
    """The worktree's `.git` no longer points to its repository's record of it."""


def git(cwd: Path | str, *args: str, check: bool = True,
        git_dir: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Git in the operator's repository (`cwd`), or with `git_dir` in a worktree (`cwd` is
    then its work tree): hardened either way (`safe_git`)."""
    try:
        done = safe_git.run(args, cwd=cwd, git_dir=git_dir,
                            work_tree=cwd if git_dir is not None else None)
    except FileNotFoundError:
        raise HostError("git is not installed (not on PATH)") from None
    except subprocess.TimeoutExpired:
        raise HostError(f"git {args[0]} in {cwd} did not finish in 120 s") from None
    if check and done.returncode != 0:
        raise HostError(f"git {args[0]} in {cwd}: {done.stderr.strip() or 'failed'}")
    return done


def git_dir_of(tree: Worktree) -> Path:
    """The worktree's own git dir (`<common dir>/worktrees/<name>`), found from the
    repository's side, after checking that the worktree's `.git` is still the file git wrote
    there and points to it. `Tampered` otherwise: the `.git` the agent can write is never
    followed."""
    common = Path(git(tree.repo, "rev-parse", "--path-format=absolute",
                      "--git-common-dir").stdout.strip())
    dot_git = Path(tree.path) / ".git"
    wanted = os.path.realpath(dot_git)
    found = None
    for entry in (common / "worktrees").glob("*/gitdir"):
        try:
            named = entry.read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if os.path.realpath(named) == wanted:
            found = entry.parent
            break
    if found is None:
        raise HostError(f"{tree.repo} has no worktree at {tree.path} any more")
    try:
        text = dot_git.read_text(encoding="utf-8") if dot_git.is_file() and \
            not dot_git.is_symlink() else ""
    except OSError:
        text = ""
    target = text.strip().removeprefix("gitdir: ") if text.startswith("gitdir: ") else ""
    if not target or os.path.realpath(Path(tree.path) / target) != os.path.realpath(found):
        raise Tampered(f"the .git of the worktree {tree.path} no longer points to its "
                       f"repository ({found}): refusing to run git there (the agent may have "
                       "replaced it); look at it, or discard the worktree")
    return found


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
    """Remove the worktree and its branch, whatever they hold (discard); a worktree whose
    `.git` was replaced is removed as a directory (git refuses to), nothing in it is run."""
    if Path(tree.path).exists():
        try:
            git_dir_of(tree)
        except Tampered:
            shutil.rmtree(tree.path)
        else:
            git(tree.repo, "worktree", "remove", "--force", tree.path)
    git(tree.repo, "worktree", "prune", check=False)
    git(tree.repo, "branch", "-D", tree.branch, check=False)


def diffstat(tree: Worktree) -> str:
    """One line: the branch's change against its base, committed or not, plus new files."""
    if not Path(tree.path).is_dir():
        return "worktree missing"
    try:
        git_dir = git_dir_of(tree)
    except Tampered:
        return "its .git no longer points to its repository: not read"
    stat = git(tree.path, "diff", "--shortstat", tree.base, check=False,
               git_dir=git_dir).stdout.strip()
    new = _untracked(tree, git_dir)
    parts = [stat or "no changes"]
    if new:
        parts.append(f"{len(new)} new file{'s' if len(new) != 1 else ''}")
    return ", ".join(parts)


def diff(tree: Worktree) -> str:
    """The branch's change against its base (committed and not), then its new files."""
    git_dir = git_dir_of(tree)
    text = git(tree.path, "diff", tree.base, git_dir=git_dir).stdout
    new = _untracked(tree, git_dir)
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
    git_dir = git_dir_of(tree)
    if git(tree.path, "status", "--porcelain", git_dir=git_dir).stdout.strip():
        git(tree.path, "add", "-A", git_dir=git_dir)
        identity = () if git(tree.path, "config", "user.email", check=False,
                             git_dir=git_dir).stdout.strip() else COMMIT_IDENTITY
        git(tree.path, *identity, "commit", "-q", "--no-verify", "-m",
            f"supervisor run {session}: work left uncommitted by the agent", git_dir=git_dir)
    current = git(repo, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
    done = git(repo, "merge", "--no-ff", "--no-edit", tree.branch, check=False)
    if done.returncode != 0:
        git(repo, "merge", "--abort", check=False)
        raise HostError(f"merging {tree.branch} into {current} {_why_refused(done)}; nothing "
                        f"was changed (merge it by hand: git merge {tree.branch}, or discard it)")
    remove(tree)
    return f"merged {tree.branch} into {current}; the worktree and its branch were removed"


def _why_refused(done: subprocess.CompletedProcess[str]) -> str:
    """What kept git from merging, in its own terms: conflicts, or files of the checkout git
    does not track that the merge would overwrite (named), or git's last line."""
    out = f"{done.stdout}\n{done.stderr}"
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if "would be overwritten by merge" in line:
            names = [n.strip() for n in lines[i + 1:] if n.startswith("\t")]
            shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5
                                            else "")
            what = "files it does not track" if "untracked" in line else "changed files"
            return (f"would overwrite {what} in the checkout ({shown or 'named by git'}): "
                    "move them away first")
    if "CONFLICT" in out:
        return "conflicts"
    last = [line for line in lines if line.strip()]
    return f"was refused by git ({last[-1].strip() if last else f'exit {done.returncode}'})"


def _untracked(tree: Worktree, git_dir: Path) -> list[str]:
    out = git(tree.path, "ls-files", "--others", "--exclude-standard", check=False,
              git_dir=git_dir).stdout
    return [line for line in out.splitlines() if line]
