"""The resident server's HTTP side, kept in line with the root's HTTP configuration file.

The server used to read `<root>/hooks-http.json` once, when it started. A server already running
when `supervisor install claude-code --transport http` made the file (the usual case: the
command hooks of an earlier session started it, and the command hooks that stay, SessionStart,
UserPromptSubmit, Stop, keep it alive) never listened on the port, so every HTTP hook of the
root was refused and Claude Code let those calls go on unchecked, for as long as the server
lived. `HttpSide.follow` looks again: at every call on the Unix socket (a SessionStart command
hook comes before any HTTP hook of its session, so the port answers by then) and at the
server's tidy tick. When nothing changed it costs one `stat`; the HTTP modules are imported
only once a configuration exists. A call of an agent that sends no HTTP hooks (`for_target`:
Droid, Codex, Gemini, Copilot) does not look: no session of its needs the port, and the tidy
tick still follows a file made while only such calls come (the `stat` was about 0.04 ms of each
of their calls on the machine of 2026-11-29).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from supervisor.hooks.client import HTTP_CONFIG

if TYPE_CHECKING:
    from supervisor.hooks.http_transport import Handler, HttpListener

Stamp = tuple[int, int, int] | None
"""The configuration file's (inode, size, mtime in ns), None when there is none."""
_UNSEEN: Stamp = (-1, -1, -1)


@functools.cache
def for_target(target: str) -> bool:
    """Whether the agent of hook target `target` can send HTTP hooks (its settings name
    `http_events`), so that its command hooks follow the configuration; an unknown name: True
    (looked, as before; the step itself refuses it)."""
    from supervisor.hooks.settings_file import Settings
    from supervisor.hooks.targets import load

    try:
        settings = load(target).settings
    except (KeyError, ImportError):
        return True
    return isinstance(settings, Settings) and bool(settings.http_events)


class HttpSide:
    """The server's HTTP listener (`http_transport.HttpListener`), made when the root's
    configuration appears, made again on another port or token, closed when the file goes."""

    def __init__(self, root: Path, handle: Handler,
                 track: Callable[[], contextlib.AbstractContextManager[None]],
                 log: Callable[[str], None]) -> None:
        self.root = root
        self._path = os.path.join(root, HTTP_CONFIG)
        self._handle, self._track, self._log = handle, track, log
        self._lock = threading.Lock()
        self._seen: Stamp = _UNSEEN
        self._listener: HttpListener | None = None
        self._closed = False

    def follow(self) -> None:
        """Serve HTTP hooks as the configuration file says now (no change: one `stat`). Never
        raises: it runs before a hook call's step, which must not fail for it."""
        stamp = _stamp(self._path)
        if stamp == self._seen:
            return
        with self._lock:
            if self._closed or stamp == self._seen:
                return
            self._seen = stamp
            try:
                self._reconfigure()
            except Exception as exc:  # (the next change of the file tries again)
                self._log(f"HTTP hooks: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Stop taking HTTP requests for good (calls in flight finish in their threads)."""
        with self._lock:
            self._closed = True
            if self._listener is not None:
                self._listener.close()
                self._listener = None

    def _reconfigure(self) -> None:
        from supervisor.hooks.http_transport import HttpListener, load_config

        config = load_config(self.root)
        current = self._listener
        if current is not None and current.config == config:
            return  # rewritten with the same port and token
        if current is not None:
            current.close()
            self._listener = None
            self._log(f"HTTP hooks on 127.0.0.1:{current.config.port} no longer served "
                      "(the root's HTTP configuration changed)")
        if config is None:
            return
        try:
            listener = HttpListener(config, self._handle, self._track, self._log)
        except OSError as exc:
            self._log(f"HTTP hooks not served: 127.0.0.1:{config.port}: {exc.strerror or exc}")
            return
        listener.root = self.root
        listener.start()
        self._listener = listener
        self._log(f"serving HTTP hooks on 127.0.0.1:{config.port}")


def _stamp(path: str) -> Stamp:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns
