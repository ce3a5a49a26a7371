"""A split plan through the Gemini CLI target against the real binary (pinned): the escalation
is answered with three sub-tasks; the model gets sub-task 1 as the held call's refusal, then 2
and 3 at AfterAgent (`{"decision": "block", "reason": ...}`, which Gemini goes on with), and the
session's tasks end done in order (docs/plans.md)."""

from tests.agent_cli.e2e import ESCALATE_SOON, FAILING, of_type
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.script import Script, say, turn
from tests.agent_cli.test_gemini_e2e import BLOCKED, shell

STEPS = ("Create the directory missing-dir.", "List missing-dir.", "Say what it holds.")


def test_a_split_answer_feeds_the_sub_tasks_one_by_one_at_after_agent(gemini: Gemini) -> None:
    gemini.sandbox.write_policy(ESCALATE_SOON)
    gemini.install_hooks("--timeout", "90")
    gemini.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Step finished.")])

    running = gemini.start("list missing-dir")
    session, escalation = gemini.sandbox.wait_for_event("escalation", timeout=120)
    args = [a for step in STEPS for a in ("--split", step)]
    answered = gemini.sandbox.supervisor("answer", session, *args)
    run = running.wait()

    assert answered.returncode == 0, answered.stderr
    assert run.returncode == 0, run.describe()
    texts = [r.text for r in gemini.server.function_responses()]
    assert any(f"Step 1 of 3: {STEPS[0]}" in t and t.startswith(BLOCKED) for t in texts), texts
    said = gemini.server.user_texts()
    at = [next(i for i, t in enumerate(said) if f"Step {n} of 3: {STEPS[n - 1]}" in t)
          for n in (2, 3)]
    assert at[0] < at[1], said
    events = gemini.sandbox.events(session)
    planned = [e for e in of_type(events, "task_start") if e.get("plan")]
    assert [e["title"] for e in planned] == list(STEPS)
    ends = {e["task_id"]: e["status"] for e in of_type(events, "task_end")}
    assert [ends.get(e["task_id"]) for e in planned] == ["done", "done", "done"]
    applied = of_type(events, "decision_applied")
    assert [a["action"] for a in applied] == ["split"]
    assert applied[0]["escalation_id"] == escalation["escalation_id"]
