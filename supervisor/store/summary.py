"""Fold a session's events into the one-row summary that `supervisor sessions` and the
dashboard's sessions table show: who, what, status, level, counts, last activity.

Events in, summary out, with `now` passed in for the time-dependent statuses; whether the
agent's recorded process still exists is asked of the system (`supervisor.store.liveness`).
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from supervisor.protocol.decisions import is_hold
from supervisor.protocol.policy_audit import switched_off
from supervisor.store.liveness import Liveness, judge
from supervisor.store.voice import SEALS_FIELD

if TYPE_CHECKING:
    from supervisor.protocol.models import Event  # pydantic: not before the first screen

IDLE_AFTER_S = 60.0
"""No activity (heartbeats aside) for this long: the session is idle."""

LIVE_STATUSES = ("running", "waiting", "paused", "idle", "dead")
"""`waiting` means waiting for you: an escalation is pending."""
ENDED_STATUSES = ("completed", "aborted", "failed", "terminated", "limit")
"""How a session ended: its `session_end` status, or `limit` when a hard limit stopped it."""
OTHER_STATUSES = ("recorded", "broken", "empty", "vanished")
"""`recorded`: an imported run that has no end (it is not running, it was recorded);
`broken`: no valid `session_start`, or the session's events could not be shown (a reader failed
on them; `broken` on the summary says why); `empty`: nothing written yet; `vanished`: its
events (or its folder) were removed after they were read (`SessionSummary.vanished`)."""
STATUSES = LIVE_STATUSES + ENDED_STATUSES + OTHER_STATUSES


class Answer(NamedTuple):
    """How an escalation was decided: the `decision_applied` the agent side recorded."""

    action: str
    operator: str | None
    decision_id: str
    outcome: str


@dataclass(slots=True)
class SessionSummary:
    """What is known of one session after folding its events so far."""

    session_id: str
    agent: str | None = None
    task: str | None = None
    cwd: str | None = None
    pid: int | None = None
    host: str | None = None
    """Where `pid` can be looked up (`supervisor.store.liveness.THIS_HOST` of the agent)."""
    heartbeat_s: float | None = None
    started_ts: float | None = None
    last_ts: float | None = None
    """Time of the latest event of any kind."""
    last_seen_ts: float | None = None
    """Time of the latest event the agent wrote itself (not one an operator's tool appended
    on its behalf, which carries `by`), by the agent's own clock."""
    last_heard_ts: float | None = None
    """When the latest of those events reached the store, by the store's clock (a Redis
    stream's entry id), or None when the store cannot say (a local file). Liveness is judged
    from it when known: an agent on another host whose clock is 120 s behind is not silent."""
    last_activity_ts: float | None = None
    """Time of the latest event of the agent's own other than a heartbeat."""
    events: int = 0
    tool_calls: int = 0
    errors: int = 0
    bad_lines: int = 0
    unsealed: int = 0
    """Lines that claimed the supervisor's voice without its seal (`store.voice`): the agent's
    side wrote them."""
    level: int = 0
    end_status: str | None = None
    end_reason: str | None = None
    limit_stop: bool = False
    """A `limit` event said the session stops (its end is shown as `limit`)."""
    sealed: bool = False
    """The first `session_start` says the guard seals the lines it speaks with (`store.voice`):
    then an escalation here is the supervisor's; without, no one can tell (`NO_SEAL_NOTE`)."""
    imported: bool = False
    """The `session_start` says the run was imported from another framework's recording."""
    transcript_path: str | None = None
    """The agent CLI's own transcript, as its hook's `session_start` said (see
    `supervisor.store.silence`)."""
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Pending escalations by id: the escalation event as a dict, in arrival order."""
    answers: dict[str, Answer] = field(default_factory=dict)
    """How each decided escalation was decided, by id."""
    handled: set[str] = field(default_factory=set)
    """Ids of every decision the agent side applied or ignored (the others are still unread)."""
    resets: int = 0
    """Resets applied so far."""
    reset_limit: float | None = None
    """The policy's `resets_per_conversation` (None: unlimited or not reported)."""
    notifications: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The latest `notification` outcome of each escalation, by id and then by service:
    `{"esc-1": {"ntfy://ntfy.sh/x": {"outcome": "sent", "attempt": 2, "reason": None}}}`."""
    policy_warnings: list[str] = field(default_factory=list)
    """What the session's recorded policy switches off (`protocol.policy_audit`)."""
    vanished: bool = False
    """The session's events were removed after they were folded: it is shown as it was, not
    as an `empty` session that wrote nothing. `supervisor sessions` knows it from the kept
    summary beside a removed `events.jsonl` (`store.summary_cache`), the dashboard from the
    file (or folder) going while it watched; both say `vanished` from `status`."""
    broken: str | None = None
    """Why this session's events could not be folded (set by a reader that failed on them),
    or None. A broken session is shown as such; the others go on."""

    def apply(self, event: "Event", arrived: float | None = None) -> None:
        """Fold one event in; `arrived`: when the store received it (`SessionBatch.arrived`)."""
        self.events += 1
        kind = event.type
        ts = event.ts
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        extra = event.__pydantic_extra__
        if not extra or extra.get("by") is None:  # the agent's own event: a sign of life
            self.last_seen_ts = ts if self.last_seen_ts is None else max(self.last_seen_ts, ts)
            if arrived is not None:
                self.last_heard_ts = (arrived if self.last_heard_ts is None
                                      else max(self.last_heard_ts, arrived))
            if kind != "heartbeat":
                self.last_activity_ts = (
                    ts if self.last_activity_ts is None else max(self.last_activity_ts, ts)
                )
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event)

    def needs_you(self) -> dict[str, dict[str, Any]]:
        """The pending escalations that wait for an answer: all but an operator's own pause
        (kind `pause`), which is the operator's choice, shown as `paused`, not as a request."""
        return {eid: esc for eid, esc in self.pending.items() if not is_hold(esc)}

    @property
    def ended(self) -> bool:
        return self.end_status is not None

    def ended_as(self) -> str | None:
        """How the session ended (one of `ENDED_STATUSES`), None while it has not."""
        if self.end_status is None:
            return None
        if self.end_status == "terminated" and self.limit_stop:
            return "limit"
        return self.end_status

    def liveness(self, now: float) -> Liveness:
        """Whether the agent is still there at time `now`, and why we think so: its silence is
        counted from when its events arrived when the store says, else from their time stamps."""
        heard = self.last_heard_ts if self.last_heard_ts is not None else self.last_seen_ts
        return judge(end_status=self.end_status, pid=self.pid, host=self.host,
                     heartbeat_s=self.heartbeat_s, last_seen_ts=heard, now=now)

    def status(self, now: float, *, judge_liveness: bool = True) -> str:
        """One of `STATUSES` at time `now`. `judge_liveness=False` shows a recording as it was
        recorded: never `dead` or `idle` because its agent is long gone."""
        if self.vanished:
            return "vanished"
        if self.broken is not None:
            return "broken"
        ended = self.ended_as()
        if ended is not None:
            return ended
        if self.started_ts is None:
            return "broken" if self.events or self.bad_lines else "empty"
        if self.imported:
            return "recorded"
        if judge_liveness and self.liveness(now).alive is False:
            return "dead"
        if self.pending:
            first = next(iter(self.pending.values()))
            return "paused" if is_hold(first) else "waiting"
        if (judge_liveness and self.last_activity_ts is not None
                and now - self.last_activity_ts > IDLE_AFTER_S):
            return "idle"
        return "running"


