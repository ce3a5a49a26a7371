"""The steps a saved state missed, done again from the event log.

A session's state may be behind its event log: the resident hook server keeps live sessions'
states in memory and saves them now and then (docs/hooks.md, "The resident server"), and any
step may be killed after it wrote its events and before it saved. The log is the record, so a
state loaded behind it is brought up to date from the events past its `log_offset`
(`SessionJournal._catch_up`) by `redo`: the engine sees them as it saw them live (its tool calls
are checked again, so the repeat counts, limits and detectors' memories come out the same), and
the guard's own counts follow (tool calls made, calls in flight, calls since the last
checkpoint, the last `seq`, the loop-cost marks, calls refused and released, the open task).

The file memory (`edit_guidance`) learns of their calls, so a failed edit whose result comes
after still gets its hint. Not redone: the file versions their results left (read from the
disk as it is then, no longer as it was) and the failure memory's learning (`guard.memory`);
both only ever add to a hint. Decisions, escalations, refusals, a plan's steps and the end
are saved at once by the step that makes them, so a tail normally holds none; when a killed
step left one, its facts come from `supervisor.guard.recovery` as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from supervisor.guard import loop_cost
from supervisor.guard.edit_guidance import EditGuidance
from supervisor.guard.state import CALLS_KEPT, REFUSALS_KEPT

if TYPE_CHECKING:
    from supervisor.guard.journal import SessionJournal

ENGINE_SEES = frozenset({"session_start", "tool_call", "tool_result", "message", "usage",
                         "escalation", "task_start", "task_end", "checkpoint", "rollback",
                         "decision_applied"})
"""The events the live guard shows its engine (`record`, `observe`); the others (verdicts,
detections, hints...) it only writes."""
_RUNS = ("allow", "nudge")


def redo(journal: SessionJournal, events: list[dict[str, Any]], decisions: set[str]) -> None:
    """Apply `events` (the log past the state, in order) to `journal`'s state and engine;
    of the `decision_applied` among them, only those in `decisions` (not applied before)."""
    state, engine = journal.state, journal.engine
    edits = EditGuidance(state, journal.files.reads, journal.cwd)
    auto_checkpoint = False
    for event in events:
        kind = event.get("type")
        seq = event.get("seq")
        if isinstance(seq, int) and not isinstance(seq, bool) and seq > state.last_seq:
            state.last_seq = seq
        if kind == "decision_applied" and event.get("decision_id") not in decisions:
            continue
        if kind in ENGINE_SEES:
            ts = event.get("ts")
            engine.observe(event, ts if isinstance(ts, int | float) else journal.clock())
        call_id = event.get("call_id")
        if kind == "tool_call" and isinstance(call_id, str):
            state.actions += 1
            if not event.get("refused_by"):
                if auto_checkpoint:  # the cadence's checkpoint came after the count
                    auto_checkpoint = False
                else:
                    state.since_checkpoint += 1
                state.calls[call_id] = seq if isinstance(seq, int) else 0
                while len(state.calls) > CALLS_KEPT:
                    del state.calls[next(iter(state.calls))]
                tool, args = event.get("tool"), event.get("args")
                if isinstance(tool, str) and isinstance(args, dict):
                    edits.on_call(call_id, state.calls[call_id], tool, engine.facts(tool, args))
        elif kind == "tool_result" and isinstance(call_id, str):
            state.calls.pop(call_id, None)
            edits.forget(call_id)
            if state.refused:
                state.refused.pop(call_id, None)
        elif kind == "verdict" and isinstance(call_id, str):
            _settled(journal, call_id, event.get("action"))
        elif kind == "task_start" and isinstance(event.get("task_id"), str):
            title = event.get("title")
            state.task = {"task_id": event["task_id"],
                          "title": title if isinstance(title, str) else ""}
        elif kind == "task_end" and isinstance(event.get("task_id"), str):
            status = event.get("status")
            state.plan_step_ended(event["task_id"], status if isinstance(status, str) else "")
            if state.task is not None and state.task["task_id"] == event["task_id"]:
                state.task = None
        elif kind == "usage":
            tokens = sum(v for v in (event.get("input_tokens"), event.get("output_tokens"))
                         if isinstance(v, int) and not isinstance(v, bool))
            cost = event.get("cost_usd")
            loop_cost.record(state, state.last_seq, tokens,
                             float(cost) if isinstance(cost, int | float) else None)
        if kind == "checkpoint":  # the cadence's is for the next call that is not refused:
            state.since_checkpoint = 0  # taken just before it, or ahead of it, between calls
            label = event.get("label")
            auto_checkpoint = isinstance(label, str) and label.startswith("auto:")


def _settled(journal: SessionJournal, call_id: str, action: Any) -> None:
    """A verdict: its call refused, or released (`gate.CallGate.settle`)."""
    state = journal.state
    refused = state.refused or {}
    refused.pop(call_id, None)
    if isinstance(action, str) and action not in _RUNS:
        refused[call_id] = action
        while len(refused) > REFUSALS_KEPT:
            del refused[next(iter(refused))]
    state.refused = refused or None
