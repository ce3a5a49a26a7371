"""Recordings: store roots (or single sessions) kept as they were recorded, never written to.

A root is a recording when it holds the marker file `RECORDINGS` (the shipped `sample_sessions/`
does, in the checkout and in the installed package alike); a single session directory is one
when it holds that file itself (a recorded session copied into a live root). Operators' tools
refuse to write there (`refuse_writes`): no decision into `control.jsonl`, no rollback, and the
dashboard opens such a root read-only and shows its sessions as recorded.
"""

from pathlib import Path

from supervisor.store.errors import StoreError, UnreadableStore
from supervisor.store.paths import session_dir

MARKER = "RECORDINGS"
"""The marker file's name; its content is free text for people."""
MARKER_TEXT = ("This folder holds recorded agent sessions. Agent Supervisor shows them read-only "
               "and never writes into them.\n")


class ReadOnlyRecording(StoreError):
    """A write into a recording was refused."""


def is_recording(root: Path, session_id: str | None = None) -> bool:
    """True when `root` (or that session of it) is marked as a recording. A root that cannot
    be read is said as such (`UnreadableStore`), without naming the marker file."""
    try:
        if (Path(root) / MARKER).is_file():
            return True
        return session_id is not None and (session_dir(Path(root), session_id) / MARKER).is_file()
    except OSError as exc:
        raise UnreadableStore(f"cannot read the root ({exc.strerror or exc}): {root}") from exc


def refuse_writes(root: Path, session_id: str | None = None) -> None:
    """Raise `ReadOnlyRecording` when `root` (or the session) is a recording."""
    if is_recording(root, session_id):
        where = f"session '{session_id}'" if session_id and not (Path(root) / MARKER).is_file() \
            else str(root)
        raise ReadOnlyRecording(f"{where} is a recording (marker file {MARKER}): it is shown "
                                "read-only and nothing is written into it")


def mark_recording(root: Path) -> Path:
    """Write the marker file into `root`; returns its path."""
    path = Path(root) / MARKER
    path.write_text(MARKER_TEXT)
    return path
