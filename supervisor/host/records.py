"""What is remembered of each run: `<root>/host/<session>.json` (0600, in a 0700 directory).

The record names the tmux server and session the agent runs in, its pane's pid, how it was
started and its worktree, so `screen`, `send`, `attach`, `stop`, `worktree ...` and the
dashboard's terminal panel find the agent from the session id alone. It stays after the agent
exits (its worktree may wait for a merge) and goes with `stop` (no worktree) or `worktree
merge|discard`. The run's private files (the per-run hook settings) live beside it in
`<session>.d/`, removed when the agent exits.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from supervisor.host import HostError, tmux
from supervisor.store.liveness import pid_alive, process_start
from supervisor.store.paths import ensure_private_dir, validate_session_id, write_private


@dataclass(frozen=True, slots=True)
class Worktree:
    """The git worktree a run works in."""

    repo: str
    """The repository's top directory (where `merge` merges into)."""
    path: str
    branch: str
    base: str
    """The commit the branch started from."""


@dataclass(slots=True)
class RunRecord:
    session: str
    agent: str
    """The hook target's name, or `cmd` for `--cmd`."""
    command: list[str]
    """What the pane runs (for the operator: it is never re-run from here)."""
    cwd: str
    socket: str
    """The tmux server's `-L` name."""
    tmux_session: str
    pid: int = 0
    """The pane's process: it lives exactly as long as the agent."""
    created: float = field(default_factory=time.time)
    worktree: Worktree | None = None
    started: int | None = None
    """When `pid` started (`liveness.process_start`), so that a process that reused the pid
    after the agent ended is never taken for it (nor stopped); None without `/proc`."""

    def alive(self) -> bool:
        """The agent's own process still runs: its pid exists and is the process started for
        this run (same start time). A record without a start time (older, or no `/proc`)
        believes tmux: the run's pane must still be running that pid."""
        if not pid_alive(self.pid):
            return False
        if self.started is not None:
            return process_start(self.pid) == self.started
        server = tmux.Server(self.socket)
        try:
            return (server.has_session(self.tmux_session)
                    and server.pane_pid(self.tmux_session) == self.pid
                    and not server.pane_dead(self.tmux_session))
        except (HostError, ValueError):
            return False

    def to_json(self) -> bytes:
        return (json.dumps(asdict(self), indent=1) + "\n").encode()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        tree = data.pop("worktree", None)
        return cls(**data, worktree=Worktree(**tree) if tree else None)


def host_dir(root: Path) -> Path:
    return Path(root) / "host"


def record_path(root: Path, session: str) -> Path:
    return host_dir(root) / f"{validate_session_id(session)}.json"


def private_dir(root: Path, session: str) -> Path:
    """The run's private files (per-run settings), removed when its agent exits."""
    return host_dir(root) / f"{validate_session_id(session)}.d"


def save(root: Path, record: RunRecord) -> None:
    ensure_private_dir(Path(root))
    ensure_private_dir(host_dir(root))
    write_private(record_path(root, record.session), record.to_json())


def load(root: Path, session: str) -> RunRecord:
    """The run record of `session`; `HostError` when that session was not started by run."""
    path = record_path(root, session)
    try:
        return RunRecord.from_json(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise HostError(f"{session} is not a session started by `supervisor run` "
                        "(or its run is over)") from None
    except (ValueError, TypeError) as exc:
        raise HostError(f"{path}: unreadable run record ({exc})") from exc


def find(root: Path, session: str) -> RunRecord | None:
    """The run record of `session`, or None (not a run, or unreadable)."""
    try:
        return load(root, session)
    except (HostError, ValueError):
        return None


def every(root: Path) -> list[RunRecord]:
    """Every run record of the root, oldest first (unreadable ones skipped)."""
    records = []
    directory = host_dir(root)
    if directory.is_dir():
        for path in directory.glob("*.json"):
            record = find(root, path.stem)
            if record is not None:
                records.append(record)
    return sorted(records, key=lambda r: r.created)


def remove(root: Path, session: str) -> None:
    record_path(root, session).unlink(missing_ok=True)


def holds(root: Path, session: str) -> str | None:
    """Why a session that is over must stay in the store (`supervisor.operator.prune`): a run
    still remembered here, whose worktree may wait for a merge; None: nothing holds it."""
    if record_path(root, session).exists():
        return ("supervisor run still remembers its run: stop it (`supervisor stop`, K) or "
                "merge or discard its worktree (M, D) first")
    return None
