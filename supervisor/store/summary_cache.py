"""A session's summary kept beside its events, so `supervisor sessions` reads only what is new.

Folding every event of every session again made `supervisor sessions` over 10,000 sessions
read 628,000 events (11.8 s). The fold is kept in `sessions/<id>/summary.json` with what it
covers: the events file's inode, size and modification time, the byte offset folded up to, and
a hash of the 4 KiB before that offset. A file whose inode, size and time are as they were is
not read at all. Otherwise the summary counts only if the file is the same one, not shorter,
with the same bytes where the fold ended; then only the lines after the offset are folded in,
and the summary is written again. Anything else (the file replaced,
truncated, rewritten; a summary of another version, unreadable, or not sealed) and the session
is folded from its first line again. So the summary never says what the events do not: it is
the events' own fold, and it is checked against them each time.

It keeps, with the fold, the `seq` of the last line whose seal held (`store.voice`): the fold of
the new lines goes on from it, so a copy of an earlier sealed line appended later is the
agent's there too, as it is to a reader from the first line.

`kept` is the same summary for the dashboard's first screen: only when one is kept and at
most `KEPT_FOLD_BYTES` behind its file, never a fold from the first line (the dashboard reads
every session whole right after, and would read it twice).

It is sealed like an operator's decision (`store.provenance`: HMAC-SHA256 under the root's
`operator.key`), because the agent runs as the operator's user and can write into its session
directory: a summary written by hand, without the key, is ignored and rebuilt. Recordings and
roots the summary cannot be written to are folded as before (`Store.summary`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

from supervisor.protocol import policy_audit
from supervisor.store import summary as summary_module
from supervisor.store import voice
from supervisor.store.paths import session_files
from supervisor.store.provenance import operator_key
from supervisor.store.summary import Answer, SessionSummary
from supervisor.store.tailer import Tailer

SUMMARY_FILE = "summary.json"
def _fold_version() -> str:
    """What a kept summary must have been folded by: the source of the fold
    (`store/summary.py`, the policy audit it calls, and `store/voice.py`, which decides which
    lines it is given as what they claim to be), so a summary kept by another version
    is rebuilt, with nothing to bump by hand (no readable source: a version of its own)."""
    digest = hashlib.sha256()
    for module in (summary_module, policy_audit, voice):
        try:
            digest.update(Path(str(module.__file__)).read_bytes())
        except (OSError, TypeError):
            digest.update(secrets.token_bytes(16))
    return digest.hexdigest()[:16]


VERSION = _fold_version()
"""The fold's version (see `_fold_version`); part of every seal."""
CHECK_BYTES = 4096
"""Bytes before the folded offset whose hash must match: a file rewritten under the same
name and at least as long is told from one that only grew."""
KEPT_FOLD_BYTES = 64 * 1024
"""What `kept` may fold to bring a summary up to date (a session that grew by more since its
summary was kept, or has none, is left to the reader that reads it whole anyway)."""


def summary(root: Path, session_id: str, key: bytes | None = None) -> SessionSummary:
    """The session's summary: the kept one brought up to date, or a new fold (then kept).
    `key`: the root's `operator_key`, when the caller has it already."""
    found = _summary(root, session_id, key, None)
    assert found is not None  # no limit: always folded
    return found


def kept(root: Path, session_id: str, key: bytes | None = None, *,
         fold_limit: int | None = None) -> SessionSummary | None:
    """The session's summary when it costs at most `fold_limit` bytes of its events to have
    (default `KEPT_FOLD_BYTES`): the kept one, brought up to date when the file grew by no more
    than that since (then kept again); None when none is kept or it is further behind: never a
    fold from the first line. What the dashboard shows first, before it reads every session's
    events itself (a fold here would be a second read of them)."""
    return _summary(root, session_id, key,
                    KEPT_FOLD_BYTES if fold_limit is None else fold_limit)


def _summary(root: Path, session_id: str, key: bytes | None,
             fold_limit: int | None) -> SessionSummary | None:
    files = session_files(root, session_id)
    events, path = files.events, files.dir / SUMMARY_FILE
    key = operator_key(root) if key is None else key
    kept = _load(path, key, session_id)
    try:
        info = os.stat(events)
    except FileNotFoundError:
        return _vanished(session_id, kept)
    folded, offset, last_sealed = SessionSummary(session_id), 0, 0
    if kept is not None and kept["ino"] == info.st_ino:
        same = kept["offset"] == kept["size"] == info.st_size \
            and kept["mtime_ns"] == info.st_mtime_ns
        if same or (kept["offset"] <= info.st_size
                    and kept["check"] == _check(events, kept["offset"])):
            state = _restore(session_id, kept["state"])
            if state is not None:
                if same:
                    return state  # the file as it was folded: not a byte of it read
                folded, offset, last_sealed = state, kept["offset"], kept["sealed_seq"]
    if fold_limit is not None and (offset == 0 or info.st_size - offset > fold_limit):
        return None  # none kept (or not for this file), or too far behind: not read here
    vouch = voice.Voucher(key, session_id, events if offset else None, last_sealed)
    folded, offset, ino = _fold(events, folded, offset, vouch)
    try:
        after = os.stat(events)
    except OSError:
        return folded
    if ino is not None and ino == after.st_ino:
        _save(path, key, session_id, {"ino": ino, "offset": offset, "size": after.st_size,
                                     "mtime_ns": after.st_mtime_ns,
                                     "check": _check(events, offset),
                                     "sealed_seq": vouch.last, "state": _state(folded)})
    return folded


