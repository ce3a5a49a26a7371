"""The work tree as git sees it: staging it into a tree (what a checkpoint holds and what it
leaves out), a throwaway snapshot of it now, and the files that differ between two trees.

Staging honours the ignore rules, leaves out oversized files and nested repositories, and names
everything it did not track (a restore must never delete it); it refuses a work tree over the
repository's bounds as soon as git's own listing passes one (`WorkTreeTooBig`), and ends by the
call's deadline.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import threading
import time
from dataclasses import dataclass

from supervisor.guard import safe_git
from supervisor.guard.checkpoints.errors import CheckpointError, WorkTreeTooBig
from supervisor.guard.checkpoints.records import TreeChanges
from supervisor.guard.checkpoints.repo import ShadowRepo, last_line
from supervisor.store import waits

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this (10 MiB) are left out of checkpoints, and so never restored over."""
DEFAULT_MAX_FILES = 50_000
"""A work tree with more files to track than this is not checkpointed (`WorkTreeTooBig`)."""
DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
"""Nor one whose files to track hold more than this (1 GiB) in all."""

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git",
    "node_modules/",
    ".venv/",
    "venv/",
    "env/",
    "__pycache__/",
    "*.pyc",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".tox/",
    ".nox/",
    "dist/",
    "build/",
    "target/",
    ".gradle/",
    ".next/",
    ".cache/",
    ".DS_Store",
)
"""Build and cache folders never checkpointed (gitignore syntax), besides the user's ignores."""


@dataclass(frozen=True, slots=True)
class Staged:
    """What `stage` made: the tree, the nested repositories it left out, and every entry it
    did not track (`complete` is False when the list was too long to keep whole)."""

    tree: str
    nested: list[str]
    untracked: list[str]
    truncated: bool = False


ONE_PACK = ("-c", "core.bigFileThreshold=1")
"""`git add` of a whole work tree (no index yet: a session's first checkpoint) writes its
files into one pack instead of a loose object each, the way git stores files over the
threshold (`bulk-checkin`): 1,500 files were 1,500 object files and 256 folders made, most of
a first checkpoint's time on a busy disk (benchmarks/README.md, "guard"). Only then: a pack a
checkpoint would make every later git process open one more index, so a long session's
checkpoints would cost more and more; later checkpoints write the few changed files loose.
Given on the command line of `git add` alone: in the configuration it would also make `diff`
take every file for a binary one (no line counts)."""

UNTRACKED_KEPT = 20_000
"""Entries of `untracked` a checkpoint records (ignored directories count once)."""


def stage(repo: ShadowRepo, index_env: dict[str, str] | None = None) -> Staged:
    """Bring the index in line with the work tree (minus exclusions); return its tree and
    what was left out."""
    repo.refresh_excludes()
    listed = _listing(repo, index_env)
    # ignored entries in one call: `H` tracked until now (dropped below), `?` untracked
    # (directories once, by `--directory`)
    tagged = repo.git("ls-files", "-z", "-t", "--cached", "--others", "--ignored",
                      "--exclude-standard", "--directory", env=index_env)
    ignored_cached: set[str] = set()
    ignored: set[str] = set()
    for entry in filter(None, tagged.split("\0")):
        (ignored if entry.startswith("?") else ignored_cached).add(entry[2:])
    oversized, nested = [], []
    total = 0
    for rel in filter(None, listed.split("\0")):
        if rel.endswith("/"):
            nested.append(rel[:-1])  # a nested repository (git lists it so)
            continue
        path = os.path.join(repo.work_tree, rel)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        # a plain file holds no `.git`: only a directory or a link to one is asked
        if not stat.S_ISREG(st.st_mode) and os.path.lexists(os.path.join(path, ".git")):
            nested.append(rel)
            continue
        if st.st_size > repo.max_file_bytes and not stat.S_ISLNK(st.st_mode):
            oversized.append(rel)
        else:
            total += st.st_size
            if total > repo.max_bytes:
                raise WorkTreeTooBig(
                    f"the work tree {repo.work_tree} holds more than "
                    f"{repo.max_bytes // (1024 * 1024)} MiB of files to track: not "
                    "checkpointed")
    drop = ignored_cached | set(oversized) | set(nested)
    if drop:
        repo.git(
            "update-index", "--force-remove", "-z", "--stdin",
            input="".join(f"{p}\0" for p in sorted(drop)), env=index_env,
        )
    specs = ["."] + [f":(exclude,literal){p}" for p in oversized]
    specs += [f":(exclude,literal){p}/" for p in nested]
    index = (index_env or {}).get("GIT_INDEX_FILE") or repo.git_dir / "index"
    added = repo.git(
        *(() if os.path.exists(index) else ONE_PACK),
        "add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
        input="".join(s + "\0" for s in specs), env=index_env, check=False, full=True,
    )
    unread = unreadable(added)
    if added.returncode not in (0, 1) or (added.returncode == 1 and not unread):
        raise CheckpointError(f"git add failed: {last_line(added)}")
    untracked = sorted(ignored | ignored_cached | set(oversized)
                       | {p + "/" for p in nested} | set(unread))
    tree = repo.git("write-tree", env=index_env).strip()
    return Staged(tree, sorted(nested), untracked[:UNTRACKED_KEPT],
                  len(untracked) > UNTRACKED_KEPT)


