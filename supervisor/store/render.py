"""One readable, terminal-safe line per event, for `supervisor tail` and plain-text logs."""

import time

from supervisor.protocol.codec import BadLine
from supervisor.protocol.models import Event
from supervisor.safetext import clean

_WIDTH = 160


def describe_event(event: Event) -> str:
    """`seq time type summary`, with every agent-provided string cleaned."""
    stamp = time.strftime("%H:%M:%S", time.localtime(event.ts)) if event.ts else "--:--:--"
    return clean(f"{event.seq:>6} {stamp} {event.type:<16} {_summary(event)}",
                 keep_newlines=False, limit=_WIDTH)


def describe_bad_line(bad: BadLine) -> str:
    return clean(f"   BAD @{bad.offset} {bad.reason}: {bad.preview(60)!r}", keep_newlines=False)


def _summary(e: Event) -> str:
    data = e.model_dump(mode="json", exclude={"v", "seq", "ts", "type"})
    match e.type:
        case "tool_call":
            return f"{data['tool']} {_compact(data['args'])} [{data['call_id']}]"
        case "tool_result":
            state = "ok" if data["ok"] else f"ERROR {data.get('error') or ''}".strip()
            return f"{state} [{data['call_id']}] {data['output'][:200]!r}"
        case "message":
            return f"{data['role']}: {data['text']}"
        case "verdict":
            text = data.get("message") or data.get("reason") or ""
            return f"{data['action']} (level {data['level']}) [{data['call_id']}] {text}"
        case "detection":
            return f"{data['detector']} level {data['level']}: {data['message']}"
        case "escalation":
            return f"{data['escalation_id']} level {data['level']}: {data['reason']}"
        case _:
            return _compact(data)


def _compact(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)[:400]
