"""Read one big JSON object a member at a time, and its arrays an element at a time.

A SWE-agent `.traj` is a single JSON object whose `trajectory` and `history` arrays hold the
whole run; parsed at once, a 105 MB file of 990,000 steps took 4.26 GB (each small value costs
far more as a Python object than as text). Here the file is scanned once with the standard
parser's `raw_decode` over a sliding buffer: `ObjectIndex.scan` records where each top-level
member's value starts (and decodes the values that are not arrays, which are small in every
format we read), and `ObjectIndex.elements(key)` later reads one array from its offset, one
element at a time. Memory is then bounded by the largest single element, whatever the count.

Every element is checked for depth like every other JSON the supervisor reads
(`protocol.bounded`): nesting deeper than `MAX_JSON_DEPTH` is refused, never parsed.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from supervisor.protocol.bounded import too_deep
from supervisor.protocol.names import MAX_JSON_DEPTH

CHUNK = 1 << 20
"""Bytes read at a time (the buffer grows beyond it only for a value that does not fit)."""
MAX_MEMBERS = 10_000
"""Top-level members of one object kept in the index; a file with more is not read this way."""
_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()
_BOM = codecs.BOM_UTF8


class StreamError(ValueError):
    """The text is not the JSON this reader expects (broken, too deep, not an object)."""


class _Reader:
    """Decoded text of a file from a byte offset, in a buffer that slides forward."""

    def __init__(self, handle: BinaryIO, offset: int) -> None:
        handle.seek(offset)
        self._handle = handle
        self._decoder = codecs.getincrementaldecoder("utf-8")("strict")
        self._buf = ""
        self._pos = 0
        self._base = offset  # byte offset of _buf[0]
        self._eof = False

    def offset(self) -> int:
        """Byte offset in the file of the current position."""
        return self._base + len(self._buf[: self._pos].encode("utf-8", "surrogatepass"))

    def _fill(self, at_least: int = CHUNK) -> bool:
        if self._eof:
            return False
        if self._pos > len(self._buf) // 2:  # drop what was read, keeping offsets right
            self._base = self.offset()
            self._buf = self._buf[self._pos:]
            self._pos = 0
        data = self._handle.read(max(at_least, CHUNK))
        try:
            text = self._decoder.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise StreamError(f"not UTF-8 text (invalid byte near offset "
                              f"{self._base + exc.start})") from None
        if not data:
            self._eof = True
        self._buf += text
        return bool(data)

    def peek(self) -> str:
        """The next character that is not whitespace ('' at the end of the file)."""
        while True:
            while self._pos < len(self._buf) and self._buf[self._pos] in _WHITESPACE:
                self._pos += 1
            if self._pos < len(self._buf):
                return self._buf[self._pos]
            if not self._fill():
                return ""

    def expect(self, chars: str) -> str:
        char = self.peek()
        if not char or char not in chars:
            found = repr(char) if char else "the end of the file"
            raise StreamError(f"expected {' or '.join(map(repr, chars))}, found {found} "
                              f"(offset {self.offset()})")
        self._pos += 1
        return char

    def value(self) -> Any:
        """The next JSON value, checked for depth before it is parsed."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buf, self._pos)
            except json.JSONDecodeError as exc:
                if self._fill(len(self._buf)):  # perhaps cut by the buffer's end: read more
                    continue
                raise StreamError(f"invalid JSON: {exc.msg} (offset {self.offset()})") from None
            except RecursionError:
                raise StreamError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
            if end == len(self._buf) and self._fill():
                continue  # a number may go on in the next chunk
            break
        if too_deep(self._buf[self._pos:end]):
            raise StreamError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        self._pos = end
        return value

    def elements(self) -> Iterator[Any]:
        """The elements of the array that starts here, one at a time."""
        self.expect("[")
        if self.peek() == "]":
            self._pos += 1
            return
        while True:
            yield self.value()
            if self.expect(",]") == "]":
                return


@dataclass
class Member:
    """One top-level member: where its value starts; arrays are read later, anything else
    is decoded during the scan (`value`)."""

    offset: int
    is_array: bool
    value: Any = None
    first: Any = None
    """An array's first element (None when it is empty), for telling formats apart."""
    length: int = 0
    kept: list[Any] | None = None
    """An array's elements, kept when the file is small (`ObjectIndex.scan`'s `keep`)."""


@dataclass
class ObjectIndex:
    """The top-level members of the JSON object in `path`, in file order, by key."""

    path: Path
    members: dict[str, Member] = field(default_factory=dict)

    @classmethod
    def scan(cls, path: Path, keep: bool = False) -> ObjectIndex:
        """Read the file once, element by element; `StreamError` if it is not one JSON object
        (or is broken, or too deep). With `keep`, arrays keep their elements (for a small
        file: reading them again would parse them twice)."""
        index = cls(path)
        with open(path, "rb") as handle:
            start = len(_BOM) if handle.read(len(_BOM)) == _BOM else 0
            reader = _Reader(handle, start)
            reader.expect("{")
            if reader.peek() == "}":
                reader.expect("}")
            else:
                while True:
                    if reader.peek() != '"':
                        reader.expect('"')
                    key = reader.value()
                    reader.expect(":")
                    if len(index.members) >= MAX_MEMBERS:
                        raise StreamError(f"more than {MAX_MEMBERS} top-level members")
                    index.members[key] = index._member(reader, keep)
                    if reader.expect(",}") == "}":
                        break
            if reader.peek():
                raise StreamError("extra data after the JSON object")
        return index

    @classmethod
    def of_value(cls, path: Path, value: dict[str, Any]) -> ObjectIndex:
        """The index `scan(path, keep=True)` makes, of the object already parsed whole (a
        small file read by several readers: parsed once, not once for each)."""
        index = cls(path)
        for key, member in value.items():
            if isinstance(member, list):
                index.members[key] = Member(0, True, first=member[0] if member else None,
                                            length=len(member), kept=member)
            else:
                index.members[key] = Member(0, False, value=member)
        return index

    @staticmethod
    def _member(reader: _Reader, keep: bool) -> Member:
        if reader.peek() != "[":
            return Member(reader.offset(), False, value=reader.value())
        member = Member(reader.offset(), True, kept=[] if keep else None)
        for element in reader.elements():
            if member.length == 0:
                member.first = element
            if member.kept is not None:
                member.kept.append(element)
            member.length += 1
        return member

    def __contains__(self, key: str) -> bool:
        return key in self.members

    def get(self, key: str) -> Any:
        """A member that is not an array (None when absent or an array)."""
        member = self.members.get(key)
        return None if member is None or member.is_array else member.value

    def is_array(self, key: str) -> bool:
        member = self.members.get(key)
        return member is not None and member.is_array

    def first(self, key: str) -> Any:
        """The first element of the array member `key` (None when absent or empty)."""
        member = self.members.get(key)
        return None if member is None else member.first

    def length(self, key: str) -> int:
        """How many elements the array member `key` has (0 when absent or not an array)."""
        member = self.members.get(key)
        return 0 if member is None else member.length

    def elements(self, key: str) -> Iterator[Any]:
        """The elements of the array member `key`, read from the file one at a time (nothing
        when it is absent or not an array)."""
        member = self.members.get(key)
        if member is None or not member.is_array:
            return
        if member.kept is not None:
            yield from member.kept
            return
        with open(self.path, "rb") as handle:
            yield from _Reader(handle, member.offset).elements()
