"""What operator commands need to know about a session: is its agent alive, and where does it
stand against every limit.

Reads the event log through the store (pydantic is fine here: these run in the CLI and the
dashboard, not on the hook path); the guard's saved state is used when the session's files are
on this machine.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from supervisor.guard.state import STATE_FILE
from supervisor.store.summary import IDLE_AFTER_S, SessionSummary

if TYPE_CHECKING:
    from supervisor.protocol.models import Event
    from supervisor.store.base import Store


def pid_alive(pid: int | None) -> bool:
    """True when a process with this id exists on this machine."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def agent_alive(summary: SessionSummary, now: float) -> tuple[bool, str]:
    """Whether the session's agent may still be running, and why we think so.

    Ended sessions are not alive. A session that recorded its process id is alive exactly while
    that process exists; otherwise the agent counts as alive while its promised heartbeats keep
    coming or (for hook-driven agents that promise none) while it was active within the last
    minute."""
    if summary.end_status is not None:
        return False, f"the session ended ({summary.end_status})"
    if summary.pid:
        if pid_alive(summary.pid):
            return True, f"its process {summary.pid} is running"
        return False, f"its process {summary.pid} is gone"
    last = summary.last_ts
    if last is None:
        return False, "the session has no events"
    quiet = now - last
    if summary.heartbeat_s:
        if summary.status(now) != "dead":
            return True, f"it wrote an event {quiet:.0f}s ago (heartbeats every "\
                         f"{summary.heartbeat_s:g}s)"
        return False, f"no heartbeat for {quiet:.0f}s"
    if quiet < IDLE_AFTER_S:
        return True, f"it was active {quiet:.0f}s ago"
    return False, f"no activity for {quiet:.0f}s"


@dataclass(slots=True)
class Usage:
    """A session's standing: level, gauges (name, value, limit, action), and where it came from."""

    level: int
    gauges: list[tuple[str, float, float | None, str]]
    source: str
    """`state` (the guard's saved engine) or `replay` (the event log replayed)."""


def session_usage(store: Store, session: str, now: float | None = None) -> Usage:
    """Usage of one session against every hard limit of its policy."""
    from supervisor.engine import Engine

    store.require(session)
    batch = store.read_all(session)
    summary = SessionSummary(session)
    for event in batch.events:
        summary.apply(event)
    now = time.time() if now is None else now
    if summary.end_status is not None and summary.last_ts is not None:
        now = summary.last_ts  # an ended session's clock stopped at its end
    engine = None
    source = "state"
    files = store.local_files(session)
    try:
        if files is not None:
            state = json.loads((files.dir / STATE_FILE).read_bytes())
            if isinstance(state, dict) and state.get("engine"):
                engine = Engine.restore(state["engine"])
    except (OSError, ValueError, KeyError, TypeError):
        engine = None
    if engine is None:
        source = "replay"
        engine = replay_engine(batch.events)
    gauges = [
        (g.name, g.value, g.limit, engine.policy.limit(g.name)[1]) for g in engine.gauges(now)
    ]
    return Usage(engine.level, gauges, source)


def replay_engine(events: Iterable[Event]) -> Any:
    """The engine a session's events lead to, under the policy its `session_start` recorded:
    every event observed in order, operator decisions applied as recorded."""
    from supervisor.engine import Engine, Policy

    engine = None
    for event in events:
        data = event.model_dump(mode="json")
        if engine is None:
            policy = None
            if data.get("type") == "session_start" and isinstance(data.get("policy"), dict):
                try:
                    policy = Policy.from_dict(data["policy"])
                except ValueError:
                    policy = None
            engine = Engine(policy)
        engine.observe(data, data.get("ts") or 0.0)
    return engine or Engine(None)
