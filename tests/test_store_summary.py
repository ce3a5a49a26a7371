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
    assert s.status(101) == "aborted" and s.level == 4 and not s.pending
    assert s.ended and s.ended_as() == "aborted"


def test_how_a_session_ended_is_its_status() -> None:
    for status in ("completed", "aborted", "failed", "terminated"):
        assert fold(start(), {"type": "session_end", "status": status}).status(101) == status
    stopped = fold(start(), {"type": "limit", "name": "iterations_per_session", "value": 40,
                             "limit": 40, "action": "stop"},
                   {"type": "session_end", "status": "terminated", "reason": "hard limit"})
    assert stopped.status(101) == "limit"
    paused = fold(start(), {"type": "limit", "name": "errors_per_session", "value": 5,
                            "limit": 5, "action": "pause"},
                  {"type": "session_end", "status": "terminated", "reason": "killed"})
    assert paused.status(101) == "terminated"  # a limit that paused did not end it


def test_broken_empty_and_recorded() -> None:
    assert SessionSummary("s").status(100) == "empty"
    no_start = fold({"type": "tool_call", "call_id": "c", "tool": "x", "args": {}})
    assert no_start.status(101) == "broken"
    only_bad = SessionSummary("s")
    only_bad.bad_lines = 1
    assert only_bad.status(100) == "broken"
    imported = fold({**start(), "imported": {"format": "swe-agent", "source": "run.traj"}})
    assert imported.status(10_000) == "recorded"  # not idle, not running: a recording
    ended = fold({**start(), "imported": {"format": "swe-agent"}},
                 {"type": "session_end", "status": "completed"})
    assert ended.status(10_000) == "completed"
