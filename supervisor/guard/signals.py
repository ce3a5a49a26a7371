"""Stopping a guarded agent from outside ends its session, as Ctrl+C does.

Ctrl+C raises `KeyboardInterrupt` in the agent's main thread; `Session` ends the session as
`terminated` when it leaves the `with` block. SIGTERM (`docker stop`, systemd, a supervisor of
processes) and SIGHUP (the terminal closed) kill a Python process outright by default, without
`session_end`, which would leave the session "waiting" until it is judged dead. While a
`Session` is open, `install()` turns them into `Terminated`, a `SystemExit` (status 128 + the
signal's number, no traceback) that unwinds the agent's stack through the `with` block like
Ctrl+C does, so the session ends as `terminated` with the signal named as the reason.

Handlers are installed only from the main thread and only for signals whose handler is still
the default (an application that handles SIGTERM itself keeps its handler); they are restored
when the last open session closes.

Libraries that wait in native code turn a pending Python signal into their own
`KeyboardInterrupt` (watchfiles does); `reraise_terminated()` restores the `Terminated` the
handler raised there.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

HANDLED = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
                if s is not None)


class Terminated(SystemExit):
    """The process was asked to stop by a signal; exits with status 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum

    @property
    def name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    def __str__(self) -> str:
        return f"stopped by {self.name}"


_lock = threading.Lock()
_users = 0
_previous: dict[int, Any] = {}
_received: list[int] = []
_shielded = 0


def _handler(signum: int, _frame: object) -> None:
    _received.append(signum)
    if not _shielded:
        raise Terminated(signum)


@contextmanager
def shielded() -> Iterator[None]:
    """Signals that arrive inside are recorded, not raised: ending a session is not cut short
    by the next SIGTERM (a second one after the block is raised as usual)."""
    global _shielded
    _shielded += 1
    try:
        yield
    finally:
        _shielded -= 1


def install() -> bool:
    """Handle SIGTERM and SIGHUP as `Terminated` until a matching `uninstall`. Returns whether
    this call counts (False outside the main thread: nothing to undo)."""
    global _users
    if threading.current_thread() is not threading.main_thread():
        return False
    with _lock:
        if _users == 0:
            _received.clear()
            for signum in HANDLED:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    _previous[signum] = signal.signal(signum, _handler)
        _users += 1
    return True


def uninstall() -> None:
    """Undo one `install`; the last one puts the previous handlers back."""
    global _users
    with _lock:
        _users = max(0, _users - 1)
        if _users == 0:
            for signum, previous in _previous.items():
                if signal.getsignal(signum) is _handler:
                    signal.signal(signum, previous)
            _previous.clear()


def received() -> Terminated | None:
    """The `Terminated` of the first signal received since `install`, if any."""
    return Terminated(_received[0]) if _received else None


def reraise_terminated() -> None:
    """Raise the pending `Terminated`, if a signal came (call where a library turned it into a
    `KeyboardInterrupt`)."""
    pending = received()
    if pending is not None:
        raise pending from None
