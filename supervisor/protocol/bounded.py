"""Bounded JSON, stdlib only: parse with a nesting limit, shrink values to a size, keep odd text.

Everything the supervisor reads as JSON (event and control lines, hook payloads, state files,
foreign runs) is untrusted, and one hostile value must be a bad line, never an exception that
switches supervision off:

- `loads` refuses JSON nested deeper than `MAX_JSON_DEPTH` *before* parsing it (the standard
  parser would either raise `RecursionError`, which nobody catches, or hand back a value deep
  enough to break every recursive consumer later), and refuses `NaN`/`Infinity` (not JSON);
- `too_deep` is that check alone, a few C-speed passes over the bytes;
- `shrink` cuts a value until its JSON fits a byte budget: long strings keep their head and
  tail, long containers their first items, subtrees too deep become text; the writers' bounded
  encoder (`supervisor.protocol.lines.fit_line`) uses it so no line ever exceeds the limit;
- `escape_surrogates` turns lone UTF-16 surrogates (what Python makes of every undecodable byte
  of a file name or output, `surrogateescape`) into visible escapes (`\\xff`, `\\udc00`), so the
  text can be encoded, hashed and shown, and stays distinguishable.

The module is light on purpose: the hook imports it on every tool call.
"""

import json
import math
import re
from typing import Any

from supervisor.protocol.names import MAX_JSON_DEPTH


class JSONTooDeep(ValueError):
    """JSON nested deeper than the limit: refused before parsing."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_STRING_B = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET_B = re.compile(rb"[^\[\]{}]+")
_PAIR_B = re.compile(rb"\[\]|\{\}")
_STRING_S = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET_S = re.compile(r"[^\[\]{}]+")
_PAIR_S = re.compile(r"\[\]|\{\}")
_OPENERS_B = re.compile(rb"[\[{]+")
_OPENERS_S = re.compile(r"[\[{]+")


_ESCAPED_LETTERS = b"/bfnrtu"
_KEEP_FOR_DEPTH = b'\\"[]{}' + _ESCAPED_LETTERS
_DROP_FOR_DEPTH = bytes(b for b in range(256) if b not in _KEEP_FOR_DEPTH)
_QUOTE_OR_BACKSLASH_ESCAPE = re.compile(rb'\\[\\"]')


def structural_depth(data: bytes, limit: int = MAX_JSON_DEPTH) -> int | None:
    """How deep the well-formed JSON text `data` nests (counting no further than `limit + 1`),
    with C-speed passes only; None when its strings do not pair up (malformed text).

    Everything but quotes, brackets, backslashes and the letters an escape can have is dropped;
    then the escape pairs `\\\\` and `\\"` (left to right, as the parser reads them), so every
    quote left opens or closes a string; then the string contents (every other piece between
    quotes). On valid JSON this is exactly what blanking the strings with a regex gives, at a
    small fraction of its cost (the regex walked every byte of every string in Python's regex
    engine: two to three times the cost of parsing the text).

    Also true of JSON Lines: when the whole text's answer is a number, every line of it that
    parses, up to the first that does not, nests no deeper (a valid line ends outside any string
    or escape, with its quotes and brackets paired, so the lines before the first bad one read
    as they would alone, and the whole sequence is balanced only if the rest is too): the
    importers check a file once instead of line by line."""
    kept = data.translate(None, _DROP_FOR_DEPTH)  # escapes keep their letter: pairs stay pairs
    kept = _QUOTE_OR_BACKSLASH_ESCAPE.sub(b"", kept).translate(None, b"\\" + _ESCAPED_LETTERS)
    # two quotes side by side are an empty string or two strings with only separators between:
    # dropping them changes no pairing and leaves few strings (those holding brackets) to blank
    kept = kept.replace(b'""', b"")
    if kept.count(b'"') % 2:
        return None
    rest = _STRING_B.sub(b"", kept) if b'"' in kept else kept
    depth = 0
    while rest and depth <= limit:  # one pass per level: the innermost pairs go
        rest, removed = _PAIR_B.subn(b"", rest)
        if not removed:
            return None
        depth += 1
    return depth


def too_deep(data: bytes | str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when the JSON text `data` nests arrays/objects more than `limit` levels deep.

    Almost every line has fewer brackets than the limit and is answered by two counts. Otherwise
    `structural_depth` answers for well-formed text; when it cannot (strings or brackets that do
    not pair up) or finds the text too deep, the exact walk decides: strings are blanked out,
    everything but brackets dropped, and innermost pairs removed pass by pass (one pass per level,
    at most `limit` passes): linear work, no recursion. Malformed bracketing counts as deep as the
    parser would go before it fails."""
    if isinstance(data, str):
        if data.count("[") + data.count("{") <= limit:
            return False
        depth = structural_depth(data.encode("utf-8", "surrogatepass"), limit)
        if depth is not None and depth <= limit:
            return False
        rest: Any = _NOT_BRACKET_S.sub("", _STRING_S.sub("", data))
        pair: Any = _PAIR_S
        opener_runs: Any = _OPENERS_S
    else:
        if data.count(b"[") + data.count(b"{") <= limit:
            return False
        depth = structural_depth(data, limit)
        if depth is not None and depth <= limit:
            return False
        rest = _NOT_BRACKET_B.sub(b"", _STRING_B.sub(b"", data))
        pair, opener_runs = _PAIR_B, _OPENERS_B
    for passes in range(limit):
        rest, removed = pair.subn(rest[:0], rest)
        if not rest:
            return False
        if not removed:  # unbalanced: the parser fails, after going about this deep
            return passes + max(map(len, opener_runs.findall(rest)), default=0) > limit
    return True