def _vanished(session_id: str, kept: dict[str, Any] | None) -> SessionSummary:
    """No `events.jsonl`: a session that never wrote one is `empty`; one whose summary was
    kept had events, so they were removed: shown as they were, `vanished` (the dashboard says
    the same of a file it saw go, `SessionSummary.vanished`)."""
    state = _restore(session_id, kept["state"]) if kept is not None else None
    if state is None:
        return SessionSummary(session_id)
    state.vanished = True
    return state


def _fold(events: Path, folded: SessionSummary, offset: int, vouch: voice.Voucher
          ) -> tuple[SessionSummary, int, int | None]:
    """Fold the lines after `offset` in (from the start, should the file turn out shorter);
    a speaking line without its seal is folded as the agent's (`store.voice`)."""
    tailer = Tailer(events, "events", start=offset, vouch=vouch)
    while True:
        batch = tailer.poll()
        if batch.reset:  # shorter than what was folded: start over from its first line
            folded = SessionSummary(folded.session_id)
        if not batch.events and not batch.bad_lines and not batch.reset:
            break
        for event in batch.events:
            folded.apply(event)
        folded.bad_lines += len(batch.bad_lines)
    return folded, tailer.offset, tailer.inode


def _check(events: Path, offset: int) -> str:
    """The hash of the `CHECK_BYTES` of `events` before `offset`."""
    start = max(0, offset - CHECK_BYTES)
    try:
        with open(events, "rb") as handle:
            handle.seek(start)
            data = handle.read(offset - start)
    except OSError:
        return ""
    return hashlib.sha256(data).hexdigest() if len(data) == offset - start else ""


def _state(folded: SessionSummary) -> dict[str, Any]:
    """The summary as JSON: sets as sorted lists, answers as lists."""
    out: dict[str, Any] = {}
    for item in dataclasses.fields(folded):
        value = getattr(folded, item.name)
        if isinstance(value, set):
            value = sorted(value)
        elif item.name == "answers":
            value = {k: list(v) for k, v in value.items()}
        out[item.name] = value
    return out


_FIELDS = frozenset(item.name for item in dataclasses.fields(SessionSummary))


def _restore(session_id: str, state: Any) -> SessionSummary | None:
    """The summary of `_state`, or None when it is not one (a field missing or of the wrong
    kind): the session is then folded again."""
    try:
        if not isinstance(state, dict) or state.keys() != _FIELDS:
            return None
        values = dict(state)
        values["answers"] = {k: Answer(*v) for k, v in values["answers"].items()}
        values["handled"] = set(values["handled"])
        restored = SessionSummary(**values)
    except (TypeError, ValueError, AttributeError):
        return None
    return restored if restored.session_id == session_id else None


def _seal(key: bytes, session_id: str, body: bytes) -> str:
    return hmac.new(key, f"{VERSION}\n{session_id}\n".encode() + body,
                    hashlib.sha256).hexdigest()


def _load(path: Path, key: bytes, session_id: str) -> dict[str, Any] | None:
    """The kept summary if it is sealed for this session and version: the file is the seal,
    a newline, and the JSON body the seal covers, byte for byte."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            given, _, body = handle.read().partition(b"\n")
        if not hmac.compare_digest(given, _seal(key, session_id, body).encode()):
            return None  # not written by the supervisor (or for another session): rebuilt
        saved = json.loads(body)
        if not all(isinstance(saved.get(name), int)
                   for name in ("ino", "offset", "size", "mtime_ns", "sealed_seq")):
            return None
        return saved if isinstance(saved.get("check"), str) else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _save(path: Path, key: bytes, session_id: str, saved: dict[str, Any]) -> None:
    """Write the summary whole (a private temporary file renamed over it); a summary that
    cannot be written is only a slower `sessions` next time."""
    temp = path.with_name(f".{SUMMARY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        body = json.dumps(saved, ensure_ascii=True, separators=(",", ":")).encode()
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(_seal(key, session_id, body).encode() + b"\n" + body)
        os.replace(temp, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            temp.unlink()
