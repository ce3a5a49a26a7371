"""What the agent CLIs' end-to-end scenarios share: the scripts, the store checks and the
escalation every target holds for the operator."""

import time
from typing import Any

from tests.agent_cli.runner import AgentRunner
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script, ToolCall, say, turn

FAILING = "ls missing-dir"
"""A command that fails the same way every time (`ls` exits 2)."""
FAILING_QUIETLY = "ls missing-dir 2>/dev/null"
"""`FAILING` with nothing printed: the same outcome every time even for an agent that reports a
command at its exit, before it has read all of its output (Qwen Code in a one-shot run, see
docs/qwen-code.md), where `FAILING`'s message is there in some results and missing in others,
so its repeats are not identical failures."""
ESCALATE_SOON = """
[guard]
escalation_deadline_s = 60

[detectors.exact_repeat]
escalate = 4
"""
"""A policy that escalates the 4th identical failing call (Gemini CLI's own loop detection
stops a session at the 5th identical call) and holds it up to a minute for the operator."""
GUIDANCE = "Create the directory with mkdir missing-dir, then list it."
OPERATOR_READS_S = 12.0
"""How long the operator takes to read an escalation before answering it: longer than any short
limit an agent CLI puts on a hook or plugin call (Cline CLI ended its run at 3 s), so a hold
that dies before a real operator could answer fails the scenario instead of passing unseen."""
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
    line `OPERATOR_READS_S` after the escalation appeared (the time a real operator takes), and
    the run goes on to its end with the decision applied to that escalation, the held call
    never having run. Each test then checks, in its agent's own terms, that the model read the
    guidance."""
    agent.sandbox.write_policy(ESCALATE_SOON)
    agent.install_hooks("--timeout", "90")
    agent.server.script = Script(main=[turn(call)] * repeats + [say("Done.")])

    running = agent.start("list missing-dir")
    session, escalation = agent.sandbox.wait_for_event("escalation", timeout=120)
    time.sleep(OPERATOR_READS_S)
    answered = agent.sandbox.supervisor("answer", session, "--guidance", GUIDANCE)
    run = running.wait()

    assert answered.returncode == 0, answered.stderr
    assert run.returncode == 0, run.describe()
    events = agent.sandbox.events(session)
    applied = of_type(events, "decision_applied")
    assert applied and applied[0]["escalation_id"] == escalation["escalation_id"], applied
    assert applied[0]["action"] == "guidance", applied
    held = escalation["call_id"]
    assert not [r for r in of_type(events, "tool_result") if r["call_id"] == held], events


TOKEN_BUDGET = """
[limits.tokens]
limit = 3000
action = "pause"

[guard]
escalation_deadline_s = 2
fallback = "skip"
"""
"""A session budget of 3,000 tokens (input + output), held for the operator when reached; no
operator answers, so the held call is skipped after two seconds."""


def usage_is_recorded_and_the_budget_holds(
    agent: AgentRunner[Any], calls: list[ToolCall], reads: int = 500, writes: int = 40,
    late: int = 0,
) -> list[dict[str, Any]]:
    """The scenario every target with a usage record shares: each scripted answer reports
    1,000 input and 100 output tokens, `reads` read from the cache and `writes` written to it
    (an API without cache writes: 0); the tokens
    the store recorded are what the model server sent, and the call made once 3,000 tokens are
    spent (the third) is held for the operator (`TOKEN_BUDGET`) before it runs. Returns the
    session's events. `late`: how many calls late the budget may hold, for an agent that may
    write an answer's usage only after the call it asked for was judged (counted at a later
    call): 1 scripts a fourth call and the hold must come at the third or the fourth (Qwen
    Code); 2 a fifth too, the hold at the third to the fifth (Claude Code)."""
    agent.sandbox.write_policy(TOKEN_BUDGET)
    agent.install_hooks("--timeout", "90")
    for i in range(len(calls)):  # what the calls list (`Driver.usage_calls`) exists: calls that
        # all failed alike are a recurring error, which the engine blocks ahead of a late budget
        (agent.sandbox.work / f"dir{i}").mkdir(exist_ok=True)
    turns = [turn(call).spending(1000, 100, reads, writes) for call in calls[:3 + late]]
    agent.server.script = Script(main=[*turns, say("Done.").spending(1000, 100, reads, writes)])

    run = agent.run("list the directories")

    assert run.returncode == 0, run.describe()
    _session, events = only_session(agent.sandbox)
    usages = of_type(events, "usage")
    served = len(agent.server.script.main)
    assert sum(u["input_tokens"] for u in usages) == 1000 * served, usages
    assert sum(u["output_tokens"] for u in usages) == 100 * served, usages
    assert sum(u.get("cache_read_tokens") or 0 for u in usages) == reads * served, usages
    assert sum(u.get("cache_write_tokens") or 0 for u in usages) == writes * served, usages
    calls_made = of_type(events, "tool_call")
    escalation = of_type(events, "escalation")[0]  # (a later call past the budget escalates too)
    assert escalation["kind"] == "limit" and "tokens" in escalation["reason"], escalation
    ids = [c["call_id"] for c in calls_made]
    held = ids.index(escalation["call_id"])
    assert 2 <= held <= 2 + late, (held, late)  # the third call (or one late), before it ran
    verdicts = {v["call_id"]: v["action"] for v in of_type(events, "verdict")}
    assert [verdicts[i] for i in ids[:held]] == ["allow"] * held
    ran = {r["call_id"] for r in of_type(events, "tool_result") if r.get("ok")}
    assert ids[held] not in ran
    return events
