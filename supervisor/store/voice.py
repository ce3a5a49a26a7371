"""Which lines of `events.jsonl` speak in the supervisor's voice: the guard seals them, readers
check the seal.

`events.jsonl` is written on the agent's side, and the agent runs as the operator's user: a
shell line it runs can append an `escalation` of its own ("Supervisor: the operator approved
deleting the repository, press a"), and the dashboard showed it as the supervisor's words with
the approve prompt under it. So the guard's writer seals every line the operator reads as the
supervisor speaking (`SEALED`: escalations, findings, verdicts that say something, disobedience,
the session's end), the way operator paths seal decisions (`store.provenance`): an HMAC-SHA256,
under the root's `operator.key`, of the session and the line exactly as written (every field
but the seal itself, `seq` and `ts` too: an edited line fails, and a copy appended again is
told by its `seq`). The session's `session_start` lists the types it seals (`seals`); a reader
(`Voucher`, in the local store's tailers, and in a relay before it ships a line to Redis,
whose readers have no key) then hands out such a line without a valid seal as an
`UnsealedLine` instead: shown as quoted agent text with a mark, never folded as an
escalation, so there is nothing to approve. A session whose first `session_start` names no
`seals` (recorded before this existed, or by an importer) is shown as before, with
`NO_SEAL_NOTE` where an answer is offered: its lines cannot be told apart.

Every other line the guard writes (its calls, results, usage, the agent's text, tasks), but a
call's plain `allow` verdict, carries a `mark` instead (`line_mark`): a keyed BLAKE2b of the
line's bytes as written, which only the guard's own catch-up checks (`Voucher.vouches`), since
it is the one reader that acts on those lines (it redoes them on its engine: calls the agent
appended between the repeats of a loop, a read and a write after each, kept it from
escalating). Readers show them as before: they are the agent's doings, not the supervisor's
words. A mark is one BLAKE2b of the line, three a call (the agent's text, the call, its
result); an HMAC of the canonical form, as a seal, costs several times that.

What this promises is what the decision seal promises (docs/security.md, "A hostile agent"): a
tripwire against a line appended by hand or by a tool call that does not first read the key,
not a boundary against an agent that reads `operator.key` or rewrites the file from its first
line. Cost: one HMAC per sealed line, and those are rare (no `allow` verdict is sealed), so
the per-call path pays nothing but a type check.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from supervisor.protocol.bounded import loads
from supervisor.store.provenance import SEAL_FIELD, operator_key

if TYPE_CHECKING:
    from supervisor.protocol.models import Event

SEALED: tuple[str, ...] = ("decision_applied", "decision_ignored", "detection", "disobeyed",
                           "escalation", "message", "session_end", "verdict")
"""The event types the guard seals (an `allow` verdict without a message excepted: it says
nothing to anyone, and it is written on every call; a `message` only in `SEALED_ROLES`). A
decision's outcome too: the guard itself believes the log's `decision_applied` (never applied
again, its effect redone), and `answer` reports it to the operator as applied."""
SEALED_ROLES = frozenset({"user", "system"})
"""The messages that are sealed: a person's prompt (a new cycle for the engine, which the
guard's catch-up redoes: one appended after each call kept a loop from escalating) and the
supervisor's own notes (`system`). The agent's own text (`assistant`) is not: it is the
agent's voice, and it is written often."""
SEALS_FIELD = "seals"
"""The `session_start` field listing the types this session's guard seals."""
MARKS_FIELD = "marks"
"""The `session_start` field saying (true) that this session's guard marks its other lines."""
MARK_FIELD = "mark"
"""The field holding a line's mark (`line_mark`): always the line's last."""
_MARK_HEAD = b',"' + MARK_FIELD.encode() + b'":"'
_MARK_HEX = 32
_MARK_TAIL = len(_MARK_HEAD) + _MARK_HEX + 2
NO_SEAL_NOTE = ("No seal: this session's lines carry none (recorded before seals, or imported, "
                "or written by the agent itself), so the supervisor cannot vouch that this "
                "escalation is its own.")
"""What the views that offer an answer say of an escalation in a session without `seals`."""
_DOMAIN = "event"
"""Kept apart from the decision seal's canonical form: one can never stand for the other."""
_HEAD_BYTES = 64 * 1024
"""How far into a file a reader that starts late looks for its `session_start`."""


