"""Open a file as one JSON document or as JSON Lines, with one clear error when it is neither.

A foreign file is hostile input, and a big one must not take memory in proportion to its
steps (a 105 MB `.traj` of 990,000 steps parsed at once took 4.26 GB; a 50 MB Claude
transcript 489 MB). So `read_document` reads only a file's head: it refuses a file over
`MAX_FILE_BYTES`, a binary or empty one, and tells JSON Lines from one document by its first
line (a complete JSON value followed by more lines). Then what an importer asks for is read:

- `records()` of JSON Lines: a `Records` sequence that reads the file line by line each time it
  is walked, each line checked for depth and parsed alone (one line's memory at a time);
- `object_index()` of a JSON object: its members read once element by element
  (`jsonstream.ObjectIndex`), so an importer streams its big arrays (SWE-agent); a small file
  (`KEEP_BYTES`) is indexed from its `value` instead, parsed once for every reader;
- `value` of a document: the whole value, parsed at once, for the formats whose runs are read
  as a whole (bounded: a file holding more than `MAX_CONTAINERS` JSON objects or arrays,
  counted with two C-speed passes, an upper bound, is refused before it is parsed, since each
  costs far more in memory than in the file; its depth is measured once it is parsed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, BinaryIO, overload

from supervisor.importers.base import FormatError
from supervisor.importers.jsonstream import MAX_MEMBERS, ObjectIndex, StreamError
from supervisor.protocol.bounded import JSONTooDeep, depth_of, loads
from supervisor.protocol.names import MAX_JSON_DEPTH

MAX_FILE_BYTES = 128 * 1024 * 1024
"""Files above this are refused rather than read."""
MAX_CONTAINERS = 1_000_000
"""Documents holding more JSON objects and arrays than this are refused rather than parsed
whole (streamed reads are bounded per line or element instead)."""
HEAD_LINE = 1024 * 1024
"""Bytes of a line looked at to tell JSON Lines from one document (a longer line is read whole
only when more lines follow it)."""
KEEP_BYTES = 1024 * 1024
"""Files up to this size keep what was parsed (JSON Lines their records, a document its arrays'
elements), so walking them again costs no second parse; larger ones are read again."""
HEAD_RECORDS = 64
"""Records of JSON Lines kept after the first walk: what format detection looks at."""
_BOM = b"\xef\xbb\xbf"


class Document:
    """A run file: `kind` "json" (one value) or "jsonl" (one value per line), read lazily."""

    def __init__(self, path: Path, kind: str) -> None:
        self.path = path
        self.kind = kind

    @cached_property
    def value(self) -> Any:
        """The document's value, or the `Records` of JSON Lines."""
        return Records(self.path) if self.kind == "jsonl" else _parse_whole(self.path)

    def records(self) -> Sequence[Any]:
        """The top-level records: the lines of JSON Lines, or the one JSON value as a list."""
        return self.value if self.kind == "jsonl" else [self.value]

    @cached_property
    def _index(self) -> ObjectIndex | None:
        if self.kind != "json":
            return None
        try:
            keep = self.path.stat().st_size <= KEEP_BYTES
            if keep:  # small: index the value parsed at once, which other readers share
                try:
                    value = self.value
                except FormatError:
                    pass  # e.g. too deep as a whole, not element by element: the scan judges
                else:
                    if not isinstance(value, dict) or len(value) > MAX_MEMBERS:
                        return None  # what the scan refuses
                    return ObjectIndex.of_value(self.path, value)
            return ObjectIndex.scan(self.path, keep=keep)
        except (StreamError, OSError):
            return None  # not one readable object: `value` says what is wrong with it

    def object_index(self) -> ObjectIndex | None:
        """The document's top-level object, indexed for streaming; None when it is not a
        readable JSON object."""
        return self._index


