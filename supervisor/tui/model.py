"""The dashboard's state, folded from the store's batches; no Textual here.

`DashboardModel.apply(batches)` folds what the store's follower delivers into one `SessionState` per
session: the `SessionSummary` row, a compact history, detections, limit gauges, checkpoints, bad
lines, the control decisions and their outcomes, and per-minute tool-call and error counts. It
returns what changed, so the widgets refresh by diff at their own tick instead of per event.
"""

import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from supervisor.guard.loop_cost import LoopTally
from supervisor.hooks.installed import broken_project_hook
from supervisor.operator.refusals import UnreadDecision
from supervisor.protocol.bad_line import BadLine
from supervisor.protocol.names import CHANGED_FILES_KEPT, MAX_NUMBER
from supervisor.safetext import clean
from supervisor.store.base import Cursor, SessionBatch, Store
from supervisor.store.liveness import Liveness
from supervisor.store.open import as_store
from supervisor.store.plan_view import PlanView
from supervisor.store.silence import unsupervised
from supervisor.store.summary import SessionSummary
from supervisor.tui.fleet_totals import FleetTotals
from supervisor.tui.history import HistoryStore

if TYPE_CHECKING:
    from supervisor.protocol.models import Event  # pydantic: not before the first screen

RATE_MINUTES = 30
DAYS_KEPT = 8
"""Days whose cost a session keeps (`SessionState.cost_by_day`)."""
"""Minutes of tool-call and error counts kept for the sparkline."""

SILENCE_CHECK_S = 5.0
"""A session's transcript is looked at (one `stat`) at most this often, whatever the redraw
rate: a silence shows within seconds of the minute that makes it one; a hook event that ends it
shows at once (the check is redone when the last hook event changes)."""

_VALUE_ALIASES = {
    "iterations_per_session": "tool_calls", "tool_calls": "tool_calls",
    "errors_per_session": "errors", "errors": "errors",
    "duration_s": "duration_s", "wall_time_s": "duration_s",
    "tokens": "tokens", "cost_usd": "cost_usd",
}
"""Policy limit names whose current value the dashboard computes itself from the events when the
guard has not reported it (recordings without the `gauges` of verdicts); others show `?`."""


@dataclass(slots=True)
class Gauge:
    """One limit: current value against its bound; `action` is what happens at the bound."""

    name: str
    value: float | None
    limit: float
    action: str = ""

    @property
    def ratio(self) -> float:
        if self.value is None or self.limit <= 0:
            return 0.0
        return self.value / self.limit


@dataclass(slots=True)
class DetectionInfo:
    seq: int
    ts: float
    detector: str
    level: int
    signature: str
    evidence: list[int]
    message: str
    confidence: str = ""
    """How much evidence the finding rests on (`strong`, `moderate`, `weak`; "" when the
    recording does not say)."""


@dataclass(slots=True)
class Diffstat:
    """What a checkpoint changed since the previous one (the `diffstat` of its event)."""

    since: str | None
    """The previous checkpoint (None: the first, counted from an empty work tree)."""
    files: int
    added: int
    modified: int
    deleted: int
    insertions: int | None = None
    deletions: int | None = None


@dataclass(slots=True)
class CheckpointInfo:
    checkpoint_id: str
    label: str
    commit: str
    at_seq: int
    files: int
    ts: float
    changed_files: list[str] | None = None
    """Files changed since the previous checkpoint, as the guard recorded them (None: the
    event does not say; at most `CHANGED_FILES_KEPT` of them, `diffstat.files` counts all)."""
    nested: list[str] = field(default_factory=list)
    """Nested git repositories the checkpoint left out (a rollback does not touch them)."""
    diffstat: Diffstat | None = None


@dataclass(slots=True)
class MemoryNote:
    """One `memory` event: what the project's failure memory told the agent, or learned."""

    seq: int
    ts: float
    kind: str
    call_id: str | None
    message: str
    entries: list[str]


MEMORY_KEPT = 64


