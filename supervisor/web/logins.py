"""Who is signed in to the web view: one-time login codes and the sessions they open.

A browser never holds the web token (docs/web.md, "Signing in"). `supervisor web` prints a
login URL with a one-time code (`supervisor web --login` prints another for a running server);
opening it exchanges the code, once, for a session: a random value in an `HttpOnly`,
`SameSite=Strict` cookie, valid `SESSION_DAYS`. The code is then useless, so the URL that stays
in the browser's history (the redirect chain included) opens nothing, and a cookie sent to
another port of the same host (cookies are per host, not per port) is a session that expires,
can be ended for every browser at once (`--new-token`), and is refused to any other local user
by the server's peer check anyway.

Kept in `$SUPERVISOR_CONFIG/web-logins.json` (0600, written whole and renamed, under a lock) so
that a restart keeps phones signed in and `--login` can mint a code for a server already
running. Only SHA-256 digests of codes and sessions are stored: the file gives no way in.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from supervisor.store.paths import ensure_private_dir, write_private
from supervisor.userconfig import config_dir

FILE = "web-logins.json"
SESSION_DAYS = 30
CODE_MINUTES = 15
MAX_SESSIONS = 100
"""Sessions kept at most (the oldest go first): signing in in a loop cannot grow the file."""


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()


class Logins:
    """The codes and sessions of `$SUPERVISOR_CONFIG/web-logins.json`."""

    def __init__(self, path: Path | None = None, clock: Callable[[], float] = time.time
                 ) -> None:
        self.path = path if path is not None else config_dir() / FILE
        self.clock = clock
        self._seen: tuple[int, int, int] | None = None
        self._sessions: dict[str, float] = {}

    # -- the file ----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """The file's content, to change in place; written back when the block ends."""
        ensure_private_dir(self.path.parent)
        fd = os.open(self.path.with_name(f".{FILE}.lock"),
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = self._read()
            yield data
            now = self.clock()
            for key in ("codes", "sessions"):
                live = {k: v for k, v in data[key].items() if v > now}
                if key == "sessions" and len(live) > MAX_SESSIONS:
                    live = dict(sorted(live.items(), key=lambda kv: kv[1])[-MAX_SESSIONS:])
                data[key] = live
            write_private(self.path, json.dumps(data).encode())
        finally:
            os.close(fd)

    def _read(self) -> dict[str, Any]:
        data: dict[str, Any] = {"base": None, "codes": {}, "sessions": {}}
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return data
        with os.fdopen(fd, "rb") as f:
            if os.fstat(f.fileno()).st_uid != os.geteuid():
                return data  # not ours: trust nothing in it (it is replaced on the next write)
            try:
                raw = json.loads(f.read(4 * 1024 * 1024))
            except ValueError:
                return data
        if isinstance(raw, dict):
            data["base"] = raw.get("base") if isinstance(raw.get("base"), str) else None
            for key in ("codes", "sessions"):
                entries = raw.get(key)
                if isinstance(entries, dict):
                    data[key] = {k: float(v) for k, v in entries.items()
                                 if isinstance(k, str) and isinstance(v, (int, float))}
        return data

    # -- codes -------------------------------------------------------------------------------

    def mint_code(self, base: str | None = None) -> str:
        """A new one-time code, valid `CODE_MINUTES`; `base` (the server's own URL) is kept
        for `supervisor web --login`."""
        code = secrets.token_urlsafe(18)
        with self._locked() as data:
            data["codes"][_digest(code)] = self.clock() + CODE_MINUTES * 60
            if base is not None:
                data["base"] = base
        return code

    def base(self) -> str | None:
        """The URL the last server started said it serves at."""
        return self._read()["base"]

    def redeem(self, code: str) -> str | None:
        """Exchange a live code for a new session value (the code is spent); None when the
        code is unknown, spent or expired."""
        digest = _digest(code)
        with self._locked() as data:
            expires = data["codes"].pop(digest, None)
            now = self.clock()
            if expires is None or expires <= now:
                return None
            session = secrets.token_urlsafe(32)
            data["sessions"][_digest(session)] = now + SESSION_DAYS * 86400
        return session

    # -- sessions ----------------------------------------------------------------------------

    def valid(self, session: str | None) -> bool:
        """Whether `session` is a live session (constant-time per stored digest)."""
        if not session:
            return False
        self._refresh()
        digest, now = _digest(session), self.clock()
        found = False
        for stored, expires in self._sessions.items():
            if hmac.compare_digest(stored, digest) and expires > now:
                found = True
        return found

    def end_all(self) -> None:
        """Every browser must sign in again (with `--new-token`)."""
        with self._locked() as data:
            data["codes"].clear()
            data["sessions"].clear()

    def _refresh(self) -> None:
        """Read the file again when it changed (another process minted or redeemed)."""
        try:
            st = os.stat(self.path)
            seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            seen = (0, 0, 0)
        if seen != self._seen:
            self._sessions = self._read()["sessions"]
            self._seen = seen
