"""Importers: runs recorded by other agent frameworks, as protocol events.

`load_runs(path)` reads a file, detects its format by content (not by its name), and returns
one `ImportedRun` per run in it (an OpenHands `output.jsonl` holds one run per line). Every
problem with a file is a `FormatError` with a one-line message. What maps to what is in
docs/importers.md. Importers depend on the protocol only (never on the store or the TUI), so
`supervisor analyze` can replay the events straight through the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervisor.importers import (
    claude_code,
    codex,
    gemini_cli,
    mini_swe_agent,
    openhands,
    swe_agent,
)
from supervisor.importers.base import FormatError, ImportedRun, UnknownFormat
from supervisor.importers.document import Document, read_document

__all__ = ["FORMATS", "FormatError", "ImportedRun", "UnknownFormat", "detect_format",
           "load_runs"]

_Loader = Callable[[Any, Path], list[ImportedRun]]
_Matcher = Callable[[Any], bool]

FORMATS: dict[str, str] = {
    "swe-agent": "SWE-agent .traj (trajectory of action/observation/thought steps)",
    "mini-swe-agent": "mini-swe-agent .traj.json (chat messages; bare list, v1 or v1.1 tools)",
    "openhands": "OpenHands event stream, output.jsonl history, or LLM completion log",
    "claude-code": "Claude Code transcript ~/.claude/projects/<project>/<session>.jsonl",
    "codex": "Codex CLI rollout .jsonl (session_meta/response_item lines)",
    "gemini-cli": "Gemini CLI session .json (messages with toolCalls)",
}
"""Format names (for `--format`) and what each is."""

# Detection order matters only where shapes could overlap: the specific ones come first.
_HANDLERS: dict[str, tuple[_Matcher, _Loader]] = {
    "swe-agent": (swe_agent.matches, swe_agent.load),
    "openhands": (openhands.matches, openhands.load),
    "mini-swe-agent": (mini_swe_agent.matches, mini_swe_agent.load),
    "claude-code": (claude_code.matches, claude_code.load),
    "codex": (codex.matches, codex.load),
    "gemini-cli": (gemini_cli.matches, gemini_cli.load),
}


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
    path = Path(path)
    if fmt is not None and fmt not in FORMATS:
        raise FormatError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if path.is_dir() and fmt in (None, "openhands") and openhands.is_event_dir(path):
        return openhands.load_event_dir(path)
    document = read_document(path)
    name = fmt or _detect(document)
    if name is None:
        raise UnknownFormat(f"unknown format ({_shape(document)}); use --format to force one "
                            f"of: {', '.join(FORMATS)}")
    loader = _HANDLERS[name][1]
    try:
        return loader(_value(document, name), path)
    except FormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise FormatError(f"not a valid {name} file: {type(exc).__name__}: {exc}") from None


def _detect(document: Document) -> str | None:
    for name, (matcher, _loader) in _HANDLERS.items():
        try:
            if matcher(_value(document, name)):
                return name
        except (TypeError, ValueError, AttributeError, KeyError, IndexError):
            continue  # an odd value where a format expects another shape: not that format
    return None


def _value(document: Document, name: str) -> Any:
    """What a format's matcher and loader take: line formats get a list of records even when
    the file holds a single line (which parses as one JSON document)."""
    if name in ("claude-code", "codex"):
        return document.records()
    if name == "openhands" and document.kind == "json" and openhands.is_output_record(
            document.value):
        return document.records()
    return document.value


def _shape(document: Document) -> str:
    value = document.value
    if document.kind == "jsonl":
        first = value[0] if value else None
        keys = ", ".join(list(first)[:6]) if isinstance(first, dict) else type(first).__name__
        return f"JSON Lines of {len(value)} records; first has: {keys}"
    if isinstance(value, dict):
        return f"JSON object with keys: {', '.join(list(value)[:8]) or 'none'}"
    if isinstance(value, list):
        return f"JSON list of {len(value)} items"
    return f"JSON {type(value).__name__}"
