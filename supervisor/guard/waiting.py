"""Wait until a file changes (or a timeout passes): watchfiles when it works, else polling.

The guard waits on the session's `control.jsonl` while an escalation is pending. watchfiles
wakes it as soon as an operator writes; on file systems where notifications do not work (or when
watchfiles cannot start) a short `os.stat` polling loop does the same job a little later.
Ctrl+C (and a SIGTERM while a `Session` is open, see `supervisor.guard.signals`) ends the wait
at once: the interrupt propagates, and watchfiles logs nothing.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from supervisor.guard import signals

POLL_S = 0.1


class ChangeWaiter:
    """Waits for the size or identity of one file to change."""

    def __init__(self, path: Path, *, use_watchfiles: bool = True) -> None:
        self.path = Path(path)
        self._stamp = self._current()
        self._stop = threading.Event()
        self._watch = None
        if use_watchfiles:
            try:
                from watchfiles import watch

                self._watch = watch(
                    self.path.parent, stop_event=self._stop, rust_timeout=200,
                    yield_on_timeout=True, debounce=20, step=10, raise_interrupt=True,
                )
            except Exception:  # no watchfiles, or no notifications here: poll instead
                self._watch = None

    def wait(self, timeout: float) -> bool:
        """Block until the file changed or `timeout` seconds passed; True if it changed."""
        end = time.monotonic() + max(0.0, timeout)
        while True:
            current = self._current()
            if current != self._stamp:
                self._stamp = current
                return True
            left = end - time.monotonic()
            if left <= 0:
                return False
            if self._watch is not None:
                try:
                    next(self._watch)  # returns on a change in the directory, or after 200 ms
                    continue
                except KeyboardInterrupt:  # Ctrl+C, or a SIGTERM that watchfiles turned into one
                    signals.reraise_terminated()
                    raise
                except Exception:
                    self._watch = None
            time.sleep(min(POLL_S, left))

    def close(self) -> None:
        self._stop.set()
        self._watch = None

    def _current(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_ino, st.st_size)