def _listing(repo: ShadowRepo, index_env: dict[str, str] | None) -> str:
    """`git ls-files` of the files to track, read as it comes and stopped once it names
    more than `max_files` (then `WorkTreeTooBig`) or the call's deadline passes."""
    cmd = safe_git.argv("ls-files", "-z", "--cached", "--others", "--exclude-standard",
                        git_dir=repo.git_dir, work_tree=repo.work_tree)
    env = {**repo.env, **repo.extra_env, **(index_env or {})}
    left = waits.remaining()
    deadline = None if left is None else time.monotonic() + left
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, env=env, cwd=repo.work_tree)
    except OSError as exc:
        raise CheckpointError(f"git could not run: {exc.strerror or exc}") from exc
    assert proc.stdout is not None
    parts: list[bytes] = []
    count = 0
    timer = None
    if deadline is not None:  # git may walk a long time before it writes anything
        timer = threading.Timer(max(deadline - time.monotonic(), 0.0), proc.kill)
        timer.daemon = True
        timer.start()
    try:
        while chunk := os.read(proc.stdout.fileno(), 1 << 16):
            parts.append(chunk)
            count += chunk.count(b"\0")
            if count > repo.max_files:
                raise WorkTreeTooBig(
                    f"the work tree {repo.work_tree} has more than {repo.max_files} files "
                    "to track: not checkpointed")
            if deadline is not None and time.monotonic() > deadline:
                raise CheckpointError("git ls-files did not finish within the hook's time "
                                      "budget")
    finally:
        if timer is not None:
            timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.wait()
    if deadline is not None and proc.returncode != 0 and time.monotonic() >= deadline:
        raise CheckpointError("git ls-files did not finish within the hook's time budget")
    if proc.returncode != 0:
        raise CheckpointError(f"git ls-files failed: exit {proc.returncode}")
    return b"".join(parts).decode("utf-8", "surrogateescape")


def snapshot_tree(repo: ShadowRepo) -> str:
    """A tree of the work tree as it is now, staged in a throwaway copy of the index."""
    repo.ensure()
    index = repo.git_dir / "index"
    temp = repo.git_dir / f"index.diff.{os.getpid()}"
    try:
        if index.exists():
            shutil.copy2(index, temp)  # keeps the mtime, so git's racy-entry check holds
        return stage(repo, {"GIT_INDEX_FILE": str(temp)}).tree
    finally:
        temp.unlink(missing_ok=True)


def diff_trees(repo: ShadowRepo, old: str, new: str, *, lines: bool = False) -> TreeChanges:
    """The paths that differ between two trees; with `lines`, the lines added and removed
    too (the same git call: `--raw` records, then `--numstat` ones)."""
    if not lines:
        out = repo.git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
        records = out.split("\0")
        pairs = list(zip(records[0::2], records[1::2], strict=False))
    else:
        out = repo.git("diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat",
                       old, new)
        records = out.split("\0")
        pairs = []
        insertions = deletions = 0
        i = 0
        while i < len(records):
            record = records[i]
            if record.startswith(":") and i + 1 < len(records):
                pairs.append((record.rsplit(" ", 1)[-1], records[i + 1]))
                i += 2
                continue
            numbers = record.split("\t", 2)
            if len(numbers) == 3 and numbers[0].isdigit() and numbers[1].isdigit():
                insertions += int(numbers[0])  # "-" for a binary file: no lines
                deletions += int(numbers[1])
            i += 1
    changes = TreeChanges()
    for status, path in pairs:
        kind = status[:1]
        if kind == "A":
            changes.added.append(path)
        elif kind == "D":
            changes.deleted.append(path)
        elif kind in ("M", "T"):
            changes.modified.append(path)
    if lines:
        changes.insertions, changes.deletions = insertions, deletions
    return changes

_UNREADABLE = re.compile(r"^error: open\(\"(.*)\"\): (.*)$", re.M)


def unreadable(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """Files `git add --ignore-errors` could not read (it names each on stderr)."""
    return [match.group(1) for match in _UNREADABLE.finditer(proc.stderr or "")]
