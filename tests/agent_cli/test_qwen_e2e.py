"""The Qwen Code target against the real binary (`@qwen-code/qwen-code`, pinned) and a scripted
Chat Completions model.

Hooks installed by `supervisor install qwen-code --user` into the sandbox's
`~/.qwen/settings.json`. Each scenario asserts on what the model received (the fake's log: the
`role: "tool"` messages) and what the store recorded. The scenarios every CLI shares run in
`test_scenarios.py` (`drivers/qwen.py`); here, Qwen's own. Their repeated failing command prints
nothing (`FAILING_QUIETLY`): the last test here shows why.
"""

import json

from tests.agent_cli.e2e import (
    FAILING_QUIETLY,
    SOURCE,
    of_type,
    only_session,
    results_by_call,
)
from tests.agent_cli.qwen_runner import QwenCode
from tests.agent_cli.script import Script, ToolCall, say, turn


def shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command, "description": "run it"})


def test_over_http_the_4th_identical_failing_call_is_denied(qwen: QwenCode) -> None:
    """`--transport http`: Qwen's per-call events POST to the resident server (started by the
    first command hook, SessionStart)."""
    from tests.hookd_helpers import stop_servers

    qwen.install_hooks("--transport", "http")
    hooks = json.loads(qwen.settings_path.read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["type"] == "http"
    assert hooks["SessionStart"][0]["hooks"][0]["type"] == "command"
    qwen.server.script = Script(main=[turn(shell(FAILING_QUIETLY))] * 4 + [say("Giving up.")])
    try:
        run = qwen.run("list missing-dir")
    finally:
        stop_servers(qwen.sandbox.store)

    assert run.returncode == 0, run.describe()
    told = [m.text for m in qwen.server.tool_messages()]
    assert len(told) == 4 and told[3].startswith(SOURCE), told
    _session, events = only_session(qwen.sandbox)
    assert [r["ok"] for _, r in results_by_call(events) if r is not None] == [False] * 3
    log = (qwen.sandbox.store / "run" / "hookd.log").read_text()
    assert "serving HTTP hooks on 127.0.0.1:" in log


HOLD_TWO_MINUTES = """
[guard]
escalation_deadline_s = 120
fallback = "skip"

[detectors.exact_repeat]
escalate = 4
"""
"""The 4th identical failing call escalates, held up to two minutes for an operator."""


def test_a_hold_no_operator_answers_ends_with_the_fallback_before_qwen_runs_the_call(
        qwen: QwenCode) -> None:
    """Qwen Code waits 60 s for a PreToolUse answer whatever the entry's `timeout`, then runs
    the call as if allowed (docs/qwen-code.md). With a policy that holds two minutes and a
    timeout to match, nobody answering: the installer's 60 s makes the hook's budget end the
    hold with the policy's fallback in time, so the held call is skipped, never run. (With
    the entry's 150 s, Qwen ran it after a minute while it was still held.)"""
    qwen.sandbox.write_policy(HOLD_TWO_MINUTES)
    qwen.install_hooks("--timeout", "150")
    qwen.server.script = Script(main=[turn(shell(FAILING_QUIETLY))] * 4 + [say("Done.")])

    run = qwen.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    _session, events = only_session(qwen.sandbox)
    (escalation,) = of_type(events, "escalation")
    applied = of_type(events, "decision_applied")
    assert [(a["decision_id"], a["action"]) for a in applied] == [("fallback", "skip")], applied
    assert escalation["deadline_ts"] - escalation["ts"] < 60, escalation  # told the truth
    held = escalation["call_id"]
    assert not [r for r in of_type(events, "tool_result") if r["call_id"] == held], events
    told = [m.text for m in qwen.server.tool_messages()]
    assert len(told) == 4 and SOURCE in told[3], told


def test_a_one_shot_run_reports_a_command_at_its_exit_before_its_output_ends(
        qwen: QwenCode) -> None:
    """The pinned Qwen Code, in a one-shot run (no pseudo-terminal), finishes a shell call when
    the shell exits, not when its output ends: a line printed after that is never read. A
    command's own last lines race its exit the same way, and under load they lose at times:
    `ls missing-dir` was then reported with `Output: (empty)` for some attempts and with its
    message for others, so the repeats were not identical failures and the 4th was not refused
    (the failing CI runs of the HTTP test above; every hook had come in order, in time). Here the
    output comes after the exit on purpose, so the result is the same on every run: should a
    new version wait for the output, this fails, and `FAILING_QUIETLY` can go."""
    qwen.install_hooks()
    late = "(sleep 1; echo late-$((6*7))) & exit 2"  # prints late-42, a second after its exit
    qwen.server.script = Script(main=[turn(shell(late)), say("Done.")])

    run = qwen.run("run it")

    assert run.returncode == 0, run.describe()
    told = [m.text for m in qwen.server.tool_messages()]
    assert len(told) == 1 and "Exit Code: 2" in told[0], told
    assert "Output: (empty)" in told[0] and "late-42" not in told[0], told
    _session, events = only_session(qwen.sandbox)
    [(_call, result)] = results_by_call(events)
    assert result["error"] == "Exit code 2", result  # recorded as the model read it
