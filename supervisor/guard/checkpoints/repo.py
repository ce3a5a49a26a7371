"""The shadow repository: a bare git repository in the session directory whose work tree is the
agent's working directory (see the package docstring), and the one way git is run on it.

Every git command is built by `supervisor.guard.safe_git` with `--git-dir`/`--work-tree` given
explicitly, in an environment without any `GIT_*` variable and without the user's global or
system configuration (`clean_env`); it ends by the call's deadline (`store.waits`: `GitTimeout`).
All of it runs under the session's checkpoint lock (`locked`), which also clears what a killed
git process left behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Literal, overload

from supervisor.guard import safe_git
from supervisor.guard.checkpoints.errors import CheckpointError, GitTimeout
from supervisor.store import waits
from supervisor.store.paths import write_private

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
REF_PREFIX = "refs/checkpoints/"
HEAD_REF = "refs/heads/checkpoints"
IDENTITY = {
    "GIT_AUTHOR_NAME": "agent-supervisor",
    "GIT_AUTHOR_EMAIL": "checkpoints@agent-supervisor.invalid",
    "GIT_COMMITTER_NAME": "agent-supervisor",
    "GIT_COMMITTER_EMAIL": "checkpoints@agent-supervisor.invalid",
}


class ShadowRepo:
    """The shadow repository of one work tree (`git_dir`), and the rules of what its checkpoints
    leave out or refuse (see the package docstring): `excludes` (gitignore patterns),
    `exclude_paths` (directories, when they lie inside the work tree; the repository's own
    directory always), files over `max_file_bytes`, and work trees with more than `max_files`
    files or `max_bytes` bytes to track."""

    def __init__(self, git_dir: Path, work_tree: Path, *, excludes: Iterable[str],
                 exclude_paths: Iterable[Path], max_file_bytes: int, max_files: int,
                 max_bytes: int) -> None:
        self.git_dir = Path(git_dir).absolute()
        self.work_tree = Path(work_tree).resolve()
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.excludes = list(excludes)
        self.exclude_paths = [self.git_dir, *(Path(p) for p in exclude_paths)]
        self.env = clean_env()
        self.extra_env: dict[str, str] = {}
        """Set while a checkpoint's objects are quarantined (`commit.quarantine`)."""
        self.ready = False

    def ensure(self) -> None:
        """Make the repository at its first use (private, configured for our use only)."""
        if self.ready:
            return
        if not (self.git_dir / "HEAD").exists():
            self._create()
        self.ready = True

    def _create(self) -> None:
        """Lay the repository out as `git init --bare --shared=0600` and our configuration
        would, without running git: those were two of a first checkpoint's processes
        (`init`, `config core.bare`), and `init` copied its templates (sample hooks that
        would never run here). Directories 0700, files 0600 (`core.sharedRepository`
        keeps what git adds later so); `HEAD` last, so that a repository half made by a
        killed process is made again at the next use."""
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        self.git_dir.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.git_dir, 0o700)
        for sub in ("objects", "objects/info", "objects/pack", "refs", "refs/heads",
                    "refs/tags", "info"):
            (self.git_dir / sub).mkdir(mode=0o700, exist_ok=True)
        config = self.git_dir / "config"
        write_private(config, b"")  # first the file whose mode `_chmod_kept` tries
        write_private(config, config_text((
            ("core", "repositoryformatversion", "0"),
            ("core", "filemode", "true" if _chmod_kept(config) else "false"),
            ("core", "bare", "false"),
            ("core", "sharedRepository", "0600"),
            ("supervisor", "workTree", str(self.work_tree)),
            ("core", "autocrlf", "false"),
            ("core", "fsmonitor", "false"),
            ("core", "quotePath", "false"),
            ("core", "excludesFile", user_excludes_file() or ""),
            ("commit", "gpgSign", "false"),
            ("gc", "auto", "0"),
            ("advice", "addEmbeddedRepo", "false"),
            ("advice", "addIgnoredFile", "false"),
        )).encode("utf-8"))
        write_private(self.git_dir / "HEAD", b"ref: refs/heads/master\n")

    def refresh_excludes(self) -> None:
        """Write `info/exclude`: our defaults, the agent repository's own `info/exclude`, and
        the exclusion of the store's directories when they lie inside the work tree."""
        lines = ["# written by agent-supervisor; rewritten at every checkpoint", *self.excludes]
        agent_exclude = self.work_tree / ".git" / "info" / "exclude"
        with suppress(OSError):
            lines += agent_exclude.read_text(encoding="utf-8", errors="replace").splitlines()
        for path in self.exclude_paths:
            try:
                rel = path.resolve().relative_to(self.work_tree)
            except ValueError:
                continue
            if str(rel) != ".":
                lines.append("/" + escape_pattern(rel.as_posix()) + "/")
        text = "\n".join(lines) + "\n"
        target = self.git_dir / "info" / "exclude"
        target.parent.mkdir(exist_ok=True)
        try:
            if target.read_text(encoding="utf-8") == text:
                return
        except OSError:
            pass
        write_private(target, text.encode("utf-8"))

    def inside(self, rel: str) -> Path | None:
        """The absolute path of `rel` if it really lies inside the work tree (no `..`, no
        symlinked parent directory leading out), else None."""
        path = self.work_tree / rel
        try:
            parent = path.parent.resolve()
        except OSError:
            return None
        if parent != self.work_tree and self.work_tree not in parent.parents:
            return None
        return parent / path.name

    @contextmanager
    def opened_parent(self, rel: str) -> Iterator[tuple[int, str] | None]:
        """The directory holding `rel`, opened from the work tree one name at a time without
        following a link, and `rel`'s last name: an operation through it (`os.unlink(name,
        dir_fd=fd)`) stays in the work tree whatever is renamed meanwhile. A path is looked up
        again at each use, so a directory the agent swapped for a link to elsewhere after
        `inside` checked it led out: a rollback removed the operator's files outside the tree
        (`tests/adversarial/test_adv_rollback_swap.py`). None when a directory on the way is a
        link, missing or not a directory (git lists no path through a link)."""
        parts = [p for p in rel.split("/") if p]
        if not parts or any(p in (".", "..") for p in parts):
            yield None
            return
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(self.work_tree, flags)
        except OSError:
            yield None
            return
        try:
            for part in parts[:-1]:
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except OSError:
                    yield None
                    return
                os.close(fd)
                fd = child
            yield fd, parts[-1]
        finally:
            os.close(fd)


    @contextmanager
    def locked(self) -> Iterator[None]:
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.git_dir.parent / "checkpoints.lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            waits.flock(fd, "the session's checkpoints")
            self._clear_stale_locks()
            yield
        finally:
            os.close(fd)

    def _clear_stale_locks(self) -> None:
        """Remove git lock files a killed process left behind. Every git command on this
        repository runs under our lock, so a git lock file seen while we hold it is stale."""
        if not self.git_dir.is_dir():
            return
        candidates = [self.git_dir / "index.lock", self.git_dir / "packed-refs.lock",
                      self.git_dir / "HEAD.lock", self.git_dir / "config.lock"]
        candidates += self.git_dir.glob("index.diff.*")
        for saved in self.git_dir.glob("index.saved.*"):  # a checkpoint killed halfway: its
            with suppress(OSError):                       # objects are gone, so its index too
                os.replace(saved, self.git_dir / "index")
        for incoming in self.git_dir.glob("incoming-*"):
            shutil.rmtree(incoming, ignore_errors=True)
        refs = self.git_dir / "refs"
        if refs.is_dir():
            candidates += refs.rglob("*.lock")
        for path in candidates:
            with suppress(OSError):
                path.unlink()

    @overload
    def git(self, *args: str, input: str | None = ..., check: bool = ...,
            env: dict[str, str] | None = ..., full: Literal[False] = ...) -> str: ...

    @overload
    def git(self, *args: str, input: str | None = ..., check: bool = ...,
            env: dict[str, str] | None = ..., full: Literal[True]
            ) -> subprocess.CompletedProcess[str]: ...

    def git(
        self, *args: str, input: str | None = None, check: bool = True,
        env: dict[str, str] | None = None, full: bool = False,
    ) -> str | subprocess.CompletedProcess[str]:
        """Run git on the shadow repository; its stdout (`full`: the whole process)."""
        cmd = safe_git.argv(*args, git_dir=self.git_dir, work_tree=self.work_tree)
        full_env = {**self.env, **self.extra_env, **(env or {})}
        proc = run(cmd, full_env, input=input, check=check, cwd=self.work_tree)
        return proc if full else proc.stdout


