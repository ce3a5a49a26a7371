"""Git checkpoints of an agent's working directory, kept in a shadow repository.

The shadow repository lives in the session directory (`<session>/checkpoints.git`); its work tree
is the agent's working directory, passed explicitly with `--git-dir`/`--work-tree` on every git
command. The agent's own `.git` is never written: git never adds a `.git` entry, and the only
thing read from the agent's repository is its `info/exclude`, copied into ours. Every git
command is built by `supervisor.guard.safe_git` (the work tree is the agent's: nothing in it may
name a program git runs): every `GIT_*` variable of the environment is dropped (a hook inherits
`GIT_DIR`, `GIT_INDEX_FILE`, ... from whatever ran the agent), the user's global and system git
configuration is not read, and fsmonitor, hooks, external diffs, textconv and nested
repositories are switched off on the command line; the user's global excludes file is still
honoured through our own `core.excludesFile`.

What a checkpoint holds: every file of the work tree that is not ignored (the work tree's
`.gitignore` files, the agent repository's `info/exclude`, the user's global excludes file),
not in a build or cache folder (`DEFAULT_EXCLUDES`), not over `max_file_bytes`, not unreadable,
and not inside a nested git repository (`git init sub` in the work tree). Nested repositories are
left out explicitly: the checkpoint names them (`CheckpointCommit.nested`), so the operator knows a
rollback will not touch them. Each checkpoint also records its work tree and what it left out
(`untracked`: ignored, oversized, unreadable entries and nested repositories present when it was
taken), because a restore must never delete what the checkpoint did not track.

What a restore may touch (docs/security.md): only paths inside the checkpoint's own work tree
(a restore into any other directory is refused; no path is written or removed through a
symlinked directory leading out); it writes back the files the checkpoint holds that changed
since, and removes files created since, but never a file the checkpoint did not track (an ignored
`.env` whose ignore rule the agent deleted stays). A file it cannot write or remove is reported
(`RestoreResult.failed`), never raised.

    store = CheckpointStore(session_dir / "checkpoints.git", workdir)
    first = store.create("session start")
    ...                                    # the agent edits, creates and deletes files
    store.diff(first.checkpoint_id)        # TreeChanges(added=[...], modified=[...], deleted=[...])
    result = store.restore(first.checkpoint_id)
    result.summary()                       # "restored 2 files, removed 1 created since"

Bounded (docs/security.md, "Checkpoints"): a work tree that is the file system root, the home
directory or a directory above it is refused (`WorkTreeTooBig`), and so is one holding more than
`max_files` files to track or `max_bytes` bytes (counted from git's own listing, which honours
the ignore rules, and stopped as soon as a bound is passed, so `/usr` costs a second, not the
hook's whole budget). Every git process ends by the deadline of the call (`store.waits`). The
objects of a checkpoint are written in a quarantine directory and moved into the repository
only once the checkpoint is complete; a checkpoint that fails leaves nothing behind (no partial
objects, the index as it was).

Checkpoint ids are `cp-1`, `cp-2`, ... in creation order; each is a ref
(`refs/checkpoints/cp-N`) to a commit whose parent is the previous checkpoint.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, overload

from supervisor.guard import safe_git
from supervisor.store import waits
from supervisor.store.paths import write_private

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

_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_REF_PREFIX = "refs/checkpoints/"
_HEAD_REF = "refs/heads/checkpoints"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "agent-supervisor",
    "GIT_AUTHOR_EMAIL": "checkpoints@agent-supervisor.invalid",
    "GIT_COMMITTER_NAME": "agent-supervisor",
    "GIT_COMMITTER_EMAIL": "checkpoints@agent-supervisor.invalid",
}


CHANGED_FILES_KEPT = 200
"""Paths a `checkpoint` event lists in `changed_files` at most (its `diffstat` counts them all)."""


def checkpoint_changes(cp: CheckpointCommit) -> dict[str, object]:
    """The `changed_files` and `diffstat` fields of a `checkpoint` event: what changed since
    the previous checkpoint, so a reader needs no git to list it (see docs/protocol.md)."""
    return {"changed_files": list(cp.changed_paths[:CHANGED_FILES_KEPT]),
            "diffstat": cp.diffstat()}


class CheckpointError(Exception):
    """A checkpoint operation failed; the message says what (fit for one line)."""


class WorkTreeTooBig(CheckpointError):
    """The work tree is no project to checkpoint (too broad, too many files, too many bytes):
    it will not change by trying again, so the session's checkpoints are turned off."""


