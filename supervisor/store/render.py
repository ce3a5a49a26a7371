"""One readable, terminal-safe line per event, for `supervisor tail` and plain-text logs.

Every event type has its own summary (what an operator wants to read first); unknown types show
their fields as compact JSON. Everything is passed through `safetext.clean` at the end, so agent
text can never move the cursor, retitle the window or reach the clipboard.
"""

import json
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from supervisor.protocol.bad_line import BadLine
from supervisor.safetext import clean
from supervisor.store.voice import describe_unsealed

if TYPE_CHECKING:
    from supervisor.protocol.models import Event  # pydantic: not before the first screen

_WIDTH = 200


def clock(ts: float | None, fmt: str = "%H:%M:%S") -> str:
    """Local time of `ts`, or dashes when it is missing or outside what the platform can show."""
    if not ts:
        return "--:--:--"
    try:
        return time.strftime(fmt, time.localtime(ts))
    except (OverflowError, OSError, ValueError):
        return "??:??:??"


def ago(ts: float | None, now: float) -> str:
    """`12s ago`, `5m ago`, `3h ago`, `2d ago` (or `-`): the age of `ts` at time `now`."""
    if ts is None:
        return "-"
    delta = max(0.0, now - ts)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if delta >= size:
            return f"{delta / size:.0f}{unit} ago"
    return f"{delta:.0f}s ago"


_AGO_UNITS = ((86400, math.inf), (3600, 86400), (60, 3600), (1, 60))
"""`ago`'s units, each with the age at which the next larger one takes over."""


def ago_changes_at(ts: float | None, now: float) -> float:
    """The earliest time after `now` at which `ago(ts, ·)` may read differently (inf: never):
    the shown count goes up at the next half unit (or just after it: `ago` rounds half to
    even), and the unit changes at 1 m, 1 h and 1 d. A table keeps a row that shows `3d ago`
    for hours without looking at it again."""
    if ts is None:
        return math.inf
    delta = max(0.0, now - ts)
    size, upper = next(unit for unit in _AGO_UNITS if delta >= unit[0] or unit[0] == 1)
    shown = float(f"{delta / size:.0f}")  # the count `ago` shows now
    return ts + min((shown + 0.5) * size, upper)


def describe_event(event: "Event", width: int | None = _WIDTH) -> str:
    """`seq time type summary` on one line, with every agent-provided string cleaned (cut at
    `width` characters; None: not cut)."""
    render = _RENDERERS.get(event.type, _generic)
    try:
        summary = render(event)
    except (AttributeError, KeyError, TypeError, ValueError):  # an event built by hand
        summary = _generic(event)
    return clean(f"{event.seq:>6} {clock(event.ts)} {event.type:<16} {summary}".rstrip(),
                 keep_newlines=False, limit=width)


def describe_full(event: "Event") -> list[str]:
    """The event in full: its `describe_event` line, uncut, then what that line shortens (a
    call's arguments as indented JSON, a result's whole output, a message's whole text, any
    other event's fields), indented by four spaces. Agent text is cleaned, newlines kept."""
    lines = [describe_event(event, width=None)]
    data = event.model_dump(mode="json", exclude={"v", "seq", "ts", "type"})
    if event.type == "tool_call":
        body = json.dumps(data.get("args"), indent=2, ensure_ascii=False, default=str)
    elif event.type == "tool_result":
        body = data.get("output") or ""
        kept = len(body.encode("utf-8", "replace"))
        if isinstance(data.get("output_bytes"), int) and data["output_bytes"] > kept:
            body += (f"\n[the log keeps the first {kept:,} of {data['output_bytes']:,} bytes; "
                     f"hash of the whole output {data.get('output_hash')}]")
    elif event.type == "message":
        body = data.get("text") or ""
    elif event.type == "heartbeat":
        return lines
    else:
        body = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    lines += ["    " + line for line in clean(str(body)).split("\n")]
    return lines


