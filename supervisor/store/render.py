"""One readable, terminal-safe line per event, for `supervisor tail` and plain-text logs.

Every event type has its own summary (what an operator wants to read first); unknown types show
their fields as compact JSON. Everything is passed through `safetext.clean` at the end, so agent
text can never move the cursor, retitle the window or reach the clipboard.
"""

import json
import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from supervisor.protocol.bad_line import BadLine
from supervisor.safetext import clean
from supervisor.store.units import files
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
    said = summary(event.model_dump(mode="json"))
    return clean(f"{event.seq:>6} {clock(event.ts)} {event.type:<16} {said}".rstrip(),
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


def _generic(g: Mapping[str, Any]) -> str:
    return _compact({k: v for k, v in g.items() if k not in ("v", "seq", "ts", "type")})


def _opt(label: str, value: object) -> str:
    return f" {label} {value}" if value not in (None, "") else ""


def _memory(g: Mapping[str, Any]) -> str:
    call = g.get("call_id")
    return f"{g.get('kind', '?')}{f' [{call}]' if call else ''} {g.get('message', '')}"


def _session_start(g: Mapping[str, Any]) -> str:
    beat = f", heartbeat every {g['heartbeat_s']:g}s" if g.get("heartbeat_s") else ""
    task = g.get("task")
    return (f"agent {g['agent']}{_opt('task', repr(task) if task else None)}"
            f"{_opt('in', g.get('cwd'))}{_opt('pid', g.get('pid'))}{beat}")


def _tool_result(g: Mapping[str, Any]) -> str:
    state = "ok" if g["ok"] else f"ERROR {g.get('error') or ''}".rstrip()
    duration = g.get("duration_ms")
    timing = f", {duration:g} ms" if duration is not None else ""
    return (f"{state} [{g['call_id']}] {g['output'][:200]!r} ({g['output_bytes']} bytes"
            f"{timing})")


def _usage(g: Mapping[str, Any]) -> str:
    cost = f", ${g['cost_usd']:.4f}" if g.get("cost_usd") is not None else ""
    return f"{g['input_tokens']} in / {g['output_tokens']} out tokens{cost}"


def _evidence(seqs: list[int]) -> str:
    if not seqs:
        return ""
    shown = ",".join(str(s) for s in seqs[:8]) + ("…" if len(seqs) > 8 else "")
    return f" (evidence seq {shown})"


def _changes(g: Mapping[str, Any]) -> str:
    """` (+1 ~2 -0 since cp3)`: what a checkpoint changed since the previous one (its
    `diffstat`), when it says."""
    stat = g.get("diffstat")
    if not isinstance(stat, dict):
        return ""
    counts = [stat.get(k) for k in ("added", "modified", "deleted")]
    if not all(isinstance(n, int) for n in counts):
        return ""
    since = stat.get("since")
    if not since:
        return f" (first: {files(counts[0])})"
    return f" (+{counts[0]} ~{counts[1]} -{counts[2]} since {since})"


def _escalation(g: Mapping[str, Any]) -> str:
    kind = f" [{g['kind']}]" if g.get("kind") else ""
    fallback = g.get("fallback")
    deadline = f", fallback {fallback} at {clock(g['deadline_ts'])}" \
        if g.get("deadline_ts") else ""
    return (f"{g['escalation_id']} level {g['level']}{kind}: {g['reason']}; options "
            f"{'/'.join(g['options']) or '-'}{deadline or f', fallback {fallback}'}"
            f"{_evidence(g['evidence'])}")


def _verdict(g: Mapping[str, Any]) -> str:
    text = g.get("message") or g.get("reason") or ""
    return f"{g['action']} (level {g['level']}) [{g['call_id']}] {text}".rstrip()


def _plan_step(plan: Any) -> str:
    """` (step 1 of 3)` for a task that is a step of an operator's plan (docs/plans.md)."""
    if isinstance(plan, dict) and isinstance(plan.get("step"), int) and \
            isinstance(plan.get("of"), int):
        return f" (step {plan['step']} of {plan['of']})"
    return ""


def _decision(g: Mapping[str, Any]) -> str:
    eid = g.get("escalation_id")
    target = f" {eid}" if eid else " (no escalation)"
    text = g.get("text")
    detail = _opt("text", repr(text) if text else None) + _opt("checkpoint",
                                                               g.get("checkpoint_id"))
    tasks = g.get("tasks")  # a plan's sub-tasks (docs/plans.md)
    if isinstance(tasks, list):
        detail += _opt("tasks", " | ".join(repr(t) for t in tasks))
    return f"{g.get('operator')}: {g['action']}{target} [{g['decision_id']}]{detail}"


def rollback_summary(checkpoint_id: object, restored_files: object, safety: object) -> str:
    """A `rollback` event in words. `restored_files` counts the files put back and those
    removed (created since): not "restored" alone, which the CLI's own line tells apart."""
    files = f"{restored_files} files put back as they were" if restored_files != 1 \
        else "1 file put back as it was"
    return f"to {checkpoint_id}: {files} (safety checkpoint {safety})"


FILES_SHOWN = 8


def call_files(args: object, files_before: object) -> str:
    """`on a.py, b.py, c.py: ` before a call's arguments: the files it may write (its
    `files_before`) that no argument names as its value, such as every file of a patch run as
    a shell line (Codex's `apply_patch <<'EOF'`, whose headers sit deep in a heredoc a cut
    line never reaches); "" when its arguments name them all (`Edit`'s `file_path`) or it
    records none. Raw: the caller cleans it."""
    if not isinstance(files_before, dict) or not files_before:
        return ""
    named = {v for v in args.values() if isinstance(v, str)} if isinstance(args, dict) else set()
    paths = [str(p) for p in files_before if p not in named]
    if not paths:
        return ""
    more = f" and {len(paths) - FILES_SHOWN} more" if len(paths) > FILES_SHOWN else ""
    return f"on {', '.join(paths[:FILES_SHOWN])}{more}: "


def _tool_call(g: Mapping[str, Any]) -> str:
    refused = g.get("refused_by")
    return (f"{g['tool']} {call_files(g['args'], g.get('files_before'))}"
            f"{_compact(g['args'])} [{g['call_id']}]"
            + (f" refused by the {refused}" if refused else ""))


def _rollback(g: Mapping[str, Any]) -> str:
    return rollback_summary(g.get("checkpoint_id"), g.get("restored_files"),
                            g.get("safety_checkpoint_id"))


_RENDERERS: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "session_start": _session_start,
    "task_start": lambda g: f"{g['task_id']}: {g['title']}{_plan_step(g.get('plan'))}",
    "task_end": lambda g: f"{g['task_id']} {g['status']}",
    "tool_call": _tool_call,
    "tool_result": _tool_result,
    "message": lambda g: f"{g['role']}: {g['text']}",
    "usage": _usage,
    "detection": lambda g: (f"{g['detector']} level {g['level']}: {g['message']} "
                            f"<{g['signature']}>{_evidence(g['evidence'])}"),
    "verdict": _verdict,
    "limit": lambda g: f"{g['name']} {g['value']:g} of {g['limit']:g} -> {g['action']}",
    "checkpoint": lambda g: (f"{g['checkpoint_id']} {g['label']!r} commit {g['commit'][:12]} "
                             f"at seq {g['at_seq']}, {files(g['files'])}{_changes(g)}"),
    "escalation": _escalation,
    "decision_applied": lambda g: (f"{g['action']} [{g['decision_id']}] for "
                                   f"{g.get('escalation_id') or '(no escalation)'}: "
                                   f"{g['outcome']}"),
    "decision_ignored": lambda g: f"[{g['decision_id']}] {g['reason']}",
    "rollback": _rollback,
    "heartbeat": lambda g: "",
    "hint": lambda g: f"{g['kind']} [{g['call_id']}] {g['message']}",
    "disobeyed": lambda g: (f"[{g['call_id']}] ran although refused ({g['refused']}): "
                            f"{g['message']}"),
    "memory": _memory,
    "notification": lambda g: (f"{g['escalation_id']}: {g['outcome']} via {g['service']} "
                               f"(attempt {g['attempt']}){_opt(':', g.get('reason'))}"
                               ).replace(" :", ":"),
    "session_end": lambda g: f"{g['status']}{_opt(':', g.get('reason'))}".replace(" :", ":"),
    "decision": _decision,
    "unsealed": lambda g: describe_unsealed(g.get("line_type"), g.get("text")),
}


def summary(g: Mapping[str, Any]) -> str:
    """What an event is about, in one line: `tail`'s words after its seq, time and type, and
    the dashboard history's row, from the event as JSON (the dashboard reads its rows back
    raw: no pydantic on its draw path). An event of a type without words, or whose fields are
    not what its type says (built by hand), is its fields as compact JSON. Raw: the caller
    cleans it."""
    render = _RENDERERS.get(str(g.get("type")), _generic)
    try:
        return render(g)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return _generic(g)