class GitTimeout(CheckpointError):
    """A git process was killed at the call's deadline (it may have done part of its work)."""


class RestoreInterrupted(CheckpointError):
    """A restore stopped at the deadline. `safety`: the safety checkpoint taken before it
    touched anything (None: it stopped before, so the work tree was not changed). Restoring the
    same checkpoint again with `safety_id` finishes the job: a restore compares the checkpoint
    with the work tree as it is, so a half-done one is simply continued."""

    def __init__(self, message: str, safety: CheckpointCommit | None) -> None:
        super().__init__(message)
        self.safety = safety


def too_broad(path: Path) -> str | None:
    """Why `path` is no project to checkpoint (the file system root, the home directory or a
    directory holding it: an agent started in `~`, `/home` or `~/..`), else None."""
    try:
        where = Path(path).resolve()
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        return None
    if where == Path(where.anchor):
        return f"{where} is the file system root"
    if where == home or where in home.parents:
        return f"{where} is the home directory" + ("" if where == home else " or above it")
    return None


@dataclass(frozen=True, slots=True)
class CheckpointCommit:
    """One checkpoint: its id, label, commit, time, how many files it holds and changed."""

    checkpoint_id: str
    label: str
    commit: str
    ts: float
    files: int
    """Files in the checkpoint."""
    added: int = 0
    modified: int = 0
    deleted: int = 0
    """Changes since the previous checkpoint."""
    at_seq: int | None = None
    """The session event `seq` the checkpoint was taken at, when the guard knew it."""
    work_tree: str | None = None
    """The directory it is a checkpoint of (None for checkpoints of older versions)."""
    nested: tuple[str, ...] = ()
    """Nested git repositories left out of it (their own history keeps them)."""
    since: str | None = None
    """The previous checkpoint, which the changes are counted from (None: the first one,
    counted from an empty work tree)."""
    insertions: int | None = None
    deletions: int | None = None
    """Lines added and removed since the previous checkpoint (None: not counted, for the
    first checkpoint)."""
    changed_paths: tuple[str, ...] = ()
    """The paths changed since the previous checkpoint, sorted (on a checkpoint just taken;
    `list()` does not read them back)."""

    @property
    def changed(self) -> int:
        return self.added + self.modified + self.deleted

    def diffstat(self) -> dict[str, object]:
        """The `diffstat` of the `checkpoint` event: what changed since the previous one."""
        return {"since": self.since, "files": self.changed, "added": self.added,
                "modified": self.modified, "deleted": self.deleted,
                "insertions": self.insertions, "deletions": self.deletions}


