"""What the agent CLIs' end-to-end scenarios share: the scripts, the store checks and the
escalation every target holds for the operator."""

from typing import Any

from tests.agent_cli.runner import AgentRunner
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script, ToolCall, say, turn

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


def answer_an_escalation_with_guidance(agent: AgentRunner[Any], call: ToolCall,
                                       repeats: int = 4) -> None:
    """The scenario every target shares: the agent repeats a failing `call` until it escalates
    (`ESCALATE_SOON`), the hook holds it, an operator answers with `GUIDANCE` from the command
    line, and the run goes on to its end with the decision applied to that escalation. Each
    test then checks, in its agent's own terms, that the model read the guidance."""
    agent.sandbox.write_policy(ESCALATE_SOON)
    agent.install_hooks("--timeout", "90")
    agent.server.script = Script(main=[turn(call)] * repeats + [say("Done.")])

    running = agent.start("list missing-dir")
    session, escalation = agent.sandbox.wait_for_event("escalation", timeout=120)
    answered = agent.sandbox.supervisor("answer", session, "--guidance", GUIDANCE)
    run = running.wait()

    assert answered.returncode == 0, answered.stderr
    assert run.returncode == 0, run.describe()
    applied = of_type(agent.sandbox.events(session), "decision_applied")
    assert applied and applied[0]["escalation_id"] == escalation["escalation_id"]