def read_document(path: Path) -> Document:
    """Open `path`; raise `FormatError` (one line) for missing, too large, empty or binary
    files. Broken content is found when it is read (`FormatError` too)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise FormatError(f"file too large ({size} bytes, over the "
                              f"{MAX_FILE_BYTES // (1024 * 1024)} MiB an import reads)")
        with open(path, "rb") as handle:
            if b"\x00" in handle.read(8192):
                raise FormatError("binary file, not JSON")
            handle.seek(0)
            handle.seek(len(_BOM) if handle.read(len(_BOM)) == _BOM else 0)
            start = handle.tell()
            first = _next_line(handle)
            while first is not None and not first.strip():
                start = handle.tell()
                first = _next_line(handle)
            if first is None:
                raise FormatError("empty file")
            more = False
            while (line := _next_line(handle)) is not None:
                if line.strip():
                    more = True
                    break
            if more and len(first) >= HEAD_LINE:  # a long first line: read it whole to judge
                handle.seek(start)
                first = handle.readline()
    except IsADirectoryError:
        raise FormatError("is a directory, not a run file") from None
    except FileNotFoundError:
        raise FormatError("no such file") from None
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}") from None
    if not more:
        return Document(path, "json")
    try:
        loads(first, constants=True)
    except ValueError:  # the first line of a document written over several lines
        return Document(path, "json")
    return Document(path, "jsonl")


def _next_line(handle: BinaryIO) -> bytes | None:
    """The next line, or its first `HEAD_LINE` bytes when it is longer (the rest is skipped
    without being held); None at the end of the file."""
    line = handle.readline(HEAD_LINE)
    if not line:
        return None
    if len(line) == HEAD_LINE and not line.endswith(b"\n"):
        while (rest := handle.readline(HEAD_LINE)) and not rest.endswith(b"\n"):
            pass
    return line


class Records(Sequence[Any]):
    """The records of a JSON Lines file, read from the file each time they are walked; the
    first `HEAD_RECORDS` are kept, so detection and `records[:n]` cost no second read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._head: list[Any] | None = None
        self._length: int | None = None
        self._all: list[Any] | None = None
        try:
            self._keep = path.stat().st_size <= KEEP_BYTES
        except OSError:
            self._keep = False

    def __iter__(self) -> Iterator[Any]:
        if self._all is not None:
            yield from self._all
            return
        kept: list[Any] = []
        head: list[Any] = []
        count = 0
        try:
            with open(self.path, "rb") as handle:
                for number, raw in enumerate(handle, 1):
                    if number == 1 and raw.startswith(_BOM):
                        raw = raw[len(_BOM):]
                    if not raw or raw.isspace():  # a blank line (without copying it)
                        continue
                    record = _line(raw, number)
                    count += 1
                    if self._keep:
                        kept.append(record)
                    if len(head) < HEAD_RECORDS:
                        head.append(record)
                        if len(head) == HEAD_RECORDS:
                            self._head = self._head or head
                    yield record
        except OSError as exc:
            raise FormatError(f"cannot read: {exc.strerror or exc}") from None
        self._head = self._head or head
        self._length = count
        if self._keep:
            self._all = kept

    def _first(self, count: int) -> list[Any]:
        if self._head is not None and (len(self._head) >= count or self._length is not None):
            return self._head[:count]
        wanted, out = max(count, HEAD_RECORDS), []
        for record in self:  # reads no further than needed; the walk keeps the head
            out.append(record)
            if len(out) >= wanted:
                break
        return out[:count]

    def __bool__(self) -> bool:
        return bool(self._first(1))

    def __len__(self) -> int:
        if self._length is None:
            for _record in self:
                pass
        assert self._length is not None
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.start or 0, index.stop, index.step or 1
            if stop is not None and start >= 0 and stop >= 0 and step > 0:
                return self._first(stop)[start::step]
            return list(self)[index]
        if index >= 0:
            head = self._first(index + 1)
            if index < len(head):
                return head[index]
            raise IndexError("record index out of range")
        return list(self)[index]


def _line(raw: bytes, number: int) -> Any:
    if raw.count(b"[") + raw.count(b"{") > MAX_JSON_DEPTH:  # may nest too deep: measured after
        value = _parsed_within_depth(raw)
        if value is not _UNPARSED:
            return value
    try:
        return loads(raw, constants=True)
    except UnicodeDecodeError as exc:
        raise FormatError(f"invalid JSON Lines: line {number}: not UTF-8 text (invalid byte "
                          f"at column {exc.start + 1})") from None
    except ValueError as exc:
        msg = getattr(exc, "msg", None) or str(exc)
        raise FormatError(f"invalid JSON Lines: line {number}: {msg}") from None


def _parse_whole(path: Path) -> Any:
    """The one JSON value of `path`, parsed at once (bounded as the module says).

    Parsed first and its depth measured after (`depth_of`, a fraction of the parse; checking
    the text before parsing cost as much as the parse): the standard parser itself stops at
    the interpreter's recursion limit, and a value deeper than `MAX_JSON_DEPTH` is refused
    before anyone reads it. Whatever does not parse, or is too deep, goes through the bounded
    parser (`protocol.bounded.loads`), whose error is the one reported."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}") from None
    containers = data.count(b"{") + data.count(b"[")
    if containers > MAX_CONTAINERS:
        raise FormatError(f"too many JSON objects and arrays (up to {containers}, over the "
                          f"{MAX_CONTAINERS} an import parses)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (invalid byte at offset {exc.start})") from None
    del data
    value = _parsed_within_depth(text)
    if value is not _UNPARSED:
        return value
    try:
        return loads(text, constants=True)
    except JSONTooDeep as exc:
        raise FormatError(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
                          ) from None


_UNPARSED = object()


def _parsed_within_depth(data: bytes | str) -> Any:
    """The value of `data` if the standard parser reads it and it nests no deeper than
    `MAX_JSON_DEPTH`, else `_UNPARSED` (the bounded parser then says why, as it always did).

    Checking the text's depth before parsing it (`protocol.bounded.too_deep`, needed when it
    has more brackets than the limit) cost about as much as the parse; the parsed value's
    depth costs a fraction of it, and the parser itself stops at the interpreter's recursion
    limit."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return _UNPARSED
    return value if depth_of(value, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH else _UNPARSED
