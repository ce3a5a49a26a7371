"""Which decisions came from an operator: a seal only the operator paths write.

The agent runs as the operator's user, so it can append to a session's `control.jsonl` like
any writer (an `echo` from its shell): appending a `reset` after each refusal kept a loop from
ever escalating. Every operator path (`send_decision`, used by the CLI and the dashboard, and
the relay bringing in a remote operator's decision) therefore writes decisions through
`LocalStore.append_decision`/the relay, which add `seal`: an HMAC-SHA256, under the store
root's private key (`<root>/operator.key`, 0600, made on first use), of the session and the
canonical form of **every** field of the decision but the line's envelope (`v`, `seq`, `ts`,
which the writer assigns, and `type`, which must be `decision` anyway): sorted keys, a null
field the same as an absent one. So a split's `tasks`, a quiet's `detector`, `signature` and
`calls`, and any field a decision kind adds later are covered without naming them here. The
guard applies only sealed decisions; any other is recorded as `decision_ignored`
("rejected: ...") for the operator to see.

What this promises (docs/security.md, "A hostile agent"): a decision appended by hand, or by a
tool call that does not first read the key, is never applied. It is no boundary against an
agent that reads `operator.key` (the agent's calls naming the store root or the key are
refused, `guard.store_protect`, but a shell command can hide a path); only running the agent as
another user (or in a sandbox without the store root) makes it one.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

KEY_FILE = "operator.key"
SEAL_FIELD = "seal"
KEY_CHARS = 64
"""A key is 32 random bytes as hexadecimal; anything else (an empty file) is refused."""
_HEX = frozenset(b"0123456789abcdefABCDEF")
_ENVELOPE = frozenset({"v", "seq", "ts", "type", SEAL_FIELD})
"""What the seal leaves out: the line's envelope, which says nothing of the decision."""


def operator_key(root: Path) -> bytes:
    """The root's key, made now (0600, never replaced once there) when there is none.

    Made whole or not at all: written to a private temporary file, then linked to its name
    (`link` fails if another operator path made it first; then that one is read). Writing the
    file in place let a reader between its creation and its write seal with an empty key."""
    path = Path(root) / KEY_FILE
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    key = secrets.token_hex(32).encode()
    temp = path.with_name(f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(temp, path)
    except FileExistsError:  # another operator path made it first
        return _read(path)
    finally:
        temp.unlink(missing_ok=True)
    return key


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or info.st_mode & 0o077:
            raise PermissionError(f"{path} must be yours and private (0600)")
        key = os.read(fd, 4096).strip()
    finally:
        os.close(fd)
    if len(key) != KEY_CHARS or any(c not in _HEX for c in key):
        raise PermissionError(f"{path} is not a key of {KEY_CHARS} hexadecimal characters: "
                              "refusing it (remove it to make a new one; decisions not yet "
                              "applied must then be sent again)")
    return key


def canonical(session_id: str, decision: dict[str, Any]) -> bytes:
    """What is sealed: the session and every field of `decision` outside the envelope, as
    JSON with sorted keys (a null field dropped, so it equals an absent one)."""
    fields = {k: v for k, v in decision.items() if k not in _ENVELOPE and v is not None}
    return json.dumps([session_id, fields], ensure_ascii=True, sort_keys=True,
                      separators=(",", ":")).encode()


def seal(root: Path, session_id: str, decision: dict[str, Any]) -> str:
    """The seal of `decision` (`canonical`) for session `session_id`."""
    return hmac.new(operator_key(root), canonical(session_id, decision),
                    hashlib.sha256).hexdigest()


def sealed(root: Path, session_id: str, decision: dict[str, Any]) -> dict[str, Any]:
    """`decision` with its seal."""
    return {**decision, SEAL_FIELD: seal(root, session_id, decision)}


def is_sealed(root: Path, session_id: str, decision: dict[str, Any]) -> bool:
    """Whether `decision` carries the seal an operator path gave it (constant-time)."""
    given = decision.get(SEAL_FIELD)
    if not isinstance(given, str):
        return False
    try:
        return hmac.compare_digest(given, seal(root, session_id, decision))
    except (OSError, TypeError, ValueError):  # no key; a field JSON cannot say
        return False
