"""What the Codex and Gemini end-to-end scenarios share: the scripts and the store checks."""

from typing import Any

from tests.agent_cli.sandbox import Sandbox

FAILING = "ls missing-dir"
"""A command that fails the same way every time (`ls` exits 2)."""
ESCALATE_SOON = """
[guard]
escalation_deadline_s = 60

[detectors.exact_repeat]
escalate = 4
"""
"""A policy that escalates the 4th identical failing call (Gemini CLI's own loop detection
stops a session at the 5th identical call) and holds it up to a minute for the operator."""
GUIDANCE = "Create the directory with mkdir missing-dir, then list it."
FOO = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CHECK = 'python3 -c "from foo import add; assert add(2, 3) == 5, add(2, 3)"'
SOURCE = "Agent Supervisor"


def only_session(sandbox: Sandbox) -> tuple[str, list[dict[str, Any]]]:
    sessions = sandbox.sessions()
    assert len(sessions) == 1, sessions
    return sessions[0], sandbox.events(sessions[0])


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def results_by_call(events: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """Each tool_call with its tool_result (None when it never ran), in order."""
    results = {e["call_id"]: e for e in of_type(events, "tool_result")}
    return [(call, results.get(call["call_id"])) for call in of_type(events, "tool_call")]


def assert_seq_ordered(events: list[dict[str, Any]]) -> None:
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