def run(
    cmd: list[str], env: dict[str, str], *, input: str | None = None, check: bool = True,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run one git command by the call's deadline (`GitTimeout` when killed at it); with
    `check`, a failure raises `CheckpointError` with git's last line."""
    try:
        proc = subprocess.run(
            cmd, input=input, capture_output=True, text=True, env=env, cwd=cwd,
            encoding="utf-8", errors="surrogateescape", timeout=waits.remaining(),
        )
    except subprocess.TimeoutExpired as exc:  # killed: a hook call must answer in time
        raise GitTimeout(
            f"git {safe_git.subcommand(cmd)} did not finish within the hook's time "
            "budget") from exc
    except FileNotFoundError as exc:
        raise CheckpointError("git is not installed (checkpoints need it)") from exc
    except OSError as exc:  # the work tree vanished, too many processes, ...
        raise CheckpointError(f"git could not run: {exc.strerror or exc}") from exc
    if check and proc.returncode != 0:
        raise CheckpointError(
            f"git {safe_git.subcommand(cmd)} failed: {last_line(proc)}")
    return proc


def config_text(entries: Iterable[tuple[str, str, str]]) -> str:
    """Git config lines setting (section, key, value) entries, each value quoted and escaped
    as git reads it back. Written at once after `git init` (which leaves the file private)
    instead of one `git config` process a key: those were ten processes at a session's
    first checkpoint, more than the checkpoint's own git commands (benchmarks/README.md)."""
    lines = []
    for section, key, value in entries:
        quoted = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
                  .replace("\t", "\\t"))
        lines.append(f'[{section}]\n\t{key} = "{quoted}"\n')
    return "".join(lines)