def _session_start(s: SessionSummary, e: Any) -> None:
    s.agent, s.task, s.cwd, s.pid = e.agent, e.task, e.cwd, e.pid
    s.reset_limit = _reset_limit(e.policy)
    s.policy_warnings = switched_off(e.policy)
    s.host = e.host
    s.heartbeat_s = e.heartbeat_s
    extra = e.__pydantic_extra__ or {}
    if s.started_ts is None:  # the first decides, as for the readers' check (store.voice)
        s.sealed = bool(extra.get(SEALS_FIELD))
    s.started_ts = e.ts
    s.imported = bool(extra.get("imported"))
    path = extra.get("transcript_path")
    s.transcript_path = path if isinstance(path, str) and path else None


def _task_start(s: SessionSummary, e: Any) -> None:
    s.task = e.title


def _tool_call(s: SessionSummary, e: Any) -> None:
    s.tool_calls += 1


def _tool_result(s: SessionSummary, e: Any) -> None:
    if not e.ok:
        s.errors += 1


def _level(s: SessionSummary, e: Any) -> None:
    s.level = e.level


def _escalation(s: SessionSummary, e: Any) -> None:
    if not is_hold({"kind": getattr(e, "kind", None)}):  # an operator's pause: no degradation
        s.level = e.level
    s.pending[e.escalation_id] = e.model_dump(mode="json")


def _decision_applied(s: SessionSummary, e: Any) -> None:
    s.handled.add(e.decision_id)
    if e.action == "reset":
        s.resets += 1
    if e.escalation_id:
        s.pending.pop(e.escalation_id, None)
        operator = getattr(e, "operator", None)
        s.answers[e.escalation_id] = Answer(
            e.action, operator if isinstance(operator, str) else None, e.decision_id, e.outcome
        )
    if e.level is not None:  # the engine's level right after the decision
        s.level = e.level


def _limit(s: SessionSummary, e: Any) -> None:
    if e.action == "stop":
        s.limit_stop = True


def _session_end(s: SessionSummary, e: Any) -> None:
    s.end_status, s.end_reason = e.status, e.reason
    s.pending.clear()
    if e.status in ("aborted", "terminated"):
        s.level = 4


def _decision_ignored(s: SessionSummary, e: Any) -> None:
    s.handled.add(e.decision_id)


def _notification(s: SessionSummary, e: Any) -> None:
    by_service = s.notifications.setdefault(e.escalation_id, {})
    by_service[e.service] = {"outcome": e.outcome, "attempt": e.attempt, "reason": e.reason}


def _unsealed(s: SessionSummary, e: Any) -> None:
    s.unsealed += 1


def _reset_limit(policy: Any) -> float | None:
    """`limits.resets_per_conversation.limit` of a recorded policy, when it is a positive
    number."""
    try:
        value = policy["limits"]["resets_per_conversation"]["limit"]
    except (TypeError, KeyError):
        return None
    ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    return float(value) if ok else None


_HANDLERS = {
    "session_start": _session_start,
    "task_start": _task_start,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "verdict": _level,
    "detection": _level,
    "escalation": _escalation,
    "decision_applied": _decision_applied,
    "decision_ignored": _decision_ignored,
    "limit": _limit,
    "session_end": _session_end,
    "notification": _notification,
    "unsealed": _unsealed,
}
