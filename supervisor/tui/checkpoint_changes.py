"""What a rollback to a checkpoint would throw away: the files, or the unified diff, from the
checkpoint to the work tree now. UI-free; the dashboard calls these from worker threads (they
run git over the agent's workspace).

"Changed" means one thing in the dashboard and the CLI: what a checkpoint changed since the
previous one (recorded by the guard in the `checkpoint` event). What differs between a
checkpoint and the work tree now is always called that: "since cp-N, in the work tree now".
Only a session whose files are on this machine has the checkpoint repository to answer it;
for another (a remote store, a recording) the checkpoints after it say what they changed,
which is all that is known.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from supervisor.store.base import Store
from supervisor.tui.model import SessionState

if TYPE_CHECKING:
    from supervisor.guard.checkpoints import CheckpointStore

PATCH_MAX_BYTES = 4 * 1024 * 1024
"""A unified diff longer than this is cut (and says so): the pager stays responsive."""


@dataclass(frozen=True, slots=True)
class SinceCheckpoint:
    """The files that differ between a checkpoint and the work tree now, or what is known."""

    files: list[str] | None
    """`+ added`, `~ modified`, `- deleted` paths; None: unknown."""
    exact: bool
    """From git over the work tree now; False: from the later checkpoints' events only."""


def files_since(store: Store, state: SessionState, checkpoint_id: str) -> SinceCheckpoint:
    """What a rollback to `checkpoint_id` would undo (git when the session is here)."""
    repo = _repository(store, state)
    if repo is not None:
        from supervisor.guard.checkpoints import CheckpointError

        try:
            changes = repo.diff(checkpoint_id)
        except (CheckpointError, OSError, ValueError):
            pass
        else:
            return SinceCheckpoint(
                [f"+ {p}" for p in changes.added] + [f"~ {p}" for p in changes.modified]
                + [f"- {p}" for p in changes.deleted], True)
    later = state.changed_in_later_checkpoints(checkpoint_id)
    return SinceCheckpoint(None if later is None else [f"~ {p}" for p in later], False)


@dataclass(frozen=True, slots=True)
class Patch:
    """The unified diff from a checkpoint to the work tree now (`text` None: `reason`)."""

    text: str | None
    reason: str = ""
    truncated_from: int = 0
    """The diff's whole size in bytes when `text` holds only its start."""


def patch_since(store: Store, state: SessionState, checkpoint_id: str) -> Patch:
    """The unified diff of what a rollback to `checkpoint_id` would throw away."""
    repo = _repository(store, state)
    if repo is None:
        return Patch(None, "no checkpoint repository on this machine for this session (a "
                           "recording, or a session of another host): the diff needs the "
                           "agent's workspace")
    from supervisor.guard.checkpoints import CheckpointError

    try:
        text = repo.patch(checkpoint_id)
    except (CheckpointError, OSError, ValueError) as exc:
        return Patch(None, f"git could not make the diff: {exc}")
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) > PATCH_MAX_BYTES:
        return Patch(raw[:PATCH_MAX_BYTES].decode("utf-8", "replace"), truncated_from=len(raw))
    return Patch(raw.decode("utf-8", "replace"))


def _repository(store: Store, state: SessionState) -> "CheckpointStore | None":
    """The session's checkpoint store when its files and work tree are on this machine."""
    from supervisor.guard.checkpoints import CheckpointStore

    files = store.local_files(state.session_id)
    cwd = state.summary.cwd
    if files is None or not cwd or not (files.checkpoints / "HEAD").exists() \
            or not Path(cwd).is_dir():
        return None
    return CheckpointStore(files.checkpoints, Path(cwd), exclude_paths=[files.root])
