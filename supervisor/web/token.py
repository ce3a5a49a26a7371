"""The web view's access token: random, kept in `$SUPERVISOR_CONFIG/web-token` (0600) so the
links in notifications keep working across restarts; `--new-token` replaces it."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from supervisor.userconfig import config_dir

TOKEN_FILE = "web-token"


def token_path() -> Path:
    return config_dir() / TOKEN_FILE


def load_or_create(*, new: bool = False) -> str:
    """The token, created (0600, in a 0700 folder) when missing or when `new`."""
    path = token_path()
    if not new:
        try:
            token = path.read_text(encoding="ascii").strip()
        except (FileNotFoundError, UnicodeDecodeError):
            token = ""
        if len(token) >= 32:
            return token
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    temp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}")
    fd = os.open(temp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(token + "\n")
    os.replace(temp, path)
    return token


def matches(given: str | None, token: str) -> bool:
    """Constant-time comparison (a wrong token learns nothing from the timing)."""
    return given is not None and hmac.compare_digest(given.encode(), token.encode())
