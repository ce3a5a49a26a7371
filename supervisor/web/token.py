"""The web view's token: random, kept in `$SUPERVISOR_CONFIG/web-token` (0600), the credential
of scripts (`Authorization: Bearer`); browsers sign in with one-time codes instead
(`supervisor.web.logins`). `--new-token` replaces it.

A token file another user could read (a mode other than 0600, another owner, a symlink) is not
used: whoever read it could use it, so a new token replaces it and the operator is told why.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from supervisor.store.paths import ensure_private_dir, write_private
from supervisor.userconfig import config_dir

TOKEN_FILE = "web-token"


def token_path() -> Path:
    return config_dir() / TOKEN_FILE


def load_or_create(*, new: bool = False, say: Callable[[str], None] = lambda _: None) -> str:
    """The token, created (0600, in a 0700 folder) when missing, unsafe, or when `new`;
    `say` hears why an existing one was replaced."""
    path = token_path()
    if not new:
        token, problem = _read(path)
        if token is not None:
            return token
        if problem:
            say(f"{path} {problem}: a new token replaces it (open the new URL; scripts need "
                "the new token)")
    ensure_private_dir(path.parent)
    token = secrets.token_urlsafe(32)
    write_private(path, (token + "\n").encode("ascii"))
    return token


def _read(path: Path) -> tuple[str | None, str | None]:
    """(the token, None) when the file is private and well formed, else (None, why not)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot be read safely ({exc.strerror or exc})"
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            return None, "is not a regular file"
        if st.st_uid != os.geteuid():
            return None, f"belongs to uid {st.st_uid}, not to you"
        if st.st_mode & 0o077:
            return None, (f"was readable by others (mode {stat.S_IMODE(st.st_mode):04o}), "
                          "so its token may be known")
        raw = f.read(4096)
    try:
        token = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        return None, "is not a token"
    return (token, None) if len(token) >= 32 else (None, "is not a token")


def matches(given: str | None, token: str) -> bool:
    """Constant-time comparison (a wrong token learns nothing from the timing)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
