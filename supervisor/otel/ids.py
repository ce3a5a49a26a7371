"""Deterministic trace and span ids.

A span's id is a hash of what names it (the session, the kind of span, the `seq` of the event
that opened it), never a random number: an exporter restarted mid-session rebuilds the same ids
for the spans still open, so a tool span sent after the restart still points at the session span
sent before it, and a span sent twice (a retry after a lost answer) is the same span to the
backend. The trace is one per session, named by the session id and the time of its first event
(a session directory recreated under the same name is another trace).
"""

from __future__ import annotations

import xxhash


def trace_id(session_id: str, first_ts: float) -> int:
    """The 128-bit trace id of a session (never 0, which OTLP reads as "no trace")."""
    value = xxhash.xxh3_128_intdigest(f"{session_id}\0{first_ts!r}".encode())
    return value or 1


def span_id(trace: int, kind: str, key: str) -> int:
    """The 64-bit id of one span of the trace: `kind` (`session`, `tool`, `escalation`, ...)
    and `key` (the `seq` of the opening event) name it (never 0)."""
    value = xxhash.xxh3_64_intdigest(f"{trace:032x}\0{kind}\0{key}".encode())
    return value or 1
