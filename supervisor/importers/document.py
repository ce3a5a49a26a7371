"""Read a file as one JSON document or as JSON Lines, with one clear error when it is neither.

Detection and import both work on the parsed content, so a file is read and parsed once.

Bounded, because a foreign file is hostile input (a 150 MB `.traj` of 2 million steps used to
take 4.9 GB and minutes): a file over `MAX_FILE_BYTES` is refused before it is read, and one
whose bytes hold more than `MAX_CONTAINERS` JSON objects or arrays (counted with two C-speed
passes, an upper bound: brackets inside strings count too) is refused before it is parsed,
since each costs far more in memory than in the file. What is parsed is then at most a fixed
multiple of those bounds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.importers.base import FormatError
from supervisor.protocol.bounded import JSONTooDeep, loads, structural_depth
from supervisor.protocol.names import MAX_JSON_DEPTH

MAX_FILE_BYTES = 128 * 1024 * 1024
"""Files above this are refused rather than read into memory."""
MAX_CONTAINERS = 1_000_000
"""Files holding more JSON objects and arrays than this are refused rather than parsed."""


@dataclass(frozen=True)
class Document:
    """A parsed file: `kind` "json" (one value) or "jsonl" (`value` is the list of lines)."""

    path: Path
    kind: str
    value: Any

    def records(self) -> list[Any]:
        """The top-level records: the lines of JSON Lines, or the one JSON value as a list."""
        return self.value if self.kind == "jsonl" else [self.value]


def read_document(path: Path) -> Document:
    """Parse `path`; raise `FormatError` (one line) for missing, empty, binary or broken files."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FormatError(f"file too large ({size} bytes, over the "
                              f"{MAX_FILE_BYTES // (1024 * 1024)} MiB an import reads)")
        data = path.read_bytes()
    except IsADirectoryError:
        raise FormatError("is a directory, not a run file") from None
    except FileNotFoundError:
        raise FormatError("no such file") from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}") from None
    if b"\x00" in data[:8192]:
        raise FormatError("binary file, not JSON")
    containers = data.count(b"{") + data.count(b"[")
    if containers > MAX_CONTAINERS:
        raise FormatError(f"too many JSON objects and arrays (up to {containers}, over the "
                          f"{MAX_CONTAINERS} an import parses)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    if not text.strip():
        raise FormatError("empty file")
    # one depth check for the whole file (and so for each of its lines, see structural_depth)
    depth = 0 if containers <= MAX_JSON_DEPTH else structural_depth(data, MAX_JSON_DEPTH)
    parse = _loads if depth is not None and depth <= MAX_JSON_DEPTH else _checked_loads
    try:
        return Document(path, "json", parse(text))
    except JSONTooDeep as exc:
        raise FormatError(str(exc)) from None
    except json.JSONDecodeError as whole:
        return _json_lines(path, text, whole, parse)


def _checked_loads(text: str) -> Any:
    return loads(text, constants=True)


def _loads(text: str) -> Any:
    """`json.loads` of text whose depth was checked (with the file); `JSONTooDeep`, never
    `RecursionError`, should a malformed line make the parser go deep before it fails."""
    try:
        return json.loads(text)
    except RecursionError:
        raise JSONTooDeep(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None


def _json_lines(path: Path, text: str, whole: json.JSONDecodeError,
                parse: Callable[[str], Any]) -> Document:
    values: list[Any] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            values.append(parse(line))
        except ValueError as exc:
            if not values and not isinstance(exc, JSONTooDeep):
                # not JSON Lines either: report the error of the whole document
                raise FormatError(
                    f"invalid JSON: {whole.msg} at line {whole.lineno} column {whole.colno}"
                ) from None
            msg = getattr(exc, "msg", None) or str(exc)
            raise FormatError(f"invalid JSON Lines: line {number}: {msg}") from None
    return Document(path, "jsonl", values)