def loads(data: bytes | str, *, max_depth: int = MAX_JSON_DEPTH, constants: bool = False,
          finite: bool = False) -> Any:
    """`json.loads` with a nesting limit and without the non-JSON constants (`NaN`,
    `Infinity`), unless `constants` (files other programs wrote with Python's `json`).
    `finite`: the constants, and numbers too large for a float, are accepted and given as
    the text `writable` makes of them (`"NaN"`, `"Infinity"`, `"-Infinity"`), so the value
    holds no float that is not finite, with no walk of it afterwards.

    Raises `ValueError` for anything that is not JSON (`JSONTooDeep` when nested too deeply,
    `UnicodeDecodeError` for bytes that are not UTF-8), never `RecursionError`."""
    if too_deep(data, max_depth):
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels")
    try:
        return _parse(data, _FINITE_DECODER if finite else _DECODER if constants
                      else _STRICT_DECODER)
    except RecursionError:  # a limit above what this interpreter's stack allows
        raise JSONTooDeep(f"JSON nested too deeply for {max_depth} levels") from None


def _parse(data: bytes | str, decoder: json.JSONDecoder) -> Any:
    """`json.loads(data, ...)` with a decoder made once: `json.loads` given any option makes
    a new decoder at every call, as long as parsing a small line (about 10 us)."""
    if isinstance(data, str):
        if data.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", data, 0)
    else:
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    return decoder.decode(data)


def _finite_float(text: str) -> float | str:
    """A JSON number as a float, or as `writable` gives a float too large for one."""
    value = float(text)
    if math.isfinite(value):
        return value
    return "Infinity" if value > 0 else "-Infinity"


_STRICT_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
_DECODER = json.JSONDecoder()
_FINITE_DECODER = json.JSONDecoder(parse_constant=str, parse_float=_finite_float)

_CONTAINERS = (dict, list, tuple)


def depth_of(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a parsed value (a scalar is 0), counting no further than `limit + 1`.

    Walked a level at a time, looking at containers only: a fraction of what parsing the value
    took (the importers check every document they parse with it)."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return depth
        below = []
        for node in level:
            for child in node.values() if isinstance(node, dict) else node:
                if isinstance(child, _CONTAINERS):
                    below.append(child)
        level = below
    return depth


# -- text ------------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_one(match: "re.Match[str]") -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte it stands for
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def escape_text(text: str) -> str:
    """`text` with every lone surrogate written as a visible escape (`\\xff`, `\\ud800`).

    Such text (a non-UTF-8 file name decoded by Python) cannot be encoded as UTF-8; the escape
    keeps what it was, unlike a replacement character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape_one, text)
    return text


def escape_surrogates(value: Any) -> Any:
    """`value` (str, or dicts and lists of them, keys included) with lone surrogates escaped;
    the same object when there is nothing to escape."""
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, dict):
        if not _has_surrogates(value):
            return value
        return {escape_surrogates(k): escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if not _has_surrogates(value):
            return value
        return [escape_surrogates(v) for v in value]
    return value


_STRICT = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
"""`json.dumps(value, ensure_ascii=False, allow_nan=False)` without making an encoder per call
(`writable` runs several times on every hook call)."""


def writable(value: Any) -> Any:
    """`value` (parsed JSON, or what a program passed) made fit for a protocol line without
    losing what it said: lone surrogates escaped (`escape_text`), non-finite floats as their
    text (`"NaN"`, `"Infinity"`), keys as strings. The same object when nothing had to change.
    Used where text enters the supervisor (the hook's payload, the guard's public methods), so
    nothing downstream (hashes, the engine, the state file) meets such values."""
    try:
        if isinstance(value, str):  # a name, an id: nothing to walk
            value.encode("utf-8")
        else:
            _STRICT.encode(value).encode("utf-8")
        return value
    except (UnicodeEncodeError, ValueError, TypeError):
        return _writable(value)
    except RecursionError:
        return _writable(shrink(value, 1 << 62))


def _writable(value: Any) -> Any:
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value).replace("inf", "Infinity").replace("nan", "NaN")
    if isinstance(value, dict):
        return {escape_text(str(k)): _writable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_writable(v) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    return escape_text(str(value))


def _has_surrogates(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return True
    except (TypeError, ValueError, RecursionError):
        return True  # let the recursive walk deal with it
    return False


# -- shrinking -------------------------------------------------------------------------------

_CUT_MARK = "[… {} bytes cut by the supervisor …]"
_MORE_KEY = "…"
_MIN_STRING = 48
"""Strings are never cut below this many bytes (the marker alone is about 40)."""


def json_size(value: Any) -> int:
    """Bytes of `value` as compact UTF-8 JSON (surrogates counted as escapes)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
               .encode("utf-8", "surrogatepass"))


