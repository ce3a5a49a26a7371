"""One event in full, with what refers to it: the detail view's data, without Textual.

The history keeps one short summary per event; the detail view reads the whole event back
through the store's log, and for a tool call, its result or its verdict gathers the other two by
their call id (found by the log among the rows around it), plus the detections and escalations
whose evidence names any of them. Reading may take a while on a big file or a remote store: the
screen calls `load_detail` from a worker thread (the history's reads are thread-safe).
Everything here is untrusted agent data: the screen cleans it before showing it.
"""

import json
from dataclasses import dataclass, field
from typing import Any

from supervisor.tui.history import HistoryStore
from supervisor.tui.model import DetectionInfo

RELATED_ROWS = 5000
"""Rows searched on each side of an event for the other events of its call."""
EVIDENCE_ROWS = 400
"""Rows searched after an evidence call for its result (before an evidence result: its call)."""
EXCERPT_LINES = 2
"""Lines of an output shown beside an evidence step: for a failure, the line naming its error and
the last line (`excerpt`)."""
_CALL_TYPES = ("tool_call", "tool_result", "verdict")


@dataclass(slots=True)
class Related:
    """Another event of the same call, or one that names this event as evidence."""

    index: int
    event: dict[str, Any]


@dataclass(slots=True)
class EventDetail:
    """An event in full: `event` (None with `error` when its line cannot be read)."""

    index: int
    seq: int
    type: str
    event: dict[str, Any] | None = None
    error: str | None = None
    call: Related | None = None
    result: Related | None = None
    verdicts: list[Related] = field(default_factory=list)
    detections: list[DetectionInfo] = field(default_factory=list)
    """Detections whose evidence names this event (or its call or result), or that it is."""
    escalations: list[dict[str, Any]] = field(default_factory=list)
    evidence: list["EvidenceStep"] = field(default_factory=list)
    """For a detection or an escalation: each evidence step with its call and result."""

    @property
    def seqs(self) -> set[int]:
        """The seqs of this event and of its call's other events."""
        out = {self.seq}
        for rel in (self.call, self.result, *self.verdicts):
            if rel is not None:
                out.add(int(rel.event.get("seq", -1)))
        return out


def load_detail(store: HistoryStore, index: int, detections: list[DetectionInfo],
                escalations: list[dict[str, Any]]) -> EventDetail:
    """Read row `index` of `store` in full, with its call's events and what names them.

    `detections` and `escalations` are the session's (escalations as event dicts)."""
    detail = EventDetail(index, store.seq_of(index), store.type_of(index))
    event = store.event(index)
    if isinstance(event, str):
        detail.error = event
        return detail
    detail.event = event
    call_id = event.get("call_id")
    if detail.type in _CALL_TYPES and isinstance(call_id, str) and call_id:
        _gather_call(store, index, call_id, detail)
    if isinstance(event.get("evidence"), list):
        detail.evidence = evidence_steps(store, event["evidence"])
    seqs = detail.seqs
    detail.detections = [d for d in detections if d.seq in seqs or seqs & set(d.evidence)]
    detail.escalations = [e for e in escalations
                          if e.get("seq") in seqs or seqs & set(e.get("evidence") or ())]
    return detail


def _gather_call(store: HistoryStore, index: int, call_id: str, detail: EventDetail) -> None:
    """Fill in the call, result and verdicts of `call_id` nearest to row `index`."""
    needle = json.dumps(call_id, ensure_ascii=False)
    lo, hi = max(0, index - RELATED_ROWS), min(len(store), index + RELATED_ROWS + 1)
    calls: list[Related] = []
    results: list[Related] = []
    for i, event in store.events_mentioning(needle, lo, hi):
        if event.get("call_id") != call_id:
            continue
        kind = event.get("type")
        if kind == "tool_call":
            calls.append(Related(i, event))
        elif kind == "tool_result":
            results.append(Related(i, event))
        elif kind == "verdict":
            detail.verdicts.append(Related(i, event))
    # a call id may be reused by a long session: take the call at or before this row, and
    # the result and verdicts between it and the next call of the same id
    before = [c for c in calls if c.index <= index] or calls[:1]
    detail.call = before[-1] if before else None
    start = detail.call.index if detail.call else lo
    later = [c.index for c in calls if c.index > start]
    stop = later[0] if later else hi
    if detail.type == "tool_result":
        detail.result = Related(index, detail.event or {})
    else:
        detail.result = next((r for r in results if start <= r.index < stop), None)
    detail.verdicts = [v for v in detail.verdicts if start <= v.index < stop]