def last_line(proc: subprocess.CompletedProcess[str]) -> str:
    """What a git process said last (its error), for a one-line message."""
    detail = (proc.stderr or proc.stdout).strip().splitlines()
    return detail[-1] if detail else f"exit {proc.returncode}"



def clean_env() -> dict[str, str]:
    """The environment without any `GIT_*` variable, with our identity, and without the
    user's global or system configuration."""
    return safe_git.environment(own_config=True, extra=IDENTITY)


def user_excludes_file() -> str | None:
    """The user's global excludes file: `core.excludesFile` of their global configuration,
    else git's default (`$XDG_CONFIG_HOME/git/ignore`). Git is asked only when one of the
    global configuration files could name it (mentions `excludesFile`, or includes another
    file): a first checkpoint's process fewer for everyone else."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    default = os.path.join(base, "git", "ignore")
    if not _may_name_excludes((os.path.join(os.path.expanduser("~"), ".gitconfig"),
                               os.path.join(base, "git", "config"))):
        return default
    try:  # from the root directory: no repository found, none of the agent's read
        proc = subprocess.run(
            # --includes: with --global, git config follows no include of itself (git does)
            safe_git.argv("config", "--global", "--includes", "--path", "--get",
                          "core.excludesFile"),
            capture_output=True, text=True, env=safe_git.environment(), cwd="/",
            timeout=waits.remaining(),
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return default


def _may_name_excludes(paths: Iterable[str]) -> bool:
    """Whether any of these git config files could set `core.excludesFile`: names are not
    case-sensitive, and an `include`/`includeIf` section may bring in any other file. A
    file that cannot be read is asked about (git may read what we cannot tell)."""
    for path in paths:
        try:
            with open(path, "rb") as config:
                text = config.read().lower()
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if b"excludesfile" in text or b"include" in text:
            return True
    return False


def _chmod_kept(path: Path) -> bool:
    """Whether the file system keeps a file's executable bit (`core.filemode`, which `git
    init` finds out the same way: on a FAT or SMB mount it does not)."""
    try:
        os.chmod(path, 0o700)
        kept = bool(os.stat(path).st_mode & 0o100)
        os.chmod(path, 0o600)
    except OSError:
        return False
    return kept


def escape_pattern(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\!# " else c for c in text)