@dataclass(slots=True)
class TreeChanges:
    """Files of the work tree relative to a checkpoint, as paths relative to the work tree."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    insertions: int | None = None
    deletions: int | None = None
    """Lines added and removed (binary files count none), when asked for."""

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted)

    def paths(self) -> list[str]:
        """Every changed path, sorted."""
        return sorted(self.added + self.modified + self.deleted)

    @property
    def count(self) -> int:
        return len(self.added) + len(self.modified) + len(self.deleted)


@dataclass(slots=True)
class RestoreResult:
    """What a restore did. `restored`: files brought back (modified or deleted since);
    `removed`: files created since, deleted; `kept`: paths left alone because the checkpoint did
    not track them (ignored, oversized or unreadable then, or in a nested repository), or the
    work tree now holds an ignored or oversized file there; `failed`: (path, why) of files it
    could not write or remove (the rest of the restore went on)."""

    checkpoint: CheckpointCommit
    safety: CheckpointCommit
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    differs: list[str] = field(default_factory=list)
    """Paths that still differ from the checkpoint when the restore ended, though it did not
    fail on them: written (created, changed, deleted) by someone else while it ran."""

    @property
    def changed_files(self) -> list[str]:
        return sorted(self.restored + self.removed)

    @property
    def complete(self) -> bool:
        """True when the work tree was the checkpoint's when the restore ended (apart from
        what it was told to keep)."""
        return not self.failed and not self.differs

    def events(self, at_seq: int, **extra: object) -> list[dict[str, object]]:
        """The `checkpoint` (of the safety checkpoint) and `rollback` events that record this
        restore, with `extra` fields on both (who did it)."""
        safety = self.safety
        rollback: dict[str, object] = {
            "type": "rollback", "checkpoint_id": self.checkpoint.checkpoint_id,
            "restored_files": len(self.restored) + len(self.removed),
            "safety_checkpoint_id": safety.checkpoint_id, "files": self.changed_files[:100],
            **extra,
        }
        if self.failed:
            rollback["failed"] = [{"path": p, "reason": why} for p, why in self.failed[:100]]
        if self.differs:
            rollback["differs"] = self.differs[:100]
        checkpoint: dict[str, object] = {
            "type": "checkpoint", "checkpoint_id": safety.checkpoint_id, "label": safety.label,
            "commit": safety.commit, "at_seq": at_seq, "files": safety.files,
            "changed": safety.changed, **checkpoint_changes(safety), **extra}
        if safety.nested:
            checkpoint["nested"] = list(safety.nested)
        return [checkpoint, rollback]

    def summary(self, limit: int = 10) -> str:
        """One readable sentence naming the files (at most `limit` of them)."""
        parts = [f"restored {len(self.restored)} file(s)"]
        if self.removed:
            parts.append(f"removed {len(self.removed)} created since")
        if self.kept:
            parts.append(f"kept {len(self.kept)} not tracked by the checkpoint")
        if self.failed:
            parts.append(f"FAILED on {len(self.failed)}")
        if self.differs:
            parts.append(f"{len(self.differs)} written during it STILL DIFFER")
        names = self.changed_files
        text = ", ".join(parts) + f" (checkpoint {self.checkpoint.checkpoint_id}"
        text += f", safety checkpoint {self.safety.checkpoint_id})"
        if names:
            shown = ", ".join(names[:limit]) + (" ..." if len(names) > limit else "")
            text += f": {shown}"
        if self.failed:
            shown = "; ".join(f"{path} ({why})" for path, why in self.failed[:limit])
            more = " ..." if len(self.failed) > limit else ""
            text += f"; not restored: {shown}{more}"
        if self.differs:
            shown = ", ".join(self.differs[:limit]) + (" ..." if len(self.differs) > limit
                                                       else "")
            text += f"; differ from the checkpoint (written during the rollback): {shown}"
        return text


@dataclass(frozen=True, slots=True)
class _Staged:
    """What `_stage` made: the tree, the nested repositories it left out, and every entry it
    did not track (`complete` is False when the list was too long to keep whole)."""

    tree: str
    nested: list[str]
    untracked: list[str]
    truncated: bool = False


_UNTRACKED_KEPT = 20_000
"""Entries of `untracked` a checkpoint records (ignored directories count once)."""


class CheckpointStore:
    """The checkpoints of one work tree in one shadow repository."""

    def __init__(
        self,
        git_dir: Path,
        work_tree: Path,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        excludes: Iterable[str] = DEFAULT_EXCLUDES,
        exclude_paths: Iterable[Path] = (),
        max_files: int = DEFAULT_MAX_FILES,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        """`exclude_paths`: directories to leave out when they lie inside the work tree (the
        store root, when someone keeps it in the agent's workspace). The shadow repository's
        own directory is always left out."""
        self.git_dir = Path(git_dir).absolute()
        self.work_tree = Path(work_tree).resolve()
        self.max_file_bytes = max_file_bytes
        self.max_files = max_files
        self.max_bytes = max_bytes
        self._extra_env: dict[str, str] = {}
        self._excludes = list(excludes)
        self._exclude_paths = [self.git_dir, *(Path(p) for p in exclude_paths)]
        self._env = _clean_env()
        self._ready = False

    # -- public API -----------------------------------------------------------------------

    def create(self, label: str, *, at_seq: int | None = None) -> CheckpointCommit:
        """Snapshot the work tree now; return the new checkpoint."""
        if not self.work_tree.is_dir():
            raise CheckpointError(f"work tree {self.work_tree} is not a directory")
        broad = too_broad(self.work_tree)
        if broad:
            raise WorkTreeTooBig(f"{broad}: not checkpointed (start the agent in its project)")
        with self._locked():
            return self._create(label, at_seq)

    def list(self) -> list[CheckpointCommit]:
        """Every checkpoint, oldest first."""
        if not (self.git_dir / "HEAD").exists():
            return []
        out = self._git(
            "for-each-ref", "--format=%(refname:strip=2)%00%(objectname)%00%(contents)%1e",
            _REF_PREFIX,
        )
        found = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if record:
                found.append(_parse_record(record))
        found.sort(key=lambda c: _number(c.checkpoint_id))
        return found

    def get(self, checkpoint_id: str) -> CheckpointCommit:
        """The checkpoint with this id (`cp-3`, or just `3`), else `CheckpointError`."""
        wanted = checkpoint_id if checkpoint_id.startswith("cp-") else f"cp-{checkpoint_id}"
        for cp in self.list():
            if cp.checkpoint_id == wanted:
                return cp
        raise CheckpointError(f"no checkpoint '{checkpoint_id}'")

    def latest(self) -> CheckpointCommit | None:
        cps = self.list()
        return cps[-1] if cps else None

    def diff(self, checkpoint_id: str) -> TreeChanges:
        """Files added, modified and deleted in the work tree since the checkpoint.

        Compares against the work tree as it is now (through a temporary index, so the
        shadow repository's own state is not changed)."""
        cp = self.get(checkpoint_id)
        self._check_work_tree(cp)  # a diff against another directory would be nonsense
        with self._locked():
            tree = self._snapshot_tree()
        return self._diff_trees(cp.commit, tree)

    def patch(self, checkpoint_id: str) -> str:
        """The unified diff from the checkpoint to the work tree now: what a rollback to it
        would throw away (binary files as "Binary files ... differ"). Read-only, like `diff`."""
        cp = self.get(checkpoint_id)
        with self._locked():
            tree = self._snapshot_tree()
        return self._git("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
                         cp.commit, tree)

    def restore(self, checkpoint_id: str, *, safety_id: str | None = None) -> RestoreResult:
        """Bring the work tree back to the checkpoint.

        Refused (`CheckpointError`) when the checkpoint is of another directory. Takes a safety
        checkpoint first (so the restore itself can be undone), writes back the files modified
        or deleted since, and removes the files created since. Never touched: ignored and
        excluded files, anything the checkpoint did not track (see the module's docstring),
        nested repositories, anything outside the work tree. A file that cannot be written or
        removed is listed in `failed`; the others are restored all the same.

        A git process killed at the deadline raises `RestoreInterrupted` (the work tree may be
        partly restored); `restore(checkpoint_id, safety_id=...)` with its safety checkpoint
        continues it without taking another one."""
        target = self.get(checkpoint_id)
        self._check_work_tree(target)
        safety: CheckpointCommit | None = None
        try:
            with self._locked():
                if safety_id is None:
                    safety = self._create(f"safety before restoring {target.checkpoint_id}",
                                          None)
                    now = safety.commit
                else:  # continuing an interrupted restore: its safety checkpoint stands
                    safety = self.get(safety_id)
                    now = self._snapshot_tree()
                return self._restore(target, safety, now)
        except GitTimeout as exc:
            raise RestoreInterrupted(str(exc), safety) from exc

    def _restore(self, target: CheckpointCommit, safety: CheckpointCommit,
                 now: str) -> RestoreResult:
        """Bring the work tree from `now` (a tree or commit of it) back to `target`."""
        untracked = self._untracked_of(target.commit)
        changes = self._diff_trees(target.commit, now)
        result = RestoreResult(checkpoint=target, safety=safety)
        for rel in changes.added:
            path = self._inside(rel)
            if path is None or not (path.is_symlink() or path.is_file()):
                continue
            if _covered(rel, untracked):  # there, untracked, when the checkpoint was taken
                result.kept.append(rel)
                continue
            try:
                path.unlink()
            except OSError as exc:
                result.failed.append((rel, exc.strerror or str(exc)))
                continue
            result.removed.append(rel)
            self._prune_empty_dirs(path.parent)
        bring_back = []
        for rel in changes.deleted:
            # Deleted since: absent from the safety checkpoint. If something is there now,
            # it is an ignored or oversized file: leave it alone.
            path = self._inside(rel)
            if path is None:
                continue
            if os.path.lexists(path):
                result.kept.append(rel)
            else:
                bring_back.append(rel)
        bring_back += [rel for rel in changes.modified if self._inside(rel) is not None]
        restored, failed = self._checkout(target.commit, bring_back)
        result.restored.extend(sorted(restored))
        result.failed.extend(failed)
        result.removed.sort()
        result.kept.sort()
        result.differs = self._still_different(target, untracked, result)
        return result

    def _still_different(self, target: CheckpointCommit, untracked: set[str] | None,
                         result: RestoreResult) -> builtins.list[str]:
        """What differs from `target` once the restore is done, apart from what it reported
        (failed, kept): files the agent wrote while it ran. Checked on the work tree itself,
        so a restore is never reported complete over a tree that is not the checkpoint's."""
        known = {p for p, _ in result.failed} | set(result.kept)
        after = self._diff_trees(target.commit, self._snapshot_tree())
        found = [rel for rel in after.added if not _covered(rel, untracked)]
        found += after.modified
        found += [rel for rel in after.deleted
                  if (path := self._inside(rel)) is not None and not os.path.lexists(path)]
        return sorted(rel for rel in found if rel not in known)

    def _untracked_of(self, commit: str) -> set[str] | None:
        """What the checkpoint did not track (None: not all of it is known, so nothing created
        since may be deleted). Checkpoints of older versions recorded nothing: for them the set
        is empty (the former behaviour)."""
        body = self._git("cat-file", "commit", commit).split("\n\n", 1)[-1]
        meta = _meta_of(body)
        if "untracked" not in meta:
            return set()
        if not meta.get("untracked_complete", True):
            return None
        return {str(p) for p in meta.get("untracked") or [] if isinstance(p, str)}

    def _check_work_tree(self, checkpoint: CheckpointCommit) -> None:
        """Refuse a checkpoint of another directory (a session restarted elsewhere: its old
        checkpoints must never be written over this one)."""
        recorded = checkpoint.work_tree or self._repo_work_tree()
        if recorded is not None and Path(recorded) != self.work_tree:
            raise CheckpointError(
                f"checkpoint {checkpoint.checkpoint_id} is of {recorded}, not of "
                f"{self.work_tree}: a rollback into another directory is refused")

    def _repo_work_tree(self) -> str | None:
        """The work tree the shadow repository was made for (None: made by an older
        version, which did not record it)."""
        out = self._git("config", "--get", "supervisor.workTree", check=False).strip()
        return out or None

    def _checkout(self, commit: str, paths: builtins.list[str]
                  ) -> tuple[builtins.list[str], builtins.list[tuple[str, str]]]:
        """Write `paths` back from `commit`: (restored, [(path, why)] of those that failed).
        One git call; only when it fails, one per path, to tell which."""
        if not paths:
            return [], []
        try:
            self._checkout_paths(commit, paths)
            return paths, []
        except GitTimeout:
            raise  # no time left to try the paths one by one: the restore is interrupted
        except CheckpointError:
            pass
        restored, failed = [], []
        for rel in paths:
            try:
                self._checkout_paths(commit, [rel])
                restored.append(rel)
            except CheckpointError as exc:
                failed.append((rel, str(exc).removeprefix("git checkout failed: ")))
        return restored, failed

    def _checkout_paths(self, commit: str, paths: builtins.list[str]) -> None:
        self._git("checkout", commit, "--pathspec-from-file=-", "--pathspec-file-nul",
                  input="".join(f":(literal){rel}\0" for rel in paths))

    # -- internals ------------------------------------------------------------------------

    @contextmanager
    def _quarantine(self) -> Iterator[None]:
        """New objects go to a directory of their own (the repository's objects still read
        as alternates) and the index is copied first: on success the objects are moved in, on
        any failure they are removed and the index put back, so nothing partial stays."""
        objects = self.git_dir / "objects"
        incoming = self.git_dir / f"incoming-{os.getpid()}-{time.monotonic_ns()}"
        index = self.git_dir / "index"
        saved = self.git_dir / f"index.saved.{os.getpid()}"
        incoming.mkdir(mode=0o700)
        if index.exists():
            shutil.copy2(index, saved)
        self._extra_env = {"GIT_OBJECT_DIRECTORY": str(incoming),
                           "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)}
        done = False
        try:
            yield
            done = True
        finally:
            self._extra_env = {}
            if not done:
                if saved.exists():
                    os.replace(saved, index)
                else:
                    index.unlink(missing_ok=True)
            saved.unlink(missing_ok=True)
            shutil.rmtree(incoming, ignore_errors=True)

    def _adopt(self) -> None:
        """Move the quarantined objects into the repository (before any ref names them)."""
        incoming = Path(self._extra_env["GIT_OBJECT_DIRECTORY"])
        objects = self.git_dir / "objects"
        for folder in incoming.iterdir():
            if not folder.is_dir():
                continue
            target = objects / folder.name
            target.mkdir(mode=0o700, exist_ok=True)
            for item in folder.iterdir():
                if not (target / item.name).exists():
                    os.replace(item, target / item.name)
        self._extra_env = {}

    def _create(self, label: str, at_seq: int | None) -> CheckpointCommit:
        self._ensure_repo()
        with self._quarantine():
            return self._commit(label, at_seq)

    def _commit(self, label: str, at_seq: int | None) -> CheckpointCommit:
        staged = self._stage()
        tree = staged.tree
        parent, previous, number, since = self._chain()
        # lines are counted against the previous checkpoint only: against an empty tree
        # (the first checkpoint) it would read every file of the work tree once more
        changes = self._diff_trees(parent or _EMPTY_TREE, tree, lines=parent is not None)
        cp_id = f"cp-{number}"
        now = time.time()
        files = previous + len(changes.added) - len(changes.deleted)
        added, modified, deleted = len(changes.added), len(changes.modified), len(changes.deleted)
        meta = {
            "id": cp_id, "ts": now, "files": files,
            "added": added, "modified": modified,
            "deleted": deleted, "at_seq": at_seq, "since": since,
            "insertions": changes.insertions, "deletions": changes.deletions,
            "work_tree": str(self.work_tree), "nested": staged.nested,
            "untracked": staged.untracked, "untracked_complete": not staged.truncated,
        }
        message = f"{_one_line(label)}\n\n{json.dumps(meta, sort_keys=True)}\n"
        args = ["commit-tree", tree, "-F", "-"]
        if parent:
            args[2:2] = ["-p", parent]
        commit = self._git(*args, input=message).strip()
        self._adopt()
        self._git("update-ref", "--stdin",
                  input=f"update {_HEAD_REF} {commit}\nupdate {_REF_PREFIX + cp_id} {commit}\n")
        return CheckpointCommit(
            cp_id, _one_line(label), commit, now, files, added,
            modified, deleted, at_seq, str(self.work_tree),
            tuple(staged.nested), since, changes.insertions, changes.deletions,
            tuple(changes.paths()),
        )

    def _stage(self, index_env: dict[str, str] | None = None) -> _Staged:
        """Bring the index in line with the work tree (minus exclusions); return its tree and
        what was left out."""
        self._refresh_excludes()
        listed = self._listing(index_env)
        # ignored entries in one call: `H` tracked until now (dropped below), `?` untracked
        # (directories once, by `--directory`)
        tagged = self._git("ls-files", "-z", "-t", "--cached", "--others", "--ignored",
                           "--exclude-standard", "--directory", env=index_env)
        ignored_cached: set[str] = set()
        ignored: set[str] = set()
        for entry in filter(None, tagged.split("\0")):
            (ignored if entry.startswith("?") else ignored_cached).add(entry[2:])
        oversized, nested = [], []
        total = 0
        for rel in filter(None, listed.split("\0")):
            if rel.endswith("/") or os.path.lexists(self.work_tree / rel / ".git"):
                nested.append(rel.rstrip("/"))  # a nested repository (git lists it so)
                continue
            try:
                st = os.lstat(self.work_tree / rel)
            except OSError:
                continue
            if st.st_size > self.max_file_bytes and not stat.S_ISLNK(st.st_mode):
                oversized.append(rel)
            else:
                total += st.st_size
                if total > self.max_bytes:
                    raise WorkTreeTooBig(
                        f"the work tree {self.work_tree} holds more than "
                        f"{self.max_bytes // (1024 * 1024)} MiB of files to track: not "
                        "checkpointed")
        drop = ignored_cached | set(oversized) | set(nested)
        if drop:
            self._git(
                "update-index", "--force-remove", "-z", "--stdin",
                input="".join(f"{p}\0" for p in sorted(drop)), env=index_env,
            )
        specs = ["."] + [f":(exclude,literal){p}" for p in oversized]
        specs += [f":(exclude,literal){p}/" for p in nested]
        added = self._git(
            "add", "-A", "--ignore-errors", "--pathspec-from-file=-", "--pathspec-file-nul",
            input="".join(s + "\0" for s in specs), env=index_env, check=False, full=True,
        )
        unreadable = _unreadable(added)
        if added.returncode not in (0, 1) or (added.returncode == 1 and not unreadable):
            raise CheckpointError(f"git add failed: {_last_line(added)}")
        untracked = sorted(ignored | ignored_cached | set(oversized)
                           | {p + "/" for p in nested} | set(unreadable))
        tree = self._git("write-tree", env=index_env).strip()
        return _Staged(tree, sorted(nested), untracked[:_UNTRACKED_KEPT],
                       len(untracked) > _UNTRACKED_KEPT)

    def _listing(self, index_env: dict[str, str] | None) -> str:
        """`git ls-files` of the files to track, read as it comes and stopped once it names
        more than `max_files` (then `WorkTreeTooBig`) or the call's deadline passes."""
        cmd = safe_git.argv("ls-files", "-z", "--cached", "--others", "--exclude-standard",
                            git_dir=self.git_dir, work_tree=self.work_tree)
        env = {**self._env, **self._extra_env, **(index_env or {})}
        left = waits.remaining()
        deadline = None if left is None else time.monotonic() + left
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL, env=env, cwd=self.work_tree)
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
                if count > self.max_files:
                    raise WorkTreeTooBig(
                        f"the work tree {self.work_tree} has more than {self.max_files} files "
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

    def _snapshot_tree(self) -> str:
        """A tree of the work tree as it is now, staged in a throwaway copy of the index."""
        self._ensure_repo()
        index = self.git_dir / "index"
        temp = self.git_dir / f"index.diff.{os.getpid()}"
        try:
            if index.exists():
                shutil.copy2(index, temp)  # keeps the mtime, so git's racy-entry check holds
            return self._stage({"GIT_INDEX_FILE": str(temp)}).tree
        finally:
            temp.unlink(missing_ok=True)

    def _diff_trees(self, old: str, new: str, *, lines: bool = False) -> TreeChanges:
        """The paths that differ between two trees; with `lines`, the lines added and removed
        too (the same git call: `--raw` records, then `--numstat` ones)."""
        if not lines:
            out = self._git("diff-tree", "-r", "-z", "--no-renames", "--name-status", old, new)
            records = out.split("\0")
            pairs = builtins.list(zip(records[0::2], records[1::2], strict=False))
        else:
            out = self._git("diff-tree", "-r", "-z", "--no-renames", "--raw", "--numstat",
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

    def _chain(self) -> tuple[str | None, int, int, str | None]:
        """The latest checkpoint commit (None at first), its file count, the next number and
        the latest checkpoint's id, in one git call."""
        out = self._git(
            "for-each-ref", "--format=%(refname)%00%(objectname)%00%(contents)%1e",
            _HEAD_REF, _REF_PREFIX,
        )
        head, files, highest, head_id = None, 0, 0, None
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if not record:
                continue
            ref, commit, body = record.split("\0", 2)
            if ref == _HEAD_REF:
                meta = _meta_of(body)
                head, files, head_id = commit, int(meta.get("files", 0)), meta.get("id")
            else:
                highest = max(highest, _number(ref.rsplit("/", 1)[-1]))
        return head, files, highest + 1, head_id

    def _ensure_repo(self) -> None:
        if self._ready:
            return
        if not (self.git_dir / "HEAD").exists():
            self.git_dir.parent.mkdir(parents=True, exist_ok=True)
            # --shared=0600: every file git makes in it is private, directories 0700
            _run(safe_git.argv("init", "-q", "--bare", "--shared=0600", str(self.git_dir)),
                 self._env, cwd=self.git_dir.parent)
            os.chmod(self.git_dir, 0o700)
            for key, value in (
                ("supervisor.workTree", str(self.work_tree)),
                ("core.bare", "false"),
                ("core.autocrlf", "false"),
                ("core.fsmonitor", "false"),
                ("core.quotePath", "false"),
                ("core.excludesFile", _user_excludes_file() or ""),
                ("commit.gpgSign", "false"),
                ("gc.auto", "0"),
                ("advice.addEmbeddedRepo", "false"),
                ("advice.addIgnoredFile", "false"),
            ):
                self._git("config", key, value)
        self._ready = True

    def _refresh_excludes(self) -> None:
        """Write `info/exclude`: our defaults, the agent repository's own `info/exclude`, and
        the exclusion of the store's directories when they lie inside the work tree."""
        lines = ["# written by agent-supervisor; rewritten at every checkpoint", *self._excludes]
        agent_exclude = self.work_tree / ".git" / "info" / "exclude"
        with suppress(OSError):
            lines += agent_exclude.read_text(encoding="utf-8", errors="replace").splitlines()
        for path in self._exclude_paths:
            try:
                rel = path.resolve().relative_to(self.work_tree)
            except ValueError:
                continue
            if str(rel) != ".":
                lines.append("/" + _escape_pattern(rel.as_posix()) + "/")
        text = "\n".join(lines) + "\n"
        target = self.git_dir / "info" / "exclude"
        target.parent.mkdir(exist_ok=True)
        try:
            if target.read_text(encoding="utf-8") == text:
                return
        except OSError:
            pass
        write_private(target, text.encode("utf-8"))

    def _inside(self, rel: str) -> Path | None:
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

    def _prune_empty_dirs(self, directory: Path) -> None:
        while directory != self.work_tree and self.work_tree in directory.parents:
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    @contextmanager
    def _locked(self) -> Iterator[None]:
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
    def _git(self, *args: str, input: str | None = ..., check: bool = ...,
             env: dict[str, str] | None = ..., full: Literal[False] = ...) -> str: ...

    @overload
    def _git(self, *args: str, input: str | None = ..., check: bool = ...,
             env: dict[str, str] | None = ..., full: Literal[True]
             ) -> subprocess.CompletedProcess[str]: ...

    def _git(
        self, *args: str, input: str | None = None, check: bool = True,
        env: dict[str, str] | None = None, full: bool = False,
    ) -> str | subprocess.CompletedProcess[str]:
        """Run git on the shadow repository; its stdout (`full`: the whole process)."""
        cmd = safe_git.argv(*args, git_dir=self.git_dir, work_tree=self.work_tree)
        full_env = {**self._env, **self._extra_env, **(env or {})}
        proc = _run(cmd, full_env, input=input, check=check, cwd=self.work_tree)
        return proc if full else proc.stdout


def _run(
    cmd: list[str], env: dict[str, str], *, input: str | None = None, check: bool = True,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
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
            f"git {safe_git.subcommand(cmd)} failed: {_last_line(proc)}")
    return proc


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    detail = (proc.stderr or proc.stdout).strip().splitlines()
    return detail[-1] if detail else f"exit {proc.returncode}"


_UNREADABLE = re.compile(r"^error: open\(\"(.*)\"\): (.*)$", re.M)


def _unreadable(proc: subprocess.CompletedProcess[str]) -> list[str]:
    """Files `git add --ignore-errors` could not read (it names each on stderr)."""
    return [match.group(1) for match in _UNREADABLE.finditer(proc.stderr or "")]


def _covered(rel: str, untracked: set[str] | None) -> bool:
    """True when `rel` was not tracked by a checkpoint that left out `untracked` (an entry
    ending in `/` covers everything below it). Unknown (None) covers everything."""
    if untracked is None:
        return True
    if rel in untracked:
        return True
    parts = rel.split("/")
    return any("/".join(parts[:n]) + "/" in untracked for n in range(1, len(parts)))


def _clean_env() -> dict[str, str]:
    """The environment without any `GIT_*` variable, with our identity, and without the
    user's global or system configuration."""
    return safe_git.environment(own_config=True, extra=_IDENTITY)


def _user_excludes_file() -> str | None:
    """The user's global excludes file: `core.excludesFile` of their global configuration,
    else git's default (`$XDG_CONFIG_HOME/git/ignore`)."""
    try:  # from the root directory: no repository found, none of the agent's read
        proc = subprocess.run(
            safe_git.argv("config", "--global", "--path", "--get", "core.excludesFile"),
            capture_output=True, text=True, env=safe_git.environment(), cwd="/",
            timeout=waits.remaining(),
        )
        if proc.returncode == 0 and proc.stdout.strip():
            return proc.stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "git", "ignore")


def _parse_record(record: str) -> CheckpointCommit:
    name, commit, body = record.split("\0", 2)
    meta = _meta_of(body)
    label = body.split("\n", 1)[0]
    work_tree = meta.get("work_tree")
    nested = meta.get("nested")
    return CheckpointCommit(
        name, label, commit, float(meta.get("ts", 0.0)), int(meta.get("files", 0)),
        int(meta.get("added", 0)), int(meta.get("modified", 0)), int(meta.get("deleted", 0)),
        meta.get("at_seq"), work_tree if isinstance(work_tree, str) else None,
        tuple(str(n) for n in nested) if isinstance(nested, list) else (),
        _str_or_none(meta.get("since")), _int_or_none(meta.get("insertions")),
        _int_or_none(meta.get("deletions")),
    )


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _meta_of(body: str) -> dict:
    for line in reversed(body.strip().splitlines()):
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def _number(cp_id: str) -> int:
    try:
        return int(cp_id.removeprefix("cp-"))
    except ValueError:
        return 0


def _one_line(text: str) -> str:
    return " ".join(str(text).split())[:200] or "checkpoint"


def _escape_pattern(text: str) -> str:
    return "".join("\\" + c if c in "*?[]\\!# " else c for c in text)
