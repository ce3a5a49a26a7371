"""What can go wrong with checkpoints, and the work trees that are no project to checkpoint."""

from __future__ import annotations

from pathlib import Path

from supervisor.guard.checkpoints.records import CheckpointCommit


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
