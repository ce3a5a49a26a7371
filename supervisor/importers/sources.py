"""Foreign run files as analysis sources, so `supervisor analyze` takes them as they are.

`supervisor.analysis.sources` imports `supervisor.importers` to find loaders for formats other
than the protocol; importing the package registers `analysis_loader` there (see
`register_with_analysis`). The loader detects the format by content. A file that looks like a
run file (`.traj`, `.json`, `.jsonl`) but is broken or of an unknown format does not stop the
analysis of the others: its one-line error is kept in `errors()` for the command to print.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from supervisor.importers.base import FormatError, ImportedRun

RUN_SUFFIXES = (".traj", ".json", ".jsonl")
"""Files that are expected to be runs: an unknown one is an error, not silently skipped."""
PROTOCOL_FILES = ("events.jsonl", "control.jsonl")
"""Our own session files: protocol already, never read by an importer."""

_errors: list[tuple[Path, FormatError]] = []


def errors() -> list[tuple[Path, FormatError]]:
    """(path, error) of every file the loader could not read so far (`UnknownFormat` for
    readable files of no known format)."""
    return list(_errors)


def runs_of(path: Path, fmt: str | None = None) -> list[Any] | None:
    """The runs in `path` as `supervisor.analysis.sources.Run`s; None when it is not a run file.

    A broken or unknown file with a run-file suffix (or any file when `fmt` is forced) gives
    an empty list and an entry in `errors()`; the caller decides whether an unknown file found
    in a directory is worth more than a warning.
    """
    from supervisor.analysis.sources import Run
    from supervisor.importers import load_runs
    from supervisor.importers.openhands import is_event_dir

    if not path.is_file() and not (path.is_dir() and is_event_dir(path)):
        return None
    try:
        runs = load_runs(path, fmt)
    except FormatError as exc:
        if fmt is None and not path.name.endswith(RUN_SUFFIXES):
            return None
        _errors.append((path, exc))
        return []
    return [Run(run.name, source_of(path, run, len(runs)), run.events) for run in runs]


def source_of(path: Path, run: ImportedRun, count: int) -> str:
    """Where a run came from: the path, with `#name` when the file holds several runs."""
    return f"{path}#{run.name}" if count > 1 else str(path)


def analysis_loader(path: Path) -> list[Any] | None:
    """The loader registered with `supervisor.analysis.sources` (format detected by content)."""
    return runs_of(path)


def register_with_analysis() -> None:
    """Register `analysis_loader` if the analysis layer is loaded (it imports us to ask)."""
    import sys

    sources = sys.modules.get("supervisor.analysis.sources")
    if sources is not None:
        sources.register_loader("importers", analysis_loader)


def forced_runs(path: Path, fmt: str) -> list[Any]:
    """The runs of `path` read as format `fmt` (a file, or every run file under a directory)."""
    from supervisor.analysis.sources import SourceError

    if path.is_dir():
        files = run_paths(path)
    elif path.exists():
        files = [path]
    else:
        raise SourceError(f"no such file or directory: {path}")
    runs: list[Any] = []
    for file in files:
        runs.extend(runs_of(file, fmt) or [])
    return runs


def run_paths(directory: Path) -> list[Path]:
    """The run files under `directory` (sorted, recursive), with OpenHands event directories
    as one item each, and without our own session files (`events.jsonl`, `control.jsonl`)."""
    from supervisor.importers.openhands import is_event_dir

    if is_event_dir(directory):
        return [directory]
    found: list[Path] = []
    for top, dirs, files in os.walk(directory):
        here = Path(top)
        if is_event_dir(here):
            found.append(here)
            dirs[:] = []
            continue
        dirs.sort()
        found.extend(here / name for name in files
                     if name.endswith(RUN_SUFFIXES) and name not in PROTOCOL_FILES)
    return sorted(found)
