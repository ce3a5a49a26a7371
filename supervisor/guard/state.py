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
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypedDict

from supervisor.protocol.bounded import loads
from supervisor.protocol.names import MAX_JSON_DEPTH
from supervisor.store import waits

STATE_FILE = "state.json"
LOCK_FILE = "guard.lock"
STATE_VERSION = 1
CALLS_KEPT = 64
"""Calls in flight remembered (`GuardState.calls`)."""
REFUSALS_KEPT = 64
"""Refused calls remembered (`GuardState.refused`), to recognise a result that arrives for one
(disobedience, `supervisor.guard.gate`)."""
_STATE_DEPTH = 2 * MAX_JSON_DEPTH
"""The state holds recorded values (a pending call's arguments) a few levels down."""


class Task(TypedDict):
    """The open task."""

    task_id: str
    title: str


class RollbackRetry(TypedDict):
    """A rollback interrupted at its deadline, continued at the next tool calls."""

    checkpoint_id: str
    attempt: int
    safety_id: str | None


@dataclass(slots=True)
class GuardState:
    """Everything one session's guard remembers between steps (and processes).

    Saved as one JSON object whose keys are these attribute names (plus `"v"`), the format the
    guard has always written: a state file written before this class existed loads, and one it
    writes loads in that older code, so a session in flight survives an upgrade either way. A
    missing key gets its default; a key this version does not know is kept as it was (`extra`)
    and written back. The nested values stay plain JSON dicts: the pending escalation is its
    `escalation` event plus bookkeeping, `meta` and `plan` are read by key."""

    engine: dict[str, Any] | None = None
    """The engine's snapshot, as of the last save."""
    control_offset: int = 0
    """Bytes of `control.jsonl` consumed."""
    log_offset: int | None = None
    """Bytes of `events.jsonl` this state is up to date with (`supervisor.guard.recovery`)."""
    seen_decisions: list[str] = field(default_factory=list)
    logged_decisions: list[str] = field(default_factory=list)
    """Decision ids whose outcome the log holds but `control.jsonl` was not read past yet."""
    decided: dict[str, str] = field(default_factory=dict)
    """Escalation id -> the decision id that resolved it."""
    resolutions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Escalation id -> the verdict its decision left (the last few), for every waiter."""
    pending: dict[str, Any] | None = None
    """The pending escalation: its `escalation` event plus `signature`."""
    rollback_retry: RollbackRetry | None = None
    task: Task | None = None
    tasks_started: int = 0
    ended: str | None = None
    escalations: int = 0
    actions: int = 0
    since_checkpoint: int = 0
    """Calls since the cadence's last checkpoint (`checkpoint_every`); -1 when it was taken
    ahead of the call it is for (`gate.CallGate.checkpoint_ahead`)."""
    resets: int = 0
    calls: dict[str, int] = field(default_factory=dict)
    """Call id -> the seq of its `tool_call`, for the calls in flight (the last few)."""
    last_seq: int = 0
    started: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    """agent, heartbeat_s, cwd, settings (a `GuardSettings` dict), checkpoints_off."""
    plan: dict[str, Any] | None = None
    """An operator's split (`supervisor.guard.plans`); written only once there is one."""
    edit_guidance: dict[str, Any] | None = None
    """`supervisor.guard.edit_guidance`'s memory; written only once there is one."""
    memory: dict[str, Any] | None = None
    """`supervisor.guard.memory`'s part: the project, what this session is learning; written
    only once there is one."""
    refused: dict[str, str] | None = None
    """Call id -> the action that refused it (`skip`, `block`, `pause`, `stop`), for the last
    few calls the agent was told not to run: a result for one of them is disobedience
    (`supervisor.guard.gate`); written only once there is one."""
    spend: dict[str, Any] | None = None
    """`supervisor.guard.loop_cost`'s running totals and marks; written only once there is
    usage."""
    limits_warned: list[str] | None = None
    """The session limits (`tokens`, `cost_usd`) whose warning was sent (once a session);
    written only once there is one."""
    hold_seal: str | None = None
    """The seal of `pending`, `ended` and `log_offset` as saved (`guard.journal`): a state the
    agent rewrote without its hold is not believed about the hold (None: no key)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys of the saved state this version does not know, kept as they were."""

    def plan_step_ended(self, task_id: str, status: str) -> None:
        """Keep the plan's step in step with a `task_end` the guard wrote (any cause: a step
        done, skipped by an operator, the session's end)."""
        if not isinstance(self.plan, dict):
            return
        for step in self.plan["steps"]:
            if step["task_id"] == task_id and step["status"] == "current":
                step["status"] = status

    def to_json(self) -> dict[str, Any]:
        """The JSON object saved as `state.json`."""
        out: dict[str, Any] = {"v": STATE_VERSION}
        for name in _SAVED:
            out[name] = getattr(self, name)
        for name in _WHEN_SET:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out.update((k, v) for k, v in self.extra.items() if k not in out)
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GuardState:
        """The state saved as `data` (a decoded `state.json` of this version); the values are
        taken as they are (the guard wrote them), not copied."""
        known = {k: v for k, v in data.items() if k in _FIELDS}
        extra = {k: v for k, v in data.items() if k not in _FIELDS and k != "v"}
        return cls(**known, extra=extra)


_WHEN_SET = ("plan", "edit_guidance", "memory", "refused", "spend", "limits_warned", "hold_seal")
_SAVED = tuple(f.name for f in fields(GuardState) if f.name not in (*_WHEN_SET, "extra"))
_FIELDS = frozenset(f.name for f in fields(GuardState)) - {"extra"}


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
        self.set_aside = 0
        """How many unreadable states this object kept aside (`load`)."""

    def changed_since_ours(self) -> bool:
        """True when the file on disk is not the one this object last loaded or saved."""
        return self._current_stamp() != self._stamp

    def load(self) -> GuardState:
        """The saved state, or a fresh one when there is none. A state file that cannot be read
        (which atomic saves should make impossible) is kept aside as `state.json.bad`."""
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            self._stamp = None
            return GuardState()
        try:
            state = loads(raw, max_depth=_STATE_DEPTH)
            if not isinstance(state, dict) or state.get("v") != STATE_VERSION:
                raise ValueError("not a state of this version")
        except ValueError:  # bad JSON, too deep, not UTF-8, another version
            os.replace(self.path, self.path.with_suffix(".json.bad"))
            self.set_aside += 1
            self._stamp = None
            return GuardState()
        self._stamp = self._current_stamp()
        return GuardState.from_json(state)

    def save(self, state: GuardState) -> None:
        # ASCII: any text the agent sent (lone surrogates included) is kept exactly, as escapes
        data = json.dumps(state.to_json(), separators=(",", ":")).encode("ascii")
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
