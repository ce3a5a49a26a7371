"""Foreign run files as analysis sources, so `supervisor analyze` takes them as they are.

`supervisor.analysis.sources` imports `supervisor.importers` to find loaders for formats other
than the protocol; importing the package registers `analysis_loader` there (see
`register_with_analysis`). The loader detects the format by content. A file that looks like a
run file (`.traj`, `.json`, `.jsonl`) but is broken or of an unknown format does not stop the
analysis of the others: its one-line error is kept in `errors()` for the command to print.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from supervisor.importers.base import FormatError, ImportedRun

RUN_SUFFIXES = (".traj", ".json", ".jsonl")
"""Files that are expected to be runs: an unknown one is an error, not silently skipped."""

_errors: list[str] = []


def errors() -> list[str]:
    """`path: message` of every file the loader could not read so far."""
    return list(_errors)


def clear_errors() -> None:
    _errors.clear()


def runs_of(path: Path, fmt: str | None = None) -> list[Any] | None:
    """The runs in `path` as `supervisor.analysis.sources.Run`s; None when it is not a run file.

    A broken or unknown file with a run-file suffix (or any file when `fmt` is forced) gives
    an empty list and an entry in `errors()`.
    """
    from supervisor.analysis.sources import Run
    from supervisor.importers import load_runs

    if not path.is_file():
        return None
    try:
        runs = load_runs(path, fmt)
    except FormatError as exc:
        if fmt is None and not path.name.endswith(RUN_SUFFIXES):
            return None
        _errors.append(f"{path}: {exc}")
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
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(RUN_SUFFIXES))
    elif path.exists():
        files = [path]
    else:
        raise SourceError(f"no such file or directory: {path}")
    runs: list[Any] = []
    for file in files:
        runs.extend(runs_of(file, fmt) or [])
    return runs
