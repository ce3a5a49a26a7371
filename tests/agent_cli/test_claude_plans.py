"""A split plan end to end with the real Claude Code CLI (pinned) and a scripted model: an
escalation answered with `supervisor answer --split` three times; the model receives sub-task 1
as the answer to its held call, then sub-task 2 at its Stop, then 3, and the session ends
normally once the plan is done (docs/plans.md)."""

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.script import Script, Text, ToolCall, say, turn
from tests.agent_cli.test_claude_supervised import CHECK, _events, _project, _wait_for_event
from tests.hookd_helpers import stop_servers

STEPS = ("Read foo.py and say what add() does.",
         "Fix the sign in add() so that add(2, 3) == 5.",
         "Run the check once and report its result.")


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    yield
    stop_servers(sandbox.store)


def test_a_split_answer_feeds_the_sub_tasks_one_by_one_at_stop(claude: ClaudeCode) -> None:
    _project(claude, hold=60)
    claude.server.script = Script(main=[
        *[turn(Text(f"Try {i + 1}."), ToolCall("Bash", {"command": CHECK,
                                                         "description": "check add"}))
          for i in range(6)],
        say("Finished step one."),
        say("Finished step two."),
        say("Finished step three."),
    ])
    running = claude.start("make the check pass")
    try:
        session, escalation = _wait_for_event(claude, "escalation")
        assert "split" in escalation["options"]
        args = [a for step in STEPS for a in ("--split", step)]
        done = claude.sandbox.supervisor("answer", session, *args, "--operator", "ana")
        assert done.returncode == 0, done.stderr
        run = running.wait()
    finally:
        running.kill()

    assert run.returncode == 0, run.describe()
    # sub-task 1: the answer to the held call, with why (the loop's evidence)
    held = claude.server.tool_results()[5]
    assert f"Step 1 of 3: {STEPS[0]}" in held.text, held.text
    assert "split this task into 3 steps" in held.text and "pytest" not in held.text
    assert "same error" in held.text, held.text
    # sub-tasks 2 and 3: each after the model finished the one before, at its Stop
    history = claude.server.history()
    said = [json.dumps(m) for m in history]
    at = {n: next(i for i, m in enumerate(said) if f"Step {n} of 3" in m) for n in (1, 2, 3)}
    done_one = next(i for i, m in enumerate(said) if "Finished step one." in m)
    done_two = next(i for i, m in enumerate(said) if "Finished step two." in m)
    assert at[1] < done_one < at[2] < done_two < at[3], at
    assert STEPS[1] in said[at[2]] and STEPS[2] in said[at[3]]
    # the plan done, Stop is allowed: the run ends with the last step's text
    assert run.result.get("result") == "Finished step three.", run.describe()
    assert len(claude.server.conversation()) == 9  # 6 calls, then one turn per sub-task
    # each sub-task is a protocol task, done in order; the session ends normally
    starts = _events(claude, session=session, kind="task_start")
    planned = [e for e in starts if e.get("plan")]
    assert [e["title"] for e in planned] == list(STEPS)
    assert [e["plan"]["step"] for e in planned] == [1, 2, 3]
    ends = {e["task_id"]: e["status"] for e in _events(claude, session=session,
                                                         kind="task_end")}
    assert [ends.get(e["task_id"]) for e in planned] == ["done", "done", "done"]
    applied = _events(claude, session=session, kind="decision_applied")
    assert [a["action"] for a in applied] == ["split"]
    assert applied[0]["effect"]["kind"] == "split" and applied[0]["tasks"] == list(STEPS)
    assert _events(claude, session=session, kind="session_end")[0]["status"] == "completed"
