"""Read a whole protocol file at once (for `validate` and offline tools, not live views)."""

from pathlib import Path

from supervisor.store.tailer import TailBatch, Tailer


def read_file(path: Path, kind: str = "events") -> TailBatch:
    """Every event and bad line of one file, as one batch (a missing file gives `missing`)."""
    return Tailer(path, kind).poll()  # type: ignore[arg-type]