@dataclass(slots=True)
class BadLineInfo:
    file: str
    offset: int | None
    reason: str
    preview: str


@dataclass(slots=True)
class DecisionOutcome:
    """What became of one operator decision: `sent`, then `applied` or `ignored`."""

    decision_id: str
    action: str
    escalation_id: str | None
    state: str = "sent"
    detail: str = ""
    operator: str | None = None
    answered: str | None = None
    """The escalation the agent side says it answered (its `decision_applied`), if any."""


def _finite(value: Any) -> float | None:
    """A policy value as a float the views can compute with, or None (not a number, or one
    beyond `MAX_NUMBER`: the effective policy is recorded as the agent side sent it)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, int) and abs(value) > MAX_NUMBER:
        return None
    number = float(value)
    return number if abs(number) <= MAX_NUMBER else None


def _s(value: Any, limit: int = 400) -> str:
    """Agent-provided value as terminal-safe one-line text."""
    return clean(str(value), keep_newlines=False, limit=limit)


@dataclass(slots=True)
class SessionState:
    """Everything the dashboard shows about one session."""

    session_id: str
    summary: SessionSummary = field(init=False)
    history: HistoryStore = field(default_factory=HistoryStore)
    detections: list[DetectionInfo] = field(default_factory=list)
    limit_events: dict[str, Gauge] = field(default_factory=dict)
    reported: dict[str, float] = field(default_factory=dict)
    """Every limit's value as the guard last reported it (the `gauges` of its verdicts)."""
    policy: dict[str, Any] | None = None
    guard: dict[str, Any] | None = None
    """The guard's settings as `session_start` recorded them (pause deadline, fallback)."""
    checkpoints: list[CheckpointInfo] = field(default_factory=list)
    bad_lines: list[BadLineInfo] = field(default_factory=list)
    outcomes: dict[str, DecisionOutcome] = field(default_factory=dict)
    escalations: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Every escalation seen (pending or not), by id, as dicts."""
    memory: list[MemoryNote] = field(default_factory=list)
    """The failure memory's `memory` events (docs/memory.md), the last `MEMORY_KEPT`."""
    quiets: list[str] = field(default_factory=list)
    """The operators' quiets applied in this session, as the guard recorded them (the last 8)."""
    rates: deque[list[float]] = field(default_factory=lambda: deque(maxlen=RATE_MINUTES))
    """[minute, tool calls, errors] for the latest minutes with activity."""
    cost_usd: float = 0.0
    tokens: int = 0
    cost_by_day: dict[str, float] = field(default_factory=dict)
    """Known cost per local day (the last `DAYS_KEPT` days with usage), for the day's total."""
    loops: LoopTally = field(default_factory=LoopTally)
    """What the session spent inside its loops (`guard.loop_cost`), for the fleet's total."""
    usage_record: bool = True
    """False when the agent's hook target reads no usage (`session_start.usage_record`): its
    tokens and cost are not known, whatever the gauges say."""
    gone_what: str = "folder"
    """What vanished when `gone`: the session's `folder`, or its `events.jsonl` alone."""
    preview: bool = False
    """The row is the store's kept summary (`Store.kept_summary`) and nothing of the events is
    read yet: no history, detections, gauges. The first batch of the session replaces it with
    the session's own fold."""
    plan: PlanView = field(default_factory=PlanView)
    """The session's task plan (docs/plans.md), rebuilt from its events."""
    version: int = 0
    """Bumped on every change, so views can tell whether to redraw."""

    def __post_init__(self) -> None:
        self.summary = SessionSummary(self.session_id)

    @property
    def gone(self) -> bool:
        """The session's events (or folder) were removed: `SessionSummary.vanished`, the one
        flag `supervisor sessions` reads too, so both say `vanished` of it."""
        return self.summary.vanished

    # -- folding -----------------------------------------------------------------------------

    def reset_events(self) -> None:
        """The events file was truncated or replaced: forget what came from it."""
        keep_outcomes = self.outcomes
        fresh = SessionState(self.session_id, history=HistoryStore(self.history.log))
        for name in SessionState.__slots__:
            if name not in ("session_id", "outcomes", "version"):
                setattr(self, name, getattr(fresh, name))
        self.outcomes = keep_outcomes
        self.version += 1

    def apply_events(self, events: Iterable["Event"], cursors: Iterable[Cursor],
                     bad: Iterable[BadLine], file: str, arrived: Iterable[float] = ()) -> None:
        summary_apply, history_append, handlers = (
            self.summary.apply, self.history.append, _HANDLERS.get
        )
        arrivals = iter(arrived)
        for event, cursor in zip(events, cursors, strict=False):
            summary_apply(event, next(arrivals, None))
            history_append(event, cursor)
            self.plan.apply(event)
            handler = handlers(event.type)
            if handler is not None:
                handler(self, event)
        for line in bad:
            self.bad_lines.append(
                BadLineInfo(file, line.offset, _s(line.reason), _s(line.preview(160), 200))
            )
        self.summary.bad_lines = len(self.bad_lines)
        self.version += 1

    def apply_control(self, events: Iterable["Event"]) -> None:
        """Decisions in `control.jsonl` (ours or another operator's) are 'sent' until answered."""
        for event in events:
            did = getattr(event, "decision_id", None)
            if did is not None:
                self._sent(did, getattr(event, "action", "?"),
                           getattr(event, "escalation_id", None), getattr(event, "operator", None))
        self.version += 1

    def record_sent(self, decision_id: str, action: str, escalation_id: str | None,
                    operator: str | None) -> None:
        """A decision this dashboard has just written: 'sent' at once, not only once the
        follower reads it back from the control channel (a second answer is refused now)."""
        self._sent(decision_id, action, escalation_id, operator)
        self.version += 1

    def _sent(self, decision_id: str, action: str, escalation_id: str | None,
              operator: str | None) -> None:
        if decision_id not in self.outcomes:
            self.outcomes[decision_id] = DecisionOutcome(
                decision_id, action, escalation_id,
                operator=_s(operator, 60) if operator is not None else None,
            )

    def unread(self) -> list[UnreadDecision]:
        """Decisions written (by anyone) that the agent side has not applied or ignored yet."""
        return [UnreadDecision(o.decision_id, o.action, o.escalation_id, o.operator)
                for o in self.outcomes.values() if o.state == "sent"]

    # -- views -------------------------------------------------------------------------------

    def gauges(self) -> list[Gauge]:
        """A gauge per limit: from `limit` events, else the policy's limits with known values."""
        gauges = dict(self.limit_events)
        limits = (self.policy or {}).get("limits")
        if isinstance(limits, dict):
            for name, spec in limits.items():
                bound, action = spec, ""
                if isinstance(spec, dict):  # the engine's shape: {"limit": N, "action": "..."}
                    bound, action = spec.get("limit"), str(spec.get("action") or "")
                bound = _finite(bound)
                if name in gauges or bound is None or bound <= 0:
                    continue
                gauges[name] = Gauge(_s(name, 40), self._known_value(name), bound,
                                     _s(action, 20))
        return list(gauges.values())

    def _known_value(self, name: str) -> float | None:
        if name in self.reported:
            return self.reported[name]
        s = self.summary
        match _VALUE_ALIASES.get(name):
            case "tool_calls":
                return float(s.tool_calls)
            case "errors":
                return float(s.errors)
            case "cost_usd":
                return self.cost_usd
            case "tokens":
                return float(self.tokens)
            case "duration_s":
                if s.started_ts is not None and s.last_ts is not None:
                    return s.last_ts - s.started_ts
        return None

    def rate_series(self, now: float) -> tuple[list[float], list[float]]:
        """Tool calls and errors per minute over the last `RATE_MINUTES` minutes up to `now`."""
        last = int(now // 60)
        calls = [0.0] * RATE_MINUTES
        errors = [0.0] * RATE_MINUTES
        for minute, c, e in self.rates:
            i = RATE_MINUTES - 1 - (last - int(minute))
            if 0 <= i < RATE_MINUTES:
                calls[i], errors[i] = c, e
        return calls, errors

    def pending(self) -> list[dict[str, Any]]:
        return list(self.summary.pending.values())

    def checkpoint_files(self, checkpoint_id: str) -> list[str] | None:
        """The files checkpoint `checkpoint_id` changed since the previous one (None: unknown)."""
        for cp in self.checkpoints:
            if cp.checkpoint_id == checkpoint_id:
                return cp.changed_files
        return None

    def changed_in_later_checkpoints(self, checkpoint_id: str) -> list[str] | None:
        """The files the checkpoints after `checkpoint_id` changed, from their events: what a
        rollback to it would undo up to the latest checkpoint (the work tree since then is
        only known to git). None when a later checkpoint does not say."""
        ids = [cp.checkpoint_id for cp in self.checkpoints]
        if checkpoint_id not in ids:
            return None
        later = self.checkpoints[ids.index(checkpoint_id) + 1:]
        files: set[str] = set()
        for cp in later:
            if cp.changed_files is None or (cp.diffstat is not None
                                            and cp.diffstat.files > len(cp.changed_files)):
                return None
            files.update(cp.changed_files)
        return sorted(files)

    def _count(self, ts: float, calls: int, errors: int) -> None:
        minute = int(ts // 60)
        if self.rates and self.rates[-1][0] == minute:
            self.rates[-1][1] += calls
            self.rates[-1][2] += errors
        elif not self.rates or minute > self.rates[-1][0]:
            self.rates.append([minute, calls, errors])
        else:  # out-of-order timestamp: add to its bucket if still kept
            for bucket in self.rates:
                if bucket[0] == minute:
                    bucket[1] += calls
                    bucket[2] += errors


def _session_start(st: SessionState, e: Any) -> None:
    st.policy = e.policy if isinstance(e.policy, dict) else None
    guard = (e.__pydantic_extra__ or {}).get("guard")
    st.guard = guard if isinstance(guard, dict) else None
    st.usage_record = (e.__pydantic_extra__ or {}).get("usage_record") is not False


def _tool_call(st: SessionState, e: Any) -> None:
    st._count(e.ts, 1, 0)
    st.loops.call(e.seq)


def _tool_result(st: SessionState, e: Any) -> None:
    if not e.ok:
        st._count(e.ts, 0, 1)


def _usage(st: SessionState, e: Any) -> None:
    st.tokens += e.input_tokens + e.output_tokens
    st.cost_usd += e.cost_usd or 0.0
    st.loops.usage(e.seq, e.input_tokens + e.output_tokens, e.cost_usd,
                   e.answer)
    if e.cost_usd:
        day = day_of(e.ts)
        st.cost_by_day[day] = st.cost_by_day.get(day, 0.0) + e.cost_usd
        while len(st.cost_by_day) > DAYS_KEPT:
            del st.cost_by_day[min(st.cost_by_day)]


def day_of(ts: float) -> str:
    """The local date of a time stamp, as the daily budgets count it (`guard/spend.py`)."""
    return time.strftime("%Y-%m-%d", time.localtime(ts))


def _detection(st: SessionState, e: Any) -> None:
    st.detections.append(
        DetectionInfo(
            e.seq, e.ts, _s(e.detector, 40), e.level, _s(e.signature, 120), list(e.evidence),
            _s(e.message, 400), _confidence((e.__pydantic_extra__ or {}).get("confidence")),
        )
    )


def _confidence(value: Any) -> str:
    """A detection's `confidence` extension field, when it is one the engine writes."""
    return value if value in ("strong", "moderate", "weak") else ""


def _limit(st: SessionState, e: Any) -> None:
    limits = (st.policy or {}).get("limits")
    if e.action == "warn" and isinstance(limits, dict) and e.name in limits:
        return  # a session limit's warning: the gauge goes on counting, it does not stop there
    st.limit_events[e.name] = Gauge(_s(e.name, 40), e.value, e.limit, _s(e.action, 40))


def _verdict(st: SessionState, e: Any) -> None:
    if e.gauges:  # validated: names are strings, values bounded floats
        st.reported.update(e.gauges)


def _checkpoint(st: SessionState, e: Any) -> None:
    extra = e.__pydantic_extra__ or {}
    changed = extra.get("changed_files")
    nested = extra.get("nested")
    st.checkpoints.append(
        CheckpointInfo(
            _s(e.checkpoint_id, 80), _s(e.label, 120), _s(e.commit, 64), e.at_seq, e.files, e.ts,
            [_s(f, 200) for f in changed[:CHANGED_FILES_KEPT]]
            if isinstance(changed, list) else None,
            [_s(n, 120) for n in nested[:20]] if isinstance(nested, list) else [],
            _diffstat(extra.get("diffstat")),
        )
    )


def _diffstat(value: Any) -> Diffstat | None:
    """The event's `diffstat`, if it has the shape the guard writes (else None: unknown)."""
    if not isinstance(value, dict):
        return None

    def count(key: str) -> int | None:
        n = value.get(key)
        return n if isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= MAX_NUMBER \
            else None

    files, added, modified, deleted = (count(k) for k in ("files", "added", "modified",
                                                          "deleted"))
    if files is None or added is None or modified is None or deleted is None:
        return None
    since = value.get("since")
    return Diffstat(_s(since, 80) if isinstance(since, str) else None,
                    files, added, modified, deleted, count("insertions"), count("deletions"))


def _escalation(st: SessionState, e: Any) -> None:
    st.loops.escalation(e.seq, e.kind, [s for s in e.evidence if isinstance(s, int)])
    st.escalations[e.escalation_id] = st.summary.pending.get(e.escalation_id) or e.model_dump(
        mode="json"
    )


def _decision_applied(st: SessionState, e: Any) -> None:
    out = st.outcomes.get(e.decision_id)
    if out is None:
        out = st.outcomes[e.decision_id] = DecisionOutcome(
            e.decision_id, e.action, e.escalation_id
        )
    out.state, out.detail = "applied", _s(e.outcome)
    out.answered = _s(e.escalation_id, 128) if e.escalation_id else None
    if e.action == "quiet":
        st.quiets = [*st.quiets, f"{_s(e.outcome, 160)} (from #{e.seq})"][-8:]


def _decision_ignored(st: SessionState, e: Any) -> None:
    out = st.outcomes.get(e.decision_id)
    if out is None:
        out = st.outcomes[e.decision_id] = DecisionOutcome(e.decision_id, "?", None)
    out.state, out.detail = "ignored", _s(e.reason)


def _memory(st: SessionState, e: Any) -> None:
    entries = getattr(e, "entries", None)
    call_id = getattr(e, "call_id", None)
    note = MemoryNote(e.seq, e.ts, _s(getattr(e, "kind", "?"), 20),
                      _s(call_id, 80) if isinstance(call_id, str) else None,
                      _s(getattr(e, "message", ""), 1200),
                      [_s(x, 20) for x in entries[:8]] if isinstance(entries, list) else [])
    st.memory = [*st.memory, note][-MEMORY_KEPT:]


_HANDLERS = {
    "session_start": _session_start,
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "usage": _usage,
    "detection": _detection,
    "limit": _limit,
    "verdict": _verdict,
    "checkpoint": _checkpoint,
    "escalation": _escalation,
    "decision_applied": _decision_applied,
    "decision_ignored": _decision_ignored,
    "memory": _memory,
}


@dataclass(slots=True)
class ModelChanges:
    """What one `apply` changed: sessions touched, and escalations newly pending."""

    sessions: set[str] = field(default_factory=set)
    new_escalations: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    appeared: list[str] = field(default_factory=list)
    vanished: list[str] = field(default_factory=list)


class QueueEntry(NamedTuple):
    """One pending escalation of the "Needs you" queue (or of its stale group)."""

    session_id: str
    escalation: dict[str, Any]


class DashboardModel:
    """Every session of one store, folded from its follower's batches."""

    def __init__(self, store: Store | Path | None = None, *, recordings: bool = False) -> None:
        self.store = as_store(store) if store is not None else None
        """History rows are read back through it (None: rows kept in memory); a path is a
        local root."""
        self.recordings = recordings
        """The store holds recordings: sessions are shown as recorded (their agents are long
        gone: never judged dead or idle)."""
        self.sessions: dict[str, SessionState] = {}
        self.silence_check_s = SILENCE_CHECK_S
        self._silence: dict[str, tuple[float | None, float, str | None]] = {}
        """Per session: the last hook event's time it was judged for, when (monotonic), and
        why it is unsupervised (None: it is not)."""
        self.totals = FleetTotals()
        """The queue's candidates and the root line's sums, kept as sessions change (each
        session `apply`, `preview` or `forget` touches is counted again)."""

    def apply(self, batches: Iterable[SessionBatch]) -> ModelChanges:
        """Fold batches in. A session whose events make folding fail is marked broken (shown as
        such, with the reason) and folds nothing more until its file starts over; the other
        sessions are not affected."""
        changes = ModelChanges()
        for batch in batches:
            try:
                self._apply_one(batch, changes)
            except Exception as exc:  # one bad session must not take the dashboard down
                state = self.sessions.get(batch.session_id)
                if state is not None:
                    state.summary.broken = _s(f"{type(exc).__name__}: {exc}", 200)
                    state.version += 1
                changes.sessions.add(batch.session_id)
        for sid in changes.sessions:
            state = self.sessions.get(sid)
            if state is not None:
                self.totals.count(sid, state)
        return changes

    def preview(self, summaries: Iterable[SessionSummary]) -> list[str]:
        """Rows from the store's kept summaries, for sessions not folded yet, so the sessions
        table shows them before every session's events are read (see `SessionState.preview`);
        returns the sessions added."""
        added = []
        for summary in summaries:
            sid = summary.session_id
            if sid in self.sessions:
                continue
            log = self.store.log(sid) if self.store is not None else None
            state = self.sessions[sid] = SessionState(sid, history=HistoryStore(log))
            state.summary = summary
            state.preview = True
            if summary.vanished:  # the store kept it, its events.jsonl is gone
                state.gone_what = "events.jsonl"
            self.totals.count(sid, state)
            added.append(sid)
        return added

    def _apply_one(self, batch: SessionBatch, changes: ModelChanges) -> None:
        sid = batch.session_id
        state = self.sessions.get(sid)
        if batch.gone or (batch.kind == "events" and batch.reset and batch.missing):
            # a removed events file (its folder kept) is the session gone, as a removed folder
            # is: shown as it was, marked vanished, not reset to an `empty` session
            if state is not None and not state.gone:
                state.summary.vanished = True
                state.gone_what = "folder" if batch.gone else "events.jsonl"
                state.version += 1
                changes.vanished.append(sid)
                changes.sessions.add(sid)
            return
        if state is None or state.gone:
            if state is None:
                log = self.store.log(sid) if self.store is not None else None
                state = self.sessions[sid] = SessionState(sid, history=HistoryStore(log))
                changes.appeared.append(sid)
            elif state.gone_what == "events.jsonl":
                if batch.kind != "events":  # still no events file: still gone
                    return
                state.reset_events()  # the file under its name is a new one, read from 0
            state.summary.vanished = False
        before = set(state.summary.pending)  # a preview's escalations are not news either
        if state.preview:  # the session's own fold from its first line replaces the preview
            state.summary = SessionSummary(sid)
            state.preview = False
        if batch.kind == "events":
            if batch.reset:
                state.reset_events()
                before = set()
            if state.summary.broken is None:
                state.apply_events(batch.events, batch.cursors, batch.bad_lines,
                                   "events.jsonl", batch.arrived)
        else:
            if batch.reset:
                state.version += 1
            state.apply_control(batch.events)
            if batch.bad_lines:
                state.apply_events((), (), batch.bad_lines, "control.jsonl")
        for eid, esc in state.summary.needs_you().items():  # a pause is announced by nobody
            if eid not in before:
                changes.new_escalations.append((sid, esc))
        changes.sessions.add(sid)

    def forget(self, session_id: str) -> None:
        """Drop a session removed on purpose (pruned): it leaves the table, where a folder
        that vanished otherwise stays, marked `vanished`."""
        self.sessions.pop(session_id, None)
        self._silence.pop(session_id, None)
        self.totals.drop(session_id)

    def status(self, session_id: str, now: float) -> str:
        """The session's status at `now` (`supervisor.store.summary.STATUSES`, or
        `unsupervised`: a running or idle agent whose hooks no longer reach the supervisor)."""
        st = self.sessions[session_id]
        status = st.summary.status(now, judge_liveness=not self.recordings)
        if status in ("running", "idle") and self.unsupervised(session_id, now) is not None:
            return "unsupervised"
        return status

    def timed(self, session_id: str) -> bool:
        """Whether the session's status may change with time alone, no new event needed: a
        live agent goes idle, dies or loses its hooks (never a recording, nor a session that
        ended, vanished or is broken)."""
        st = self.sessions[session_id]
        if self.recordings or st.gone:
            return False
        return st.summary.status(0.0, judge_liveness=False) in ("running", "waiting", "paused")

    def unsupervised(self, session_id: str, now: float) -> str | None:
        """Why the session's agent works unsupervised (`supervisor.store.silence`, the same
        judgement as `sessions --json`, the web view and `notify watch`), or None. Throttled
        to one `stat` of the transcript per `silence_check_s` per session."""
        st = self.sessions[session_id]
        if self.recordings or st.gone:
            return None
        seen = st.summary.last_seen_ts
        tick = time.monotonic()
        cached = self._silence.get(session_id)
        if cached is not None and cached[0] == seen and tick - cached[1] < self.silence_check_s:
            return cached[2]
        reason = unsupervised(st.summary, now, hooks=broken_project_hook)
        self._silence[session_id] = (seen, tick, reason)
        return reason

    def liveness(self, session_id: str, now: float) -> Liveness:
        """Whether the session's agent is still there (recordings: as recorded)."""
        summary = self.sessions[session_id].summary
        if self.recordings and summary.end_status is None:
            return Liveness(None, "a recording")
        return summary.liveness(now)

    def day_cost(self, now: float) -> tuple[float, int]:
        """(the known cost of today's usage over every session, the sessions that spent):
        kept as sessions change (`FleetTotals`), not summed at each call."""
        return self.totals.day_cost(day_of(now))

    def loop_cost(self) -> tuple[float, int, int]:
        """(the known cost spent inside loops over every session, the sessions whose loops
        spent, those of them with some cost unknown): what the fleet's loops burned."""
        t = self.totals
        return max(0.0, t.loop_cost), t.loopers, t.loop_unknown

    def queue(self, now: float) -> list[QueueEntry]:
        """Pending escalations that an answer can still reach, oldest first: their agents are
        not dead (see `stale`). An operator's pause is not among them: it is shown `paused`."""
        return self._pending(now, stale=False)

    def stale(self, now: float) -> list[QueueEntry]:
        """Pending escalations whose agent is dead: no answer can apply; oldest first."""
        return self._pending(now, stale=True)

    def _pending(self, now: float, *, stale: bool) -> list[QueueEntry]:
        items: list[QueueEntry] = []
        for sid in self.totals.waiting:  # only sessions with something pending: not all
            st = self.sessions[sid]
            waiting = st.summary.needs_you()
            life = self.liveness(sid, now)
            if (life.alive is False) != stale:
                continue
            items.extend(QueueEntry(sid, esc) for esc in waiting.values())
        items.sort(key=lambda item: (item.escalation.get("ts") or 0.0, item.session_id))
        return items
