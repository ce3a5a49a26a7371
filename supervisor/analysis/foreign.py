"""Foreign run files as analysis sources, so `supervisor analyze` takes them as they are.

`sources.load_runs` tries `runs_of` on every path that is not protocol (it names it in its
loader registry, imported at first use). The format is detected by content. A file that looks
like a run file (`.traj`, `.json`, `.jsonl`) but is broken or of an unknown format does not stop
the analysis of the others: its one-line error is kept in `errors()` for the command to print.
"""

from pathlib import Path

from supervisor.analysis.sources import Run, SourceError
from supervisor.importers import FormatError, ImportedRun, load_runs
from supervisor.importers.files import RUN_SUFFIXES, run_paths
from supervisor.importers.openhands import is_event_dir

_errors: list[tuple[Path, FormatError]] = []


def errors() -> list[tuple[Path, FormatError]]:
    """(path, error) of every file the loader could not read so far (`UnknownFormat` for
    readable files of no known format)."""
    return list(_errors)


def runs_of(path: Path, fmt: str | None = None) -> list[Run] | None:
    """The runs in `path`; None when it is not a run file.

    A broken or unknown file with a run-file suffix (or any file when `fmt` is forced) gives
    an empty list and an entry in `errors()`; the caller decides whether an unknown file found
    in a directory is worth more than a warning.
    """
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


def forced_runs(path: Path, fmt: str) -> list[Run]:
    """The runs of `path` read as format `fmt` (a file, or every run file under a directory)."""
    if path.is_dir():
        files = run_paths(path)
    elif path.exists():
        files = [path]
    else:
        raise SourceError(f"no such file or directory: {path}")
    runs: list[Run] = []
    for file in files:
        runs.extend(runs_of(file, fmt) or [])
    return runs
