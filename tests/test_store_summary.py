"""SessionSummary: what the sessions table shows, folded from events."""

from supervisor.protocol.codec import parse_line
from supervisor.protocol.lines import encode_line
from supervisor.store.summary import SessionSummary


def fold(*events: dict) -> SessionSummary:
    summary = SessionSummary("s")
    for seq, data in enumerate(events, 1):
        event = parse_line(encode_line({"v": 1, "seq": seq, "ts": data.pop("ts", 100.0),
                                        **data}))
        summary.apply(event)
    return summary


def start(heartbeat_s: float | None = None) -> dict:
    return {"type": "session_start", "agent": "a", "task": "t", "heartbeat_s": heartbeat_s}


def escalation(eid: str, kind: str | None = None) -> dict:
    return {"type": "escalation", "escalation_id": eid, "level": 3, "reason": "r",
            "evidence": [], "options": ["approve"], "fallback": "abort", "kind": kind}


def test_running_idle_and_counts() -> None:
    s = fold(start(), {"type": "tool_call", "call_id": "c", "tool": "x", "args": {}},
             {"type": "tool_result", "call_id": "c", "ok": False, "output": "", "output_bytes": 0,
              "output_hash": "h"})
    assert (s.events, s.tool_calls, s.errors) == (3, 1, 1)
    assert s.status(110.0) == "running" and s.status(1000.0) == "idle"


def test_waiting_then_paused_then_answered() -> None:
    assert fold(start(), escalation("e1")).status(101) == "waiting"
    assert fold(start(), escalation("e1", "pause")).status(101) == "paused"
    answered = fold(start(), escalation("e1"), {"type": "decision_applied", "escalation_id": "e1",
                                                "decision_id": "fallback", "action": "abort",
                                                "outcome": "deadline passed: abort"})
    assert not answered.pending and answered.status(101) == "running"


def test_dead_only_for_agents_that_promise_heartbeats() -> None:
    assert fold(start(heartbeat_s=5.0)).status(100 + 16) == "dead"
    assert fold(start(heartbeat_s=5.0), {"type": "heartbeat", "ts": 115.0}).status(116) == "running"
    assert fold(start(heartbeat_s=None)).status(100 + 50) == "running"


def test_ended_and_level() -> None:
    s = fold(start(), escalation("e1"), {"type": "session_end", "status": "aborted",
                                         "reason": "operator"})
    assert s.status(101) == "ended" and s.level == 4 and not s.pending