def heartbeat_run(count: int, first_ts: float, last_ts: float) -> str:
    """The one row a run of heartbeats is folded into: `… 42 heartbeats, 3 min`."""
    from supervisor.store.units import duration

    return f"… {count} heartbeats, {duration(max(0.0, last_ts - first_ts))}"


def describe_bad_line(bad: BadLine) -> str:
    """The offset, the reason and the start of the raw bytes (escaped) of a bad line."""
    size = f" ({bad.size} bytes)" if bad.size else ""
    return clean(f"   BAD @{bad.offset} {bad.reason}{size}: {bad.preview(60)!r}",
                 keep_newlines=False)


def _compact(value: object, limit: int = 400) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)[:limit]


def _generic(e: "Event") -> str:
    return _compact(e.model_dump(mode="json", exclude={"v", "seq", "ts", "type"}))


def _opt(label: str, value: object) -> str:
    return f" {label} {value}" if value not in (None, "") else ""


def _memory(e: Any) -> str:
    call = getattr(e, "call_id", None)
    return f"{getattr(e, 'kind', '?')}{f' [{call}]' if call else ''} {getattr(e, 'message', '')}"


def _session_start(e: Any) -> str:
    beat = f", heartbeat every {e.heartbeat_s:g}s" if e.heartbeat_s else ""
    return (f"agent {e.agent}{_opt('task', repr(e.task) if e.task else None)}"
            f"{_opt('in', e.cwd)}{_opt('pid', e.pid)}{beat}")


def _tool_result(e: Any) -> str:
    state = "ok" if e.ok else f"ERROR {e.error or ''}".rstrip()
    timing = f", {e.duration_ms:g} ms" if e.duration_ms is not None else ""
    return f"{state} [{e.call_id}] {e.output[:200]!r} ({e.output_bytes} bytes{timing})"


def _usage(e: Any) -> str:
    cost = f", ${e.cost_usd:.4f}" if e.cost_usd is not None else ""
    return f"{e.input_tokens} in / {e.output_tokens} out tokens{cost}"


def _evidence(seqs: list[int]) -> str:
    if not seqs:
        return ""
    shown = ",".join(str(s) for s in seqs[:8]) + ("…" if len(seqs) > 8 else "")
    return f" (evidence seq {shown})"


def _changes(e: Any) -> str:
    """` (+1 ~2 -0 since cp3)`: what a checkpoint changed since the previous one (its
    `diffstat`), when it says."""
    stat = (e.__pydantic_extra__ or {}).get("diffstat")
    if not isinstance(stat, dict):
        return ""
    counts = [stat.get(k) for k in ("added", "modified", "deleted")]
    if not all(isinstance(n, int) for n in counts):
        return ""
    since = stat.get("since")
    if not since:
        return f" (first: {counts[0]} files)"
    return f" (+{counts[0]} ~{counts[1]} -{counts[2]} since {since})"


def _escalation(e: Any) -> str:
    kind = f" [{e.kind}]" if e.kind else ""
    deadline = f", fallback {e.fallback} at {clock(e.deadline_ts)}" if e.deadline_ts else ""
    return (f"{e.escalation_id} level {e.level}{kind}: {e.reason}; options "
            f"{'/'.join(e.options) or '-'}{deadline or f', fallback {e.fallback}'}"
            f"{_evidence(e.evidence)}")


def _verdict(e: Any) -> str:
    text = e.message or e.reason or ""
    return f"{e.action} (level {e.level}) [{e.call_id}] {text}".rstrip()


def _plan_step(plan: Any) -> str:
    """` (step 1 of 3)` for a task that is a step of an operator's plan (docs/plans.md)."""
    if isinstance(plan, dict) and isinstance(plan.get("step"), int) and \
            isinstance(plan.get("of"), int):
        return f" (step {plan['step']} of {plan['of']})"
    return ""


def _decision(e: Any) -> str:
    target = f" {e.escalation_id}" if e.escalation_id else " (no escalation)"
    detail = _opt("text", repr(e.text) if e.text else None) + _opt("checkpoint", e.checkpoint_id)
    tasks = getattr(e, "tasks", None)  # a plan's sub-tasks (docs/plans.md)
    if isinstance(tasks, list):
        detail += _opt("tasks", " | ".join(repr(t) for t in tasks))
    return f"{e.operator}: {e.action}{target} [{e.decision_id}]{detail}"


