"""Open a store from a URL: the registry of store backends.

    open_store("redis://relay-a@redis.example:6379/0")   # Redis Streams (supervisor.store.redis)
    open_store("/var/lib/agent-supervisor")               # a local root (also file:///...)
    open_store(None)                                      # $SUPERVISOR_STORE, else the local root

A backend is one module with `open_url(url, options) -> Store` and one line in `BACKENDS`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from supervisor.store.base import Store
from supervisor.store.errors import StoreError

ENV_STORE = "SUPERVISOR_STORE"

BACKENDS: dict[str, str] = {
    # URL scheme: the module whose `open_url(url, options)` opens it
    "file": "supervisor.store.local",
    "redis": "supervisor.store.redis.backend",
    "rediss": "supervisor.store.redis.backend",
}


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """What a command line may add to a store URL."""

    insecure: bool = False
    """Allow an unauthenticated connection to a store that is not on this machine."""
    password_file: str | None = None
    """Read the store's password from this file (never from the command line itself)."""


def store_url(explicit: str | None = None) -> str | None:
    """The store URL: `explicit`, else `$SUPERVISOR_STORE`, else None (the local root)."""
    return explicit or os.environ.get(ENV_STORE) or None


def open_store(url: str | None = None, *, root: str | os.PathLike[str] | None = None,
               options: StoreOptions | None = None) -> Store:
    """The store named by `url` (see `store_url`); without one, the local root (`root`, else
    `$SUPERVISOR_HOME`, else the user state directory)."""
    from supervisor.store.local import LocalStore
    from supervisor.store.paths import resolve_root

    url = store_url(url)
    if url is None:
        return LocalStore(resolve_root(root))
    scheme = urlsplit(url).scheme.lower() if "://" in url else ""
    if not scheme:
        return LocalStore(Path(url).expanduser())
    module_name = BACKENDS.get(scheme)
    if module_name is None:
        known = ", ".join(f"{s}://" for s in BACKENDS)
        raise StoreError(f"unknown store URL scheme '{scheme}://' (known: {known})")
    import importlib

    return importlib.import_module(module_name).open_url(url, options or StoreOptions())


def as_store(where: Store | str | os.PathLike[str]) -> Store:
    """A store as is; a path (a local root) as its local store."""
    if isinstance(where, Store):
        return where
    from supervisor.store.local import LocalStore

    return LocalStore(Path(where))


def file_url_path(url: str) -> Path:
    """The path of a `file://` URL (`file:///abs/path` or `file:relative`)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise StoreError(f"a file:// store must be on this machine, not on '{parts.netloc}'")
    return Path(unquote(parts.path)).expanduser()
