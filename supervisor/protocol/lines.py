"""Encode one event into one protocol line, with the standard library only.

Writers and the Claude Code hook use this instead of pydantic: a hook process starts for every
tool call, and importing pydantic alone costs several times Python's own start-up.
"""

import json
from collections.abc import Mapping
from typing import Any

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def encode_line(event: Mapping[str, Any]) -> bytes:
    """Return `event` as one UTF-8 JSON line terminated by a newline.

    Raises `ValueError` for values JSON cannot carry (NaN, infinities, non-string keys).
    Lone surrogates in strings are replaced so the line is always valid UTF-8.
    """
    text = _encoder.encode(event)
    return text.encode("utf-8", "replace") + b"\n"


def as_dict(event: Any) -> dict[str, Any]:
    """Return a plain dict for a mapping or a pydantic model, without importing pydantic."""
    if isinstance(event, Mapping):
        return dict(event)
    dump = getattr(event, "model_dump", None)
    if dump is None:
        raise TypeError(f"not an event: {type(event).__name__}")
    return dump(mode="json")
