"""Importers: runs recorded by other agent frameworks, as protocol events.

`load_runs(path)` reads a file, detects its format by content (not by its name), and returns
one `ImportedRun` per run in it (an OpenHands `output.jsonl` holds one run per line);
`iter_runs(path)` yields them one at a time as `SpooledRun`s, whose events are read back from
a spool as they are written, so that `supervisor import` holds one event at a time. Every
problem with a file is a `FormatError` with a one-line message. Each format is one module with
one `Importer` (`base.py`: name, description, `matches`, `load`), listed in `IMPORTERS`. What
maps to what is in docs/importers.md. Importers depend on the protocol and the engine's
fingerprints only (never on the store, the TUI or the analysis), so `supervisor analyze` can
replay the events straight through the engine.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from supervisor.importers import (
    claude_code,
    codex,
    copilot_cli,
    gemini_cli,
    mini_swe_agent,
    opencode,
    openhands,
    pi,
    swe_agent,
)
from supervisor.importers.base import (
    FormatError,
    ImportedRun,
    Importer,
    SpooledRun,
    UnknownFormat,
)
from supervisor.importers.document import Document, read_document

__all__ = ["FORMATS", "IMPORTERS", "FormatError", "ImportedRun", "Importer", "SpooledRun",
           "UnknownFormat", "detect_format", "iter_runs", "load_runs"]

IMPORTERS: dict[str, Importer] = {importer.name: importer for importer in (
    swe_agent.IMPORTER,
    mini_swe_agent.IMPORTER,
    openhands.IMPORTER,
    claude_code.IMPORTER,
    codex.IMPORTER,
    gemini_cli.IMPORTER,
    copilot_cli.IMPORTER,
    opencode.IMPORTER,
    pi.IMPORTER,
)}
"""Every format by name (for `--format`), in the order they are listed to people."""
FORMATS: dict[str, str] = {name: importer.description for name, importer in IMPORTERS.items()}
"""Format names (for `--format`) and what each is."""

_TRIED_FIRST = ("swe-agent", "openhands")
"""Detection order matters only where shapes could overlap: the specific ones come first, then
the others in `IMPORTERS` order."""
_DETECTION: tuple[Importer, ...] = tuple(
    [IMPORTERS[name] for name in _TRIED_FIRST]
    + [importer for name, importer in IMPORTERS.items() if name not in _TRIED_FIRST])


def detect_format(path: Path) -> str | None:
    """The format of the file at `path`, judged by its content; None if unknown or unreadable."""
    path = Path(path)
    if path.is_dir():
        return "openhands" if openhands.is_event_dir(path) else None
    try:
        return _detect(read_document(path))
    except FormatError:
        return None


def load_runs(path: Path, fmt: str | None = None) -> list[ImportedRun]:
    """Every run in the file at `path` (or OpenHands event directory), as protocol events.

    `fmt` forces a format (one of `FORMATS`); by default it is detected from the content.
    Raises `FormatError` (one line, without the path) for unknown formats and broken files.
    """
    runs = []
    for spooled in iter_runs(path, fmt):
        with spooled:
            runs.append(spooled.imported())
    return runs


def iter_runs(path: Path, fmt: str | None = None) -> Iterator[SpooledRun]:
    """The runs of `load_runs`, each read from the file when it is taken, its events spooled
    (memory bounded by one step, not by the run; the taker closes each, `SpooledRun.close`).
    `FormatError` as `load_runs` raises it, possibly after some runs were taken (a broken
    later line of an `output.jsonl`)."""
    path = Path(path)
    if fmt is not None and fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if path.is_dir() and fmt in (None, "openhands") and openhands.is_event_dir(path):
        yield from openhands.load_event_dir(path)
        return
    document = read_document(path)
    name = fmt or _detect(document)
    if name is None:
        raise UnknownFormat(f"unknown format ({_shape(document)}); use --format to force one "
                            f"of: {', '.join(FORMATS)}")
    importer = IMPORTERS[name]
    try:
        yield from importer.load(importer.reads(document), path)
    except FormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise FormatError(f"not a valid {name} file: {type(exc).__name__}: {exc}") from None


def _detect(document: Document) -> str | None:
    for importer in _DETECTION:
        try:
            if importer.matches(importer.reads(document)):
                return importer.name
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            continue  # an odd value where a format expects another shape: not that format
    return None


def _shape(document: Document) -> str:
    value = document.value
    if document.kind == "jsonl":  # walks the file once more: only for this error
        first = value[0] if value else None
        keys = ", ".join(list(first)[:6]) if isinstance(first, dict) else type(first).__name__
        return f"JSON Lines of {len(value)} records; first has: {keys}"
    if isinstance(value, dict):
        return f"JSON object with keys: {', '.join(list(value)[:8]) or 'none'}"
    if isinstance(value, list):
        return f"JSON list of {len(value)} items"
    return f"JSON {type(value).__name__}"
