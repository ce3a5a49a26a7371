"""`CheckpointStore`: the checkpoints of one work tree, the one face the guard, the CLI and the
dashboard use (take, list, compare, show, restore); each operation takes the session's
checkpoint lock and hands the work to the part that does it (`commit`, `snapshot`,
`restore`) over the shadow repository (`repo`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from supervisor.guard.checkpoints import commit, restore, snapshot
from supervisor.guard.checkpoints.errors import (
    CheckpointError,
    GitTimeout,
    RestoreInterrupted,
    WorkTreeTooBig,
    too_broad,
)
from supervisor.guard.checkpoints.records import (
    CheckpointCommit,
    RestoreResult,
    TreeChanges,
    number,
    parse_record,
)
from supervisor.guard.checkpoints.repo import REF_PREFIX, ShadowRepo
from supervisor.guard.checkpoints.snapshot import (
    DEFAULT_EXCLUDES,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_FILE_BYTES,
    DEFAULT_MAX_FILES,
)


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
        self._repo = ShadowRepo(git_dir, work_tree, excludes=excludes,
                                exclude_paths=exclude_paths, max_file_bytes=max_file_bytes,
                                max_files=max_files, max_bytes=max_bytes)
        self.git_dir = self._repo.git_dir
        self.work_tree = self._repo.work_tree

    # -- public API -----------------------------------------------------------------------

    def create(self, label: str, *, at_seq: int | None = None) -> CheckpointCommit:
        """Snapshot the work tree now; return the new checkpoint."""
        if not self.work_tree.is_dir():
            raise CheckpointError(f"work tree {self.work_tree} is not a directory")
        broad = too_broad(self.work_tree)
        if broad:
            raise WorkTreeTooBig(f"{broad}: not checkpointed (start the agent in its project)")
        with self._repo.locked():
            return commit.create(self._repo, label, at_seq)

    def list(self) -> list[CheckpointCommit]:
        """Every checkpoint, oldest first."""
        if not (self.git_dir / "HEAD").exists():
            return []
        out = self._repo.git(
            "for-each-ref", "--format=%(refname:strip=2)%00%(objectname)%00%(contents)%1e",
            REF_PREFIX,
        )
        found = []
        for record in out.split("\x1e"):
            record = record.strip("\n")
            if record:
                found.append(parse_record(record))
        found.sort(key=lambda c: number(c.checkpoint_id))
        return found

    def get(self, checkpoint_id: str) -> CheckpointCommit:
        """The checkpoint with this id (`cp-3`, or just `3`), else `CheckpointError`."""
        wanted = checkpoint_id if checkpoint_id.startswith("cp-") else f"cp-{checkpoint_id}"
        found = self.list()
        for cp in found:
            if cp.checkpoint_id == wanted:
                return cp
        ids = [cp.checkpoint_id for cp in found]  # what there is, so the next try is right
        has = ("it has none" if not ids else f"it has {ids[0]}" if len(ids) == 1
               else f"it has {len(ids)}, {ids[0]} to {ids[-1]}")
        raise CheckpointError(f"no checkpoint '{checkpoint_id}' ({has})")

    def latest(self) -> CheckpointCommit | None:
        cps = self.list()
        return cps[-1] if cps else None

    def diff(self, checkpoint_id: str) -> TreeChanges:
        """Files added, modified and deleted in the work tree since the checkpoint.

        Compares against the work tree as it is now (through a temporary index, so the
        shadow repository's own state is not changed)."""
        cp = self.get(checkpoint_id)
        self._check_work_tree(cp)  # a diff against another directory would be nonsense
        with self._repo.locked():
            tree = snapshot.snapshot_tree(self._repo)
        return snapshot.diff_trees(self._repo, cp.commit, tree)

    def patch(self, checkpoint_id: str) -> str:
        """The unified diff from the checkpoint to the work tree now: what a rollback to it
        would throw away (binary files as "Binary files ... differ"). Read-only, like `diff`."""
        cp = self.get(checkpoint_id)
        with self._repo.locked():
            tree = snapshot.snapshot_tree(self._repo)
        return self._repo.git("diff", "--no-color", "--no-ext-diff", "--no-textconv",
                              "--no-renames", cp.commit, tree)

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
            with self._repo.locked():
                if safety_id is None:
                    safety = commit.create(
                        self._repo, f"safety before restoring {target.checkpoint_id}", None)
                    now = safety.commit
                else:  # continuing an interrupted restore: its safety checkpoint stands
                    safety = self.get(safety_id)
                    now = snapshot.snapshot_tree(self._repo)
                return restore.restore(self._repo, target, safety, now)
        except GitTimeout as exc:
            raise RestoreInterrupted(str(exc), safety) from exc

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
        out = self._repo.git("config", "--get", "supervisor.workTree", check=False).strip()
        return out or None
