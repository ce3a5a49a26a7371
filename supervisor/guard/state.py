"""The guard's per-session state on disk: `<session>/state.json` under `<session>/guard.lock`.

Stdlib only. Every guard process of a session (the SDK's one process, or one Claude Code hook
process per tool call, several at once) takes the session lock, loads the state, applies one
step and saves it again before releasing the lock; the save is atomic (temporary file, then
rename), so a process killed at any moment leaves the previous or the new state, never half of
one.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from supervisor.protocol.bounded import loads
from supervisor.protocol.names import MAX_JSON_DEPTH
from supervisor.store import waits

STATE_FILE = "state.json"
LOCK_FILE = "guard.lock"
STATE_VERSION = 1
_STATE_DEPTH = 2 * MAX_JSON_DEPTH
"""The state holds recorded values (a pending call's arguments) a few levels down."""


def new_state() -> dict[str, Any]:
    """A fresh state: nothing seen, nothing pending."""
    return {
        "v": STATE_VERSION,
        "engine": None,
        "control_offset": 0,
        "log_offset": None,
        "seen_decisions": [],
        "logged_decisions": [],
        "decided": {},
        "resolutions": {},
        "pending": None,
        "rollback_retry": None,
        "task": None,
        "tasks_started": 0,
        "ended": None,
        "escalations": 0,
        "actions": 0,
        "since_checkpoint": 0,
        "resets": 0,
        "calls": {},
        "last_seq": 0,
        "started": False,
        "meta": {},
    }


class SessionLock:
    """An exclusive `flock` on the session's lock file, re-entrant within one object."""

    def __init__(self, session_dir: Path) -> None:
        self.path = Path(session_dir) / LOCK_FILE
        self._fd: int | None = None
        self._depth = 0

    @contextmanager
    def held(self) -> Iterator[None]:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if self._depth == 0:
            waits.flock(self._fd, "the session (another process of it holds the lock)")
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class StateFile:
    """Load and save `state.json`; knows whether someone else wrote it since we last did."""

    def __init__(self, session_dir: Path) -> None:
        self.path = Path(session_dir) / STATE_FILE
        self._stamp: tuple[int, int, int] | None = None

    def changed_since_ours(self) -> bool:
        """True when the file on disk is not the one this object last loaded or saved."""
        return self._current_stamp() != self._stamp

    def load(self) -> dict[str, Any]:
        """The saved state, or a fresh one when there is none. A state file that cannot be read
        (which atomic saves should make impossible) is kept aside as `state.json.bad`."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            self._stamp = None
            return new_state()
        try:
            state = loads(raw, max_depth=_STATE_DEPTH)
            if not isinstance(state, dict) or state.get("v") != STATE_VERSION:
                raise ValueError("not a state of this version")
        except ValueError:  # bad JSON, too deep, not UTF-8, another version
            os.replace(self.path, self.path.with_suffix(".json.bad"))
            self._stamp = None
            return new_state()
        fresh = new_state()
        fresh.update(state)
        self._stamp = self._current_stamp()
        return fresh

    def save(self, state: dict[str, Any]) -> None:
        # ASCII: any text the agent sent (lone surrogates included) is kept exactly, as escapes
        data = json.dumps(state, separators=(",", ":")).encode("ascii")
        temp = self.path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temp, self.path)
        self._stamp = self._current_stamp()

    def _current_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)
