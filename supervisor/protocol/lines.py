"""Encode one event into one protocol line, with the standard library only: the one bounded
encoder every writer uses.

Writers and the Claude Code hook use this instead of pydantic: a hook process starts for every
tool call, and importing pydantic alone costs several times Python's own start-up.

Whatever the event holds, the line written is one a reader accepts: at most `MAX_LINE_BYTES`
(oversized values are cut by `bounded.shrink`, and the event says `"truncated": true`), nested
at most `MAX_JSON_DEPTH` levels (deeper values become text), valid UTF-8 (lone surrogates become
visible escapes, see `bounded.escape_text`).
"""

import json
from collections.abc import Mapping
from typing import Any

from supervisor.protocol.bounded import depth_of, escape_surrogates, shrink, too_deep
from supervisor.protocol.names import MAX_JSON_DEPTH, MAX_LINE_BYTES

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_KEEP_WHOLE = frozenset({"v", "seq", "ts", "type"})
_SLACK = 512
"""Bytes kept free below the limit when cutting (the `truncated` flag, estimation error)."""


def encode_line(event: Mapping[str, Any], *, max_bytes: int = MAX_LINE_BYTES) -> bytes:
    """Return `event` as one UTF-8 JSON line terminated by a newline, within the protocol's
    limits (see `fit_line`). Raises `ValueError` for values JSON cannot carry (NaN,
    infinities) and `TypeError` for values that are not JSON types at all."""
    return fit_line(event, max_bytes=max_bytes)[0]


def fit_line(
    event: Mapping[str, Any], *, max_bytes: int = MAX_LINE_BYTES
) -> tuple[bytes, dict[str, Any]]:
    """The line for `event` and the event as that line holds it (the same mapping when nothing
    had to change; else a copy with escaped text, cut values and `"truncated": true`)."""
    try:
        data = _encoder.encode(event).encode("utf-8")
        if len(data) < max_bytes and not too_deep(data, MAX_JSON_DEPTH):
            return data + b"\n", event if isinstance(event, dict) else dict(event)
    except (UnicodeEncodeError, RecursionError):
        pass  # lone surrogates, or nested far too deeply for the encoder: below
    if depth_of(event, MAX_JSON_DEPTH) <= MAX_JSON_DEPTH:
        fitted = escape_surrogates(dict(event))
        data = _encoder.encode(fitted).encode("utf-8")
        if len(data) < max_bytes:
            return data + b"\n", fitted
    budget = max_bytes - _SLACK
    for _ in range(6):
        fitted = _cut(event, budget)
        data = _encoder.encode(fitted).encode("utf-8")
        if len(data) < max_bytes and not too_deep(data, MAX_JSON_DEPTH):
            return data + b"\n", fitted
        budget //= 2
    raise ValueError(f"event cannot be cut to {max_bytes} bytes")


def _cut(event: Mapping[str, Any], budget: int) -> dict[str, Any]:
    """Shrink every field but the common ones so the whole fits `budget` bytes (shrinking
    first bounds the depth, so escaping the text after it cannot recurse too deeply)."""
    head = {k: event[k] for k in event if k in _KEEP_WHOLE}
    body = {k: v for k, v in event.items() if k not in _KEEP_WHOLE}
    room = budget - len(_encoder.encode(escape_surrogates(head))) - 32
    cut = shrink(body, max(room, 64), max_depth=MAX_JSON_DEPTH)
    if not isinstance(cut, dict):  # only when a key itself was enormous
        cut = {}
    return escape_surrogates({**head, **cut, "truncated": True})


def as_dict(event: Any) -> dict[str, Any]:
    """Return a plain dict for a mapping or a pydantic model, without importing pydantic."""
    if isinstance(event, Mapping):
        return dict(event)
    dump = getattr(event, "model_dump", None)
    if dump is None:
        raise TypeError(f"not an event: {type(event).__name__}")
    return dump(mode="json")