@dataclass(slots=True)
class EvidenceStep:
    """One step an engine finding names (`#seq`), with the call and the result it belongs to,
    so the operator sees what failed and how (the output that made it "the same error").

    `call`/`result` are (seq, summary) of the call's two halves when found; `ok` and `excerpt`
    (the output's error line and last line, uncleaned: `excerpt`) describe the result."""

    seq: int
    type: str
    summary: str
    call: tuple[int, str] | None = None
    result: tuple[int, str] | None = None
    ok: bool | None = None
    error: str | None = None
    excerpt: str = ""


def evidence_steps(store: HistoryStore, seqs: list[Any], limit: int = 20
                   ) -> list[EvidenceStep]:
    """The first `limit` evidence steps of `seqs`, each paired with its call or its result
    (read back from the log: call it from a worker thread)."""
    steps = []
    for seq in [s for s in seqs if isinstance(s, int) and not isinstance(s, bool)][:limit]:
        index = store.index_of_seq(seq)
        if index is None:
            steps.append(EvidenceStep(seq, "?", "(not loaded)"))
            continue
        step = EvidenceStep(seq, store.type_of(index), store.text(index))
        event = store.event(index)
        call_id = event.get("call_id") if isinstance(event, dict) else None
        if isinstance(event, dict) and isinstance(call_id, str) and call_id \
                and step.type in ("tool_call", "tool_result"):
            _pair(store, index, call_id, step, event)
        steps.append(step)
    return steps


def _pair(store: HistoryStore, index: int, call_id: str, step: EvidenceStep,
          event: dict[str, Any]) -> None:
    needle = json.dumps(call_id, ensure_ascii=False)
    if step.type == "tool_call":
        step.call = (step.seq, step.summary)
        found = [(i, e) for i, e in store.events_mentioning(needle, index + 1,
                                                            index + 1 + EVIDENCE_ROWS)
                 if e.get("call_id") == call_id and e.get("type") in ("tool_result",
                                                                       "tool_call")]
        if not found or found[0][1].get("type") != "tool_result":
            return  # no result (yet), or the id was used again first
        result_index, result = found[0]
    else:
        result_index, result = index, event
        calls = [i for i, e in store.events_mentioning(needle, max(0, index - EVIDENCE_ROWS),
                                                        index)
                 if e.get("call_id") == call_id and e.get("type") == "tool_call"]
        if calls:
            step.call = (store.seq_of(calls[-1]), store.text(calls[-1]))
    step.result = (store.seq_of(result_index), store.text(result_index))
    step.ok = bool(result.get("ok"))
    error = result.get("error")
    step.error = str(error) if error not in (None, "") else None
    output = str(result.get("output") or "")
    lines = [line for line in output.splitlines() if line.strip()]
    step.excerpt = "\n".join(excerpt(step.ok, step.error, output, lines))


def excerpt(ok: bool, error: str | None, output: str, lines: list[str]) -> list[str]:
    """What to show of a result beside its step: for a failure, the line naming its error (the
    engine's own reading, `engine.failures.error_line`: the one "the same error" is about,
    often far above the end of a long output), then the output's last line; otherwise (or
    when no line names an error) the last lines."""
    from supervisor.engine.failures import error_line

    named = error_line(ok, error, output) if not ok else ""
    if not named or named not in output:
        return lines[-EXCERPT_LINES:]
    first = next(line for line in lines if named in line)
    tail = [line for line in lines[-(EXCERPT_LINES - 1):] if line != first]
    return [first, *tail][:EXCERPT_LINES]
