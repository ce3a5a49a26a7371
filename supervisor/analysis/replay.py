"""Replay one recorded run through the engine, as the guard would have, and report the result.

The replay assumes the agent went on as recorded: a call the engine would have blocked still
shows its recorded result, so later findings describe what the engine would have kept saying;
in a run recorded without a guard (no `escalation` events), each escalation is taken as
answered at once with "go on", so a second loop later in the run is still found.
The recorded run's own `detection`/`verdict`/`limit`/`escalation` events are ignored (they are
recomputed); recorded `decision_applied` events apply their recorded effect when the engine
observes them (`supervisor.engine.decisions`), so an approved loop replays as approved and the
replay reaches the state the live engine had.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from supervisor.engine import Engine, Policy
from supervisor.engine.detectors import LOOP_DETECTORS
from supervisor.engine.types import Finding
from supervisor.protocol import charge
from supervisor.protocol.names import MEMORY

FIRST_ACTIONS = ("nudge", "block", "escalate", "stop")
"""The reactions `first` reports, in rising order (`pause` is reported as `escalate`)."""
_RECOMPUTED = frozenset({"detection", "verdict", "limit", "decision_ignored"})
"""Events the replay recomputes rather than reads. An `escalation` is read: the engine learns from
it that the agent waits for an operator (the live guard tells its engine the same), so working
time (`duration_s`) replays as it was counted live; it yields no finding of its own."""


@dataclass(slots=True)
class ReportFinding:
    """One finding of a replay, at the 0-based tool-call `step` and the event `seq`."""

    step: int
    seq: int
    detector: str
    level: int
    action: str
    message: str
    signature: str = ""
    evidence: list[int] = field(default_factory=list)
    confidence: str | None = None
    """How much evidence it rests on (`strong`, `moderate`, `weak`); None for a skip or a
    hard limit."""
    basis: str = ""

    def to_json(self) -> dict[str, Any]:
        """The `findings[]` item of `supervisor analyze --json` (these keys; `confidence` and
        `basis` for loop findings)."""
        out: dict[str, Any] = {"step": self.step, "seq": self.seq, "detector": self.detector,
                               "level": self.level, "action": self.action,
                               "message": self.message}
        if self.confidence:
            out["confidence"], out["basis"] = self.confidence, self.basis
        return out


@dataclass(slots=True)
class RunReport:
    """What the engine would have done on one run.

    `steps`: tool calls; `findings`: every finding in order; `first`: the earliest step of each
    reaction (nudge, block, escalate, stop; None if never); `cost_usd`/`tokens`: totals from
    `usage` events (cost None when no usage event carried one); `loop_steps`: tool calls that
    were part of a detected loop (evidence of a loop detector, or refused/paused because of
    one); `loop_cost_usd`: the cost of the model answers that asked for those tool calls (each
    call is charged the last `usage` before it, each answer once: `protocol.charge`, the rule
    of the guard's `spent` and `supervisor stats`), None without cost data; `signatures`: per
    loop signature, the detector, how many steps it covered and the first one.
    """

    session: str
    source: str
    steps: int = 0
    findings: list[ReportFinding] = field(default_factory=list)
    first: dict[str, int | None] = field(
        default_factory=lambda: dict.fromkeys(FIRST_ACTIONS)
    )
    cost_usd: float | None = None
    tokens: int = 0
    loop_steps: int = 0
    loop_cost_usd: float | None = None
    signatures: list[dict[str, Any]] = field(default_factory=list)
    memory: list[dict[str, Any]] = field(default_factory=list)
    """What the failure memory told the agent in the recorded session (docs/memory.md): its
    `memory` events of kind `warned` and `pitfalls` (`seq`, `kind`, `call_id`), as recorded:
    memory is not recomputed by a replay (it depends on the project's other sessions)."""
    stopped_by: dict[str, Any] | None = None
    """The hard limit that stopped the recorded session (`name`, `value`, `limit`, `seq`), as
    recorded: a replay under another policy may not reach it, and an operator reading "no loop
    found" must still learn why the session ended."""

    def to_json(self) -> dict[str, Any]:
        """The object `supervisor analyze --json` prints for this run (exactly the issue's keys)."""
        return {
            "session": self.session, "source": self.source, "steps": self.steps,
            "findings": [f.to_json() for f in self.findings], "first": dict(self.first),
        }

    def to_dict(self) -> dict[str, Any]:
        """Everything, the extra totals included (for summaries over many runs)."""
        return {
            **self.to_json(), "cost_usd": self.cost_usd, "tokens": self.tokens,
            "loop_steps": self.loop_steps, "loop_cost_usd": self.loop_cost_usd,
            "signatures": [dict(s) for s in self.signatures],
            "memory": [dict(m) for m in self.memory],
            "stopped_by": dict(self.stopped_by) if self.stopped_by else None,
        }

    @property
    def alarmed(self) -> bool:
        """True when the engine reacted at all (any nudge or stronger)."""
        return any(v is not None for v in self.first.values())


def _first_key(action: str) -> str | None:
    if action == "pause":
        return "escalate"
    return action if action in FIRST_ACTIONS else None


def analyze_events(events: Iterable[dict[str, Any]], policy: Policy, *, session: str,
                   source: str, engine: Engine | None = None) -> RunReport:
    """Replay `events` (protocol dicts, in file order) through a fresh engine (or `engine`,
    fresh under `policy`, which the caller may inspect afterwards)."""
    engine = engine if engine is not None else Engine(policy)
    events = [e for e in events if isinstance(e, dict)]
    # A run recorded without a guard (another framework's) has no operator: each escalation
    # is taken as answered at once with "go on" (no extra repeats), so the loops that follow
    # in the same run are still found; a recorded session replays its own decisions.
    answer_escalations = not any(e.get("type") == "escalation" for e in events)
    report = RunReport(session=session, source=source)
    step_of_seq: dict[int, int] = {}
    call_at: list[int] = []
    """Each step's place in `events` (an imported run may number nothing)."""
    usage_at: list[int] = []
    usage_cost: list[float] = []
    usage_answer: list[str | None] = []
    """Each usage's `answer` (the parts of one answer are charged together: `charge.parts`)."""
    loop_steps: set[int] = set()
    sigs: dict[tuple[str, str], dict[str, Any]] = {}
    saw_cost = False
    now = 0.0

    def record(found: list[Finding], seq: int, default_step: int) -> None:
        for f in found:
            step = f.step if f.step >= 0 else default_step
            report.findings.append(ReportFinding(
                step, seq, f.detector, f.level, "escalate" if f.action == "pause" else f.action,
                f.message, f.signature, list(f.evidence), f.confidence, f.basis))
            key = _first_key(f.action)
            if key and report.first[key] is None:
                report.first[key] = step
            if f.detector in LOOP_DETECTORS:
                covered = {step_of_seq[s] for s in f.evidence if s in step_of_seq}
                if f.level >= 2 or f.detector != "no_progress":
                    covered.add(step)
                loop_steps.update(covered)
                entry = sigs.setdefault((f.detector, f.signature), {
                    "signature": f.signature, "detector": f.detector, "first": step,
                    "steps": set()})
                entry["steps"].update(covered)

    for place, event in enumerate(events):
        kind = event.get("type")
        ts = event.get("ts")
        if isinstance(ts, int | float) and not isinstance(ts, bool):
            now = max(now, float(ts))
        seq = event.get("seq")
        seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
        if kind == "tool_call" and event.get("refused_by"):
            # refused by an operator command before it ran: an attempt, never judged
            if seq:
                step_of_seq[seq] = report.steps
            call_at.append(place)
            report.steps += 1
            engine.observe(event, now)
        elif kind == "tool_call":
            step = report.steps
            report.steps += 1
            if seq:
                step_of_seq[seq] = step
            call_at.append(place)
            # the engine keys its pending calls by the text of the id (an imported run may
            # number its calls): the same text here, so "go on" finds the paused call
            call_id = str(event.get("call_id") or f"replay-{step}")
            call = {"call_id": call_id, "tool": event.get("tool"), "args": event.get("args"),
                    "seq": seq, "batch": event.get("batch")}
            check = engine.check(call, now)
            if check.action == "pause" and answer_escalations:
                engine.go_on(call_id, now)
            found = list(check.findings)
            for hit in check.limits:
                found.append(Finding(f"limit:{hit.name}", 4 if hit.action == "stop" else 3,
                                     f"limit:{hit.name}", [seq] if seq else [],
                                     check.message or "", hit.action, step))
            record(found, seq, step)
            engine.observe({**event, "call_id": call_id}, now)
        elif kind in _RECOMPUTED:
            if kind == "limit" and event.get("action") == "stop" and report.stopped_by is None:
                report.stopped_by = {"name": str(event.get("name")), "value": event.get("value"),
                                     "limit": event.get("limit"), "seq": seq}
            continue

        else:
            if kind == "tool_result":
                cid = event.get("call_id")
                pending = engine.st.pending.get(str(cid)) if cid is not None else None
                if pending is not None and seq:
                    step_of_seq[seq] = pending["index"]
            elif kind == MEMORY and event.get("kind") in ("warned", "pitfalls"):
                told = event.get("call_id")
                report.memory.append({"seq": seq, "kind": str(event.get("kind")),
                                      "call_id": told if isinstance(told, str) else None})
            elif kind == "usage":
                report.tokens += _int(event.get("input_tokens")) + _int(event.get("output_tokens"))
                cost = event.get("cost_usd")
                usage_at.append(place)
                named = event.get("answer")
                usage_answer.append(named if isinstance(named, str) else None)
                usage_cost.append(0.0)
                if isinstance(cost, int | float) and not isinstance(cost, bool):
                    saw_cost = True
                    usage_cost[-1] = float(cost)
                    report.cost_usd = (report.cost_usd or 0.0) + float(cost)
            record(engine.observe(event, now), seq, max(report.steps - 1, 0))
    report.loop_steps = len(loop_steps)
    if saw_cost:
        answers = {part for s in loop_steps if s < len(call_at)  # (a finding before any
                   for part in charge.parts(  # call names step 0), every part of an answer
                       usage_answer, charge.answer_of(usage_at, call_at[s]))}
        report.loop_cost_usd = round(sum(usage_cost[a] for a in answers), 6)
        report.cost_usd = round(report.cost_usd or 0.0, 6)
    report.signatures = [
        {"signature": e["signature"], "detector": e["detector"], "first": e["first"],
         "steps": len(e["steps"])}
        for e in sigs.values()
    ]
    return report


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