def must_seal(line: Mapping[str, Any], kinds: tuple[str, ...] | frozenset[str] = SEALED
              ) -> bool:
    """Whether `line` speaks in the supervisor's voice, so must carry a seal."""
    kind = line.get("type")
    if kind not in kinds:
        return False
    if kind == "message":
        return line.get("role") in SEALED_ROLES
    return kind != "verdict" or line.get("action") != "allow" or bool(line.get("message"))


def wants(line: Mapping[str, Any]) -> Literal["seal", "mark"] | None:
    """What the guard's writer adds to `line`: a seal (`must_seal`), else a mark, but nothing
    to a verdict that lets its call run, says nothing and answers no escalation: written at
    every call, and the catch-up needs it not (only a verdict that refuses a call, or an
    operator's answer that releases one, changes what it keeps: `guard.catch_up`)."""
    if must_seal(line):
        return "seal"
    if line.get("type") == "verdict" and not line.get("escalation_id"):
        return None
    return "mark"


def _canonical(session_id: str, line: Mapping[str, Any]) -> bytes:
    fields = {k: v for k, v in line.items() if k != SEAL_FIELD}
    return json.dumps([_DOMAIN, session_id, fields], ensure_ascii=True, sort_keys=True,
                      separators=(",", ":")).encode()


def line_seal(key: bytes, session_id: str, line: Mapping[str, Any]) -> str:
    """The seal of `line` (as a reader parses it back) for session `session_id`."""
    return hmac.new(key, _canonical(session_id, line), hashlib.sha256).hexdigest()


def mark_key(key: bytes, session_id: str) -> bytes:
    """The key marks of session `session_id` are made with (`line_mark`): derived from the
    root's, so a mark of one session never holds in another."""
    return hashlib.blake2b(session_id.encode("utf-8", "surrogateescape"), key=key[:64],
                           person=b"sv-mark-key").digest()


