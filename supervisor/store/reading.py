"""Read whole sessions from disk at once (for the CLI and offline tools, not live views)."""

from collections.abc import Iterator
from pathlib import Path

from supervisor.protocol.names import EVENTS_FILE
from supervisor.store.paths import list_session_ids, sessions_dir
from supervisor.store.summary import SessionSummary
from supervisor.store.tailer import TailBatch, Tailer


def read_file(path: Path, kind: str = "events") -> TailBatch:
    """Every event and bad line of one file, as one batch (a missing file gives `missing`)."""
    return Tailer(path, kind).poll()  # type: ignore[arg-type]


def summarize_session(root: Path, session_id: str) -> SessionSummary:
    summary = SessionSummary(session_id)
    batch = read_file(sessions_dir(root) / session_id / EVENTS_FILE)
    for event in batch.events:
        summary.apply(event)
    summary.bad_lines = len(batch.bad_lines)
    return summary


def summarize_sessions(root: Path) -> list[SessionSummary]:
    """Summaries of every session under `root`, most recently active first."""
    summaries = [summarize_session(root, sid) for sid in list_session_ids(root)]
    summaries.sort(key=lambda s: s.last_ts or 0.0, reverse=True)
    return summaries


def iter_events_files(root: Path) -> Iterator[tuple[str, Path]]:
    for sid in list_session_ids(root):
        yield sid, sessions_dir(root) / sid / EVENTS_FILE
