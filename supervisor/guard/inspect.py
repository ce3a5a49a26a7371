"""What operator commands need to know about a session: is its agent alive, and where does it
stand against every limit.

Reads the event log through the store (pydantic is fine here: these run in the CLI and the
dashboard, not on the hook path); the guard's saved state is used when the session's files are
on this machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from supervisor.guard.state import STATE_FILE
from supervisor.protocol.bounded import loads
from supervisor.protocol.decisions import is_hold
from supervisor.protocol.names import MAX_JSON_DEPTH
from supervisor.store.summary import IDLE_AFTER_S, SessionSummary

if TYPE_CHECKING:
    from supervisor.protocol.models import Event
    from supervisor.store.base import Store


def agent_alive(summary: SessionSummary, now: float) -> tuple[bool, str]:
    """Whether the session's agent may still be running, and why we think so.

    The dashboard's judgement (`SessionSummary.liveness`: its process on this host, its
    promised heartbeats); when that cannot tell (a hook-driven agent promises no heartbeats),
    the agent counts as alive while it was active within the last minute, because an
    operator's tool must not roll back the files of an agent that may be working on them."""
    verdict = summary.liveness(now)
    if verdict.alive is not None:
        return verdict.alive, verdict.reason
    last = summary.last_seen_ts
    if last is None:
        return False, "the session has no events"
    quiet = now - last
    if quiet < IDLE_AFTER_S:
        return True, f"it was active {quiet:.0f} s ago"
    return False, f"no activity for {quiet:.0f} s"


def why_not_applied_yet(summary: SessionSummary, now: float, *, agent_waits: bool) -> str:
    """Why a decision written a while ago has no outcome yet, and when it will have one.
    `agent_waits`: the agent waits on an escalation (it reads decisions at once), rather than
    picking commands up at its next tool call."""
    if summary.end_status is not None:
        return f"the session ended ({summary.end_status}) before the agent read it"
    life = summary.liveness(now)
    heard = summary.last_seen_ts
    since = f"its last event was {now - heard:.0f} s ago" if heard is not None else "no events"
    if life.alive is False:
        return f"the agent is not running ({life.reason}); it applies if the agent comes back"
    if agent_waits:
        return f"the agent has not read it ({since}); it applies when it does"
    return f"the agent applies it at its next tool call ({since})"


@dataclass(slots=True)
class LimitUsage:
    """A session's standing: level, gauges (name, value, limit, action), and where it came from."""

    level: int
    gauges: list[tuple[str, float, float | None, str]]
    source: str
    """`state` (the guard's saved engine) or `replay` (the event log replayed)."""
    problem: str | None = None
    """Why the session's recorded policy could not be used (the default profile's limits are
    shown instead), or None."""
    as_of: float | None = None
    """The time of the last event the engine saw: the gauges are its count up to then."""
    idle_gap_s: float = 0.0
    """The policy's `idle_gap_s`: the most of one silence `duration_s` will count."""
    waits_for_operator: bool = False
    """An escalation or a pause held the agent at its last event: none of the silence since
    will count (the engine's `_worked`)."""


def still_waiting(summary: SessionSummary, session: str) -> str | None:
    """What the agent still waits for once a decision applied, in words (None: nothing): a
    quiet, a replan or a guidance does not answer the escalation that holds it, and "applied"
    alone would read as if the agent went on."""
    from supervisor.safetext import clean

    if summary.end_status is not None or not summary.pending:
        return None
    eid, esc = next(iter(summary.pending.items()))
    name = clean(eid, keep_newlines=False, limit=60)
    if is_hold(esc):
        return (f"the agent is still paused ({name}): `supervisor resume {session}` or `a` in "
                "its prompt lets it go on")
    reason = clean(str(esc.get("reason") or ""), keep_newlines=False, limit=100)
    return (f"the agent still waits on escalation {name} ({reason}): answer it "
            f"(`supervisor answer {session} ...` or `e` in the dashboard)")


def session_usage(store: Store, session: str, now: float | None = None, *,
                  replaying: Callable[[int], None] | None = None,
                  events: list[Event] | None = None) -> LimitUsage:
    """Usage of one session against every hard limit of its policy. Without the guard's
    saved state the events are replayed through the engine: `replaying` is told how many
    first (a long session takes seconds a 10,000 events). `events`: the session's events,
    when the caller read them already (`supervisor stats` reads them for the loops' cost too:
    a second reading of a 200,000-event log cost it seconds)."""
    from supervisor.engine import Engine

    store.require(session)
    if events is None:
        events = store.read_all(session).events
    now = time.time() if now is None else now
    engine = None
    source = "state"
    files = store.local_files(session)
    try:
        if files is not None:
            state = loads((files.dir / STATE_FILE).read_bytes(), max_depth=2 * MAX_JSON_DEPTH)
            if isinstance(state, dict) and state.get("engine"):
                engine = Engine.restore(state["engine"])
    except (OSError, ValueError, KeyError, TypeError):
        engine = None
    problem = None
    if engine is None:
        source = "replay"
        if replaying is not None:
            replaying(len(events))
        problems: list[str] = []
        engine = replay_engine(events, problems)
        problem = problems[0] if problems else None
    # What the engine counted up to its last event, as the dashboard's gauges (the guard's
    # report at its last verdict): a silence since is not working time yet. The engine adds
    # at most `idle_gap_s` of it when the agent goes on by itself, and none when a user's
    # prompt ends it (docs/engine.md), so counting it now would be a guess, shown as a fact.
    as_of = engine.st.last_ts
    at = now if as_of is None else min(now, as_of)
    gauges = [
        (g.name, g.value, g.limit, engine.policy.limit(g.name)[1]) for g in engine.gauges(at)
    ]
    held = engine.st.waiting == "operator" or engine.st.escalation is not None
    return LimitUsage(engine.level, gauges, source, problem, as_of, engine.policy.idle_gap_s,
                      held)


def replay_engine(events: Iterable[Event], problems: list[str] | None = None) -> Any:
    """The engine a session's events lead to, under the policy its `session_start` recorded:
    every event observed in order, operator decisions applied as recorded. When that policy
    cannot be used, the engine runs the default profile and `problems` gets the reason.

    The recorded policy is checked by the engine's one validator (`validate_policy_dict`, the
    one `policy show` uses): a malformed limit is a reason shown, not a traceback."""
    from supervisor.engine import Engine
    from supervisor.engine.policy_file import validate_policy_dict

    engine = None
    for event in events:
        data = event.model_dump(mode="json")
        if engine is None:
            policy = None
            if data.get("type") == "session_start" and isinstance(data.get("policy"), dict):
                try:
                    policy = validate_policy_dict(data["policy"], source="recorded policy")
                except ValueError as exc:
                    if problems is not None:
                        problems.append(str(exc))
            engine = Engine(policy)
        engine.observe(data, data.get("ts") or 0.0)
    return engine or Engine(None)