def rollback_summary(checkpoint_id: object, restored_files: object, safety: object) -> str:
    """A `rollback` event in words, for `tail` and the dashboard's history alike.
    `restored_files` counts the files put back and those removed (created since): not
    "restored" alone, which the CLI's own line tells apart."""
    files = f"{restored_files} files put back as they were" if restored_files != 1 \
        else "1 file put back as it was"
    return f"to {checkpoint_id}: {files} (safety checkpoint {safety})"


FILES_SHOWN = 8


def call_files(args: object, files_before: object) -> str:
    """`on a.py, b.py, c.py: ` before a call's arguments, for `tail` and the dashboard's
    history alike: the files it may write (its `files_before`) that no argument names as its
    value, such as every file of a patch run as a shell line (Codex's `apply_patch <<'EOF'`,
    whose headers sit deep in a heredoc a cut line never reaches); "" when its arguments name
    them all (`Edit`'s `file_path`) or it records none. Raw: the caller cleans it."""
    if not isinstance(files_before, dict) or not files_before:
        return ""
    named = {v for v in args.values() if isinstance(v, str)} if isinstance(args, dict) else set()
    paths = [str(p) for p in files_before if p not in named]
    if not paths:
        return ""
    more = f" and {len(paths) - FILES_SHOWN} more" if len(paths) > FILES_SHOWN else ""
    return f"on {', '.join(paths[:FILES_SHOWN])}{more}: "


def _tool_call(e: Any) -> str:
    return (f"{e.tool} {call_files(e.args, getattr(e, 'files_before', None))}"
            f"{_compact(e.args)} [{e.call_id}]"
            + (f" refused by the {e.refused_by}" if e.refused_by else ""))


def _rollback(e: Any) -> str:
    return rollback_summary(e.checkpoint_id, e.restored_files, e.safety_checkpoint_id)


_RENDERERS: dict[str, Callable[[Any], str]] = {
    "session_start": _session_start,
    "task_start": lambda e: f"{e.task_id}: {e.title}{_plan_step(getattr(e, 'plan', None))}",
    "task_end": lambda e: f"{e.task_id} {e.status}",
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "message": lambda e: f"{e.role}: {e.text}",
    "usage": _usage,
    "detection": lambda e: (f"{e.detector} level {e.level}: {e.message} "
                            f"<{e.signature}>{_evidence(e.evidence)}"),
    "verdict": _verdict,
    "limit": lambda e: f"{e.name} {e.value:g} of {e.limit:g} -> {e.action}",
    "checkpoint": lambda e: (f"{e.checkpoint_id} {e.label!r} commit {e.commit[:12]} "
                             f"at seq {e.at_seq}, {e.files} files{_changes(e)}"),
    "escalation": _escalation,
    "decision_applied": lambda e: (f"{e.action} [{e.decision_id}] for "
                                   f"{e.escalation_id or '(no escalation)'}: {e.outcome}"),
    "decision_ignored": lambda e: f"[{e.decision_id}] {e.reason}",
    "rollback": _rollback,
    "heartbeat": lambda e: "",
    "hint": lambda e: f"{e.kind} [{e.call_id}] {e.message}",
    "disobeyed": lambda e: f"[{e.call_id}] ran although refused ({e.refused}): {e.message}",
    "memory": _memory,
    "notification": lambda e: (f"{e.escalation_id}: {e.outcome} via {e.service} "
                               f"(attempt {e.attempt}){_opt(':', e.reason)}"
                               ).replace(" :", ":"),
    "session_end": lambda e: f"{e.status}{_opt(':', e.reason)}".replace(" :", ":"),
    "decision": _decision,
    "unsealed": lambda e: describe_unsealed(getattr(e, "line_type", None),
                                            getattr(e, "text", None)),
}