def cut_string(text: str, budget: int) -> str:
    """`text` if its JSON fits `budget` bytes, else its head and tail around a marker saying how
    many bytes were cut (never shorter than `_MIN_STRING` bytes)."""
    size = json_size(text)
    if size <= budget:
        return text
    data = text.encode("utf-8", "surrogatepass")
    keep = max(budget, _MIN_STRING) - len(_CUT_MARK) - 12
    # JSON escapes can make a character cost up to 6 bytes: keep in proportion
    keep = max(8, int(keep * len(data) / max(size, 1)))
    head, tail = keep * 3 // 4, keep // 4
    first = data[:head].decode("utf-8", "ignore")
    last = data[len(data) - tail:].decode("utf-8", "ignore") if tail else ""
    return f"{first}{_CUT_MARK.format(len(data) - head - tail)}{last}"


def shrink(value: Any, budget: int, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A copy of `value` whose compact JSON takes about `budget` bytes at most.

    Small parts are kept whole and the room they leave goes to the large ones (so a huge file
    content is cut, not the short fields beside it); a container with too many items keeps its
    first ones and says how many it dropped; a subtree nested deeper than `max_depth` becomes its
    JSON text (cut); very long keys are cut like strings. The result is an estimate: callers
    encode it and check."""
    return _shrink(value, budget, 1, max_depth)


_KEY_LIMIT = 1024
_ITEM_MIN = 24
"""Bytes an item of a cut container gets at least: more items than fit are dropped."""


def _shrink(value: Any, budget: int, depth: int, max_depth: int) -> Any:
    if isinstance(value, str):
        return cut_string(value, budget)
    if not isinstance(value, dict | list | tuple):
        return value
    if depth > max_depth:
        return cut_string(_deep_text(value), budget)
    fits_depth = depth - 1 + depth_of(value, max_depth - depth + 1) <= max_depth
    if fits_depth and json_size(value) <= budget:
        return value
    is_dict = isinstance(value, dict)
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    room = max(budget - 2, 0)
    most = max(1, room // _ITEM_MIN)
    dropped = max(0, len(items) - most)
    if dropped:
        items = items[:most]
        room = max(room - 48, 0)
    keys = [cut_string(k, _KEY_LIMIT) if is_dict and isinstance(k, str) else k
            for k, _ in items]
    overheads = [json_size(k) + 2 if is_dict else 1 for k in keys]
    sizes = [_size(v, max_depth - depth) + o for (_, v), o in zip(items, overheads,
                                                                     strict=True)]
    shares = _fair_shares(sizes, room)
    kept = [
        v if size <= share and depth + depth_of(v, max_depth - depth) <= max_depth
        else _shrink(v, max(share - overhead, 0), depth + 1, max_depth)
        for (_, v), size, share, overhead in zip(items, sizes, shares, overheads, strict=True)
    ]
    if is_dict:
        out: dict[Any, Any] = dict(zip(keys, kept, strict=True))
        if dropped:
            out[_MORE_KEY] = f"{dropped} more item(s) cut by the supervisor"
        return out
    if dropped:
        kept.append(f"[… {dropped} more item(s) cut by the supervisor …]")
    return kept


def _size(value: Any, depth_left: int) -> int:
    """`json_size`, or for a value too deep to encode safely, a size that forces a cut."""
    if depth_of(value, max(depth_left, 0) + 400) > depth_left + 400:
        return 1 << 40
    return json_size(value)


def _deep_text(value: Any) -> str:
    """The JSON text of a subtree nested too deeply to keep as a structure."""
    if depth_of(value, 400) > 400:
        return "[nested too deeply to record]"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _fair_shares(sizes: list[int], room: int) -> list[int]:
    """Split `room` bytes among items of `sizes`: items smaller than an equal share keep their
    size, and what they leave is shared among the others (water-filling)."""
    shares = [0] * len(sizes)
    order = sorted(range(len(sizes)), key=lambda i: sizes[i])
    left, count = room, len(sizes)
    for position, index in enumerate(order):
        share = left // max(count - position, 1)
        shares[index] = min(sizes[index], share)
        left -= shares[index]
    return shares
