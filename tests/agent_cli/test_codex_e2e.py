"""The Codex CLI target against the real binary (`@openai/codex`, pinned) and a scripted model.

Hooks installed by `supervisor install codex` into the sandbox's user `hooks.json`; Codex runs
headless with `--dangerously-bypass-hook-trust`. Each scenario asserts on what the model
received (the fake Responses API's log) and on what the store recorded.
"""

from tests.agent_cli.codex_runner import Codex
from tests.agent_cli.e2e import (
    CHECK,
    FAILING,
    FIXED,
    FOO,
    GUIDANCE,
    SOURCE,
    answer_an_escalation_with_guidance,
    assert_seq_ordered,
    of_type,
    only_session,
    results_by_call,
)
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

BLOCKED = f"Command blocked by PreToolUse hook: {SOURCE}"


def shell(command: str) -> ToolCall:
    return ToolCall("exec_command", {"cmd": command})


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(codex: Codex) -> None:
    codex.install_hooks()
    codex.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])

    run = codex.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    outputs = [o.output for o in codex.server.call_outputs()]
    assert len(outputs) == 4
    assert "Process exited with code 2" in outputs[0]
    assert any(BLOCKED in o for o in outputs[:4]), outputs  # our reason, by the 4th attempt
    assert BLOCKED in outputs[3]
    assert "does not exist" in outputs[3]  # the reason says what to do instead

    session, events = only_session(codex.sandbox)
    assert session == run.session_id
    start = events[0]
    assert start["type"] == "session_start" and start["agent"] == "codex"
    assert start["model"] == "fake-model"
    prompt = of_type(events, "message")[0]
    assert prompt["role"] == "user" and prompt["turn_id"]
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["Bash"] * 4
    ran = [r for _, r in pairs if r is not None]
    assert ran, "no failure recorded"
    assert all(r["ok"] is False and r["error"].startswith("Exit code 2") for r in ran), ran
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert refused and refused[0]["action"] == "block"
    assert_seq_ordered(events)


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    codex: Codex,
) -> None:
    answer_an_escalation_with_guidance(codex, shell(FAILING), repeats=5)
    outputs = [o.output for o in codex.server.call_outputs()]
    assert any(GUIDANCE in o and o.startswith(BLOCKED) for o in outputs), outputs


def test_a_healthy_session_is_never_denied_nor_told_anything(codex: Codex) -> None:
    codex.sandbox.write("foo.py", FOO)
    codex.sandbox.commit("add foo")
    codex.install_hooks()
    codex.server.script = Script(main=[
        turn(Text("Reading."), shell("cat foo.py")),
        turn(shell(CHECK)),
        turn(shell("sed -i 's/a - b/a + b/' foo.py")),
        turn(shell(CHECK), shell("git status --short")),
        turn(shell("grep -n 'a + b' foo.py")),
        say("Fixed add."),
    ])

    run = codex.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (codex.sandbox.work / "foo.py").read_text() == FIXED
    assert not codex.server.received(SOURCE), "the model was told something"
    _session, events = only_session(codex.sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    outcomes = [(c["args"]["command"], r["ok"]) for c, r in results_by_call(events)]
    assert (CHECK, False) in outcomes and outcomes.count((CHECK, True)) == 1
    assert len(outcomes) == 6 and all(r for _, r in results_by_call(events))
    assert of_type(events, "message")[-1]["text"] == "Fixed add."
    assert events[-1]["type"] == "session_end"
    assert_seq_ordered(events)