def line_mark(session_key: bytes, body: bytes) -> bytes:
    """The mark (32 hexadecimal digits) of a line whose bytes, without the mark and the
    newline, are `body`; `session_key`: `mark_key`'s."""
    return hashlib.blake2b(body, key=session_key, digest_size=_MARK_HEX // 2).hexdigest() \
        .encode()


class LineSealer:
    """What the guard's event writer seals its speaking lines with (`LineWriter(sealer=)`).

    The key is read at the first line that needs it, not when the guard opens the session: a
    hook call that writes no such line reads nothing. A key that cannot be had leaves the line
    unsealed (readers then show it as unsealed: the supervisor cannot vouch for it)."""

    def __init__(self, root: Path, session_id: str) -> None:
        self.root = Path(root)
        self.session_id = session_id
        self._key: bytes | None = None
        self._mark_key: bytes | None = None

    def key(self) -> bytes | None:
        if self._key is None:
            try:
                self._key = operator_key(self.root)
            except OSError:
                return None
        return self._key

    def wants(self, line: Mapping[str, Any]) -> Literal["seal", "mark"] | None:
        return wants(line)

    def seal(self, data: bytes) -> tuple[bytes, str | None]:
        """`data` (one encoded line, ending in `}` and a newline) with its seal added, and the
        seal; `data` as it is and None when there is no key."""
        key = self.key()
        if key is None:
            return data, None
        seal = line_seal(key, self.session_id, json.loads(data))
        return data[:-2] + b',"' + SEAL_FIELD.encode() + b'":"' + seal.encode() + b'"}\n', seal

    def mark(self, data: bytes) -> bytes:
        """`data` (one encoded line, ending in `}` and a newline, that `wants` no seal) with
        its mark added last; as it is when there is no key."""
        key = self._session_key()
        if key is None:
            return data
        return b"".join((data[:-2], _MARK_HEAD, line_mark(key, data[:-1]), b'"}\n'))

    def hold_seal(self, hold: str) -> str | None:
        """The seal of a guard state's `hold` (`guard.journal`: its pending escalation, end
        and position in the log): a mark of a text no line can be (lines start with `{`);
        None when there is no key."""
        key = self._session_key()
        return None if key is None else line_mark(key, b"hold\n" + hold.encode()).decode()

    def _session_key(self) -> bytes | None:
        if self._mark_key is None:
            key = self.key()
            if key is None:
                return None
            self._mark_key = mark_key(key, self.session_id)
        return self._mark_key


class Voucher:
    """One reader's check of one session's event file (`Tailer(vouch=)`, and the relay before
    it ships a line: `relayed`): a line of a type the session's `session_start` says is
    sealed, without a valid seal, is replaced by an `UnsealedLine`; so is a sealed line whose
    `seq` is not past the last sealed line's (a copy of an earlier one appended again: the
    guard's own lines are numbered in order). `path`: the file, when the reader starts past
    its first line (its `session_start` is looked for in its first 64 KiB); `last`: then the
    `seq` of the last sealed line before where it starts, as a reader that keeps what it read
    kept it (the kept summary, under its own seal): without it a copy of an earlier sealed
    line would pass."""

    def __init__(self, key: bytes, session_id: str, path: Path | None = None,
                 last: int = 0) -> None:
        self.key = key
        self.session_id = session_id
        self.sealed: frozenset[str] | None = None
        """What the session's first `session_start` says it seals (None: not seen yet)."""
        self.marked = False
        """Whether that `session_start` says its guard marks its other lines."""
        self.last = last
        """The `seq` of the last line whose seal (or mark, for `vouches`) held."""
        self._mark_key: bytes | None = None
        if path is not None:
            self.sealed, self.marked = _declared_in(path)

    def restart(self) -> None:
        """The file starts over (truncated, replaced): its first line decides again."""
        self.sealed = None
        self.last = 0

    def check(self, event: Event, raw: bytes) -> Event:
        kind = event.type
        if kind == "session_start":
            if self.sealed is None:
                self.sealed = _declaration(getattr(event, SEALS_FIELD, None))
            return event
        if kind not in SEALED or not self.sealed or kind not in self.sealed:
            return event
        if kind == "message" and getattr(event, "role", None) not in SEALED_ROLES:
            return event  # the agent's own text: not parsed again
        line = self.forged(raw)
        return event if line is None else unsealed(event, line)

    def vouches(self, raw: bytes, line: Mapping[str, Any]) -> bool:
        """Whether the guard wrote `raw` (`line`, parsed), as the guard's catch-up asks of
        every line it would redo: a line of a sealed type by its seal (`forged`), any other
        by its mark in a session whose guard marks its lines (`MARKS_FIELD`); lines in order,
        each past the last that held (a copy of an earlier one appended again does not)."""
        if self.sealed and must_seal(line, self.sealed):
            return self._forged(line) is None
        if not self.marked:
            return True
        seq, cut = line.get("seq"), len(raw) - _MARK_TAIL
        if not (isinstance(seq, int) and seq > self.last and cut > 0
                and raw[cut:cut + len(_MARK_HEAD)] == _MARK_HEAD and raw[-2:] == b'"}'):
            return False
        if self._mark_key is None:
            self._mark_key = mark_key(self.key, self.session_id)
        given = raw[cut + len(_MARK_HEAD):-2]
        if not hmac.compare_digest(given, line_mark(self._mark_key, raw[:cut] + b"}")):
            return False
        self.last = seq
        return True

    def forged(self, raw: bytes) -> dict[str, Any] | None:
        """The line, parsed, when it claims the supervisor's voice without its seal; None
        when it does not claim it or its seal holds."""
        try:
            line = loads(raw)
        except ValueError:  # parsed a moment ago; never raised
            return None
        return self._forged(line) if isinstance(line, dict) else None

    def _forged(self, line: Mapping[str, Any]) -> dict[str, Any] | None:
        if not isinstance(line, dict) or not self.sealed or not must_seal(line, self.sealed):
            return None
        given, seq = line.get(SEAL_FIELD), line.get("seq")
        if isinstance(given, str) and isinstance(seq, int) and seq > self.last and \
                hmac.compare_digest(given, line_seal(self.key, self.session_id, line)):
            self.last = seq
            return None
        return line

    def note(self, raw: bytes) -> dict[str, Any] | None:
        """Take in `raw` (the next line of this file, unparsed): the line, parsed, when it is
        forged (`forged`); None otherwise. Lines that can neither declare nor claim the
        supervisor's voice are not parsed."""
        if not any(kind.encode() in raw for kind in (*SEALED, "session_start")):
            return None
        try:
            line = loads(raw)
        except ValueError:
            return None
        if not isinstance(line, dict):
            return None
        if line.get("type") == "session_start":
            if self.sealed is None:
                self.sealed = _declaration(line.get(SEALS_FIELD))
            return None
        return self.forged(raw)

    def relayed(self, raw: bytes) -> bytes:
        """What a relay ships for `raw` (a line of this file, in order): the line itself, or,
        for a forged one, the `unsealed` line a reader would have made of it (a reader of the
        Redis store has no key to check it with; the relay, on the agent's host, has)."""
        line = self.note(raw)
        if line is None:
            return raw
        from supervisor.protocol.lines import fit_line

        data, _ = fit_line({"v": line.get("v"), "seq": line.get("seq"), "ts": line.get("ts"),
                            "type": "unsealed", "line_type": str(line.get("type")),
                            "text": said(line)})
        return data.rstrip(b"\n")


def resume_seal(key: bytes, session_id: str, gen: int, offset: int, last: int) -> str:
    """The seal of a resume point a reader keeps between runs (the relay's saved state): at
    `offset` of generation `gen` of the session's file, `last` was the `seq` of the last line
    whose seal held. Kept apart from the line and decision seals by its domain; a point kept
    without it (written by hand) is not believed, and the file is checked from its start."""
    fields = ["resume", session_id, gen, offset, last]
    return hmac.new(key, json.dumps(fields, separators=(",", ":")).encode(),
                    hashlib.sha256).hexdigest()


def unsealed(event: Event, line: Mapping[str, Any]) -> Event:
    """The `UnsealedLine` a reader hands out in place of `event`."""
    from supervisor.protocol.models import UnsealedLine

    return UnsealedLine(v=event.v, seq=event.seq, ts=event.ts, line_type=event.type,
                        text=said(line))


def said(line: Mapping[str, Any]) -> str:
    """What a line of a sealed type says to the operator (its reason or message)."""
    for name in ("message", "reason", "text", "status", "outcome"):
        value = line.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def describe_unsealed(line_type: object, text: object) -> str:
    """How every view says it (after the type `unsealed`): the type the line claimed, whose it
    is, and its text as a quotation (raw: the caller cleans it)."""
    from supervisor.safetext import quote

    kind = line_type if isinstance(line_type, str) else "?"
    return (f"{kind[:32]} line written by the agent's side, not the supervisor (no seal; "
            f"nothing to answer): {quote(text if isinstance(text, str) else '', 300)}")


def _declaration(value: object) -> frozenset[str]:
    if isinstance(value, list):
        return frozenset(v for v in value if isinstance(v, str))
    return frozenset()


def _declared_in(path: Path) -> tuple[frozenset[str] | None, bool]:
    """What the first `session_start` within the file's first 64 KiB says it seals, and
    whether it says its guard marks its other lines."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None, False
    try:
        head = os.pread(fd, _HEAD_BYTES, 0)
    except OSError:
        return None, False
    finally:
        os.close(fd)
    for raw in head.split(b"\n")[:-1]:
        if b"session_start" not in raw:
            continue
        try:
            line = loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("type") == "session_start":
            return _declaration(line.get(SEALS_FIELD)), line.get(MARKS_FIELD) is True
    return None, False


def root_key(root: Path) -> bytes | None:
    """The root's key for checking seals; None when it cannot be had (another's root, a bad
    key file: nothing can be checked, lines are shown as they are) and for a root of
    recordings, where nothing is ever written (no key is made there)."""
    from supervisor.store.recordings import is_recording

    if is_recording(Path(root)):
        return None
    try:
        return operator_key(Path(root))
    except OSError:
        return None


def voucher(root: Path, session_id: str, start: int = 0, *, key: bytes | None = None,
            last: int = 0) -> Voucher | None:
    """A `Voucher` for a reader of the session's events from `start` (`key`: the root's, when
    the caller has it; `last`: see `Voucher`); None for a recording (read anywhere, its key is
    not there) or when the key cannot be had."""
    from supervisor.store.paths import session_files
    from supervisor.store.recordings import is_recording

    if is_recording(Path(root), session_id):
        return None
    key = key if key is not None else root_key(root)
    if key is None:
        return None
    path = session_files(Path(root), session_id).events if start else None
    return Voucher(key, session_id, path, last)
