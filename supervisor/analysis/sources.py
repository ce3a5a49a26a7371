"""Turn a path into runs to analyse: protocol files and session directories, plus registered
foreign formats.

A run is `(session, source, events)`: a session name, where it came from (a path, with
`#name` for one of several runs in a file) and an iterable of protocol event dicts. Protocol
JSONL files and session directories are built in; other formats (SWE-agent, OpenHands, ...) are
read by the loaders of `_LOADERS`: the importers' (`foreign.runs_of`), named by module path and
imported only when a path is not protocol, and any added with `register_loader`.
"""

import importlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.protocol.bad_line import BadLine
from supervisor.protocol.codec import parse_line
from supervisor.protocol.linereader import bounded_lines
from supervisor.protocol.names import (
    AGENT_EVENT_TYPES,
    CONTROL_FILE,
    EVENTS_FILE,
    MAX_LINE_BYTES,
    SESSIONS_DIR,
)


@dataclass(slots=True)
class Run:
    """One run to replay."""

    session: str
    source: str
    events: Iterable[dict[str, Any]]


Loader = Callable[[Path], list[Run] | None]
"""A loader returns the runs in a file or directory, or None when the path is not its format."""

_LOADERS: dict[str, Loader | str] = {
    "importers": "supervisor.analysis.foreign:runs_of",
}
"""Loaders of foreign formats, tried after the protocol in this order: a loader, or the
`module:function` that names one, imported at first use (a session directory needs none)."""
_bad_lines: list[str] = []


class SourceError(ValueError):
    """A path that holds nothing analysable."""


def register_loader(name: str, loader: Loader) -> None:
    """Add a loader for a foreign format (tried after the protocol and the importers, in
    registration order); a name already registered keeps its loader."""
    _LOADERS.setdefault(name, loader)


def _loader(name: str) -> Loader:
    """The loader registered as `name`, imported the first time it is asked for."""
    entry = _LOADERS[name]
    if isinstance(entry, str):
        module, _, function = entry.partition(":")
        entry = _LOADERS[name] = getattr(importlib.import_module(module), function)
    return entry


_MAX_BAD_LINES = 1000


def bad_lines(*, clear: bool = False) -> list[str]:
    """Descriptions of the bad lines skipped so far (file:offset: reason), the last 1,000;
    with `clear`, forget them."""
    got = list(_bad_lines)
    if clear:
        _bad_lines.clear()
    return got


def skipped(*, clear: bool = False) -> list[str]:
    """Paths found in a directory and skipped because they are not regular files (a FIFO named
    `*.jsonl` would block the reader forever), with the reason; with `clear`, forget them."""
    got = list(_skipped)
    if clear:
        _skipped.clear()
    return got


_skipped: list[str] = []


def read_protocol(path: Path) -> Iterator[dict[str, Any]]:
    """The valid events of a protocol JSONL file as dicts; bad lines are skipped and noted.

    Streams with the protocol's line limit: an oversized line is skipped without being held."""
    with path.open("rb") as fh:
        for line in bounded_lines(fh):
            raw = line.data.rstrip(b"\r")
            parsed = (BadLine(f"line exceeds {MAX_LINE_BYTES} bytes", b"", size=line.size)
                      if line.oversized else parse_line(raw))
            if isinstance(parsed, BadLine):
                _bad_lines.append(f"{path}:{line.offset}: {parsed.reason}")
                del _bad_lines[:-_MAX_BAD_LINES]
                continue
            yield json.loads(raw)


def is_protocol_file(path: Path) -> bool:
    """True when the first non-empty line of `path` is a protocol event."""
    try:
        with path.open("rb") as fh:
            for line in bounded_lines(fh):
                parsed = parse_line(line.data.rstrip(b"\r"))
                return not isinstance(parsed, BadLine) and parsed.type in AGENT_EVENT_TYPES
    except OSError:
        return False
    return False


def _protocol_run(path: Path) -> Run:
    session = path.parent.name if path.name == EVENTS_FILE else path.stem
    return Run(session, str(path), read_protocol(path))


def load_runs(path: Path) -> list[Run]:
    """Every run under `path` (a protocol file, a session directory, a store root, a directory
    of files, or a file of a registered format); raises `SourceError` when there is none."""
    if not path.exists():
        raise SourceError(f"no such file or directory: {path}")
    if not path.is_dir() and not path.is_file():
        raise SourceError(f"{path}: not a regular file (a FIFO, socket or device)")
    if path.name == CONTROL_FILE and path.is_file():  # (an unknown format, it was said)
        raise SourceError(f"{path}: the operators' decisions of a session, not its run: "
                          f"analyze its folder or its {EVENTS_FILE}")
    runs = _load(path, depth=0)
    if runs is None:
        raise SourceError(f"{path}: {_none_in(path)}")
    return runs


def _none_in(path: Path) -> str:
    """Why `path` holds no run, in words that tell an empty store from a wrong path."""
    if path.is_dir() and (path / SESSIONS_DIR).is_dir():
        return "a store root with no sessions in it"
    if path.is_dir() and not any(path.iterdir()):
        return "an empty folder"
    return "not a protocol file, session directory or known run format"


def _load(path: Path, depth: int) -> list[Run] | None:
    if path.is_dir():
        events = path / EVENTS_FILE
        if events.is_file():
            return [_protocol_run(events)]
        if (path / SESSIONS_DIR).is_dir():  # a store root: its runs are its sessions; the
            # rest is the store's own (the failure memory's notes, keys), not a run to read
            return _load(path / SESSIONS_DIR, depth + 1)
        found = _foreign(path)
        if found is not None:
            return found
        if depth >= 3:
            return None
        runs: list[Run] = []
        any_found = False
        for child in sorted(path.iterdir()):
            if child.name.startswith(".") or child.name == "control.jsonl":
                continue
            got = _load(child, depth + 1)
            if got is not None:
                any_found = True
                runs.extend(got)
        return runs if any_found else None
    if not path.is_file():  # reading a FIFO or a device could block forever
        _skipped.append(f"{path}: not a regular file")
        return None
    if path.suffix == ".jsonl" and is_protocol_file(path):
        return [_protocol_run(path)]
    return _foreign(path)


def _foreign(path: Path) -> list[Run] | None:
    for name in list(_LOADERS):
        try:
            got = _loader(name)(path)
        except (OSError, ValueError) as exc:
            raise SourceError(f"{path}: {exc}") from None
        if got is not None:
            return got
    return None
