"""The Gemini CLI target against the real binary (`@google/gemini-cli`, pinned) and a scripted
model.

Hooks installed by `supervisor install gemini --project WORK` into the work dir's
`.gemini/settings.json` (the folder trusted through `GEMINI_CLI_TRUST_WORKSPACE`). Each scenario
asserts on what the model received (the fake Gemini API's log) and what the store recorded.
"""

import json

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
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

BLOCKED = f"Tool execution blocked: {SOURCE}"


def shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command, "description": "run it"})


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(gemini: Gemini) -> None:
    gemini.install_hooks()
    settings = json.loads((gemini.sandbox.work / ".gemini" / "settings.json").read_text())
    assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] % 1000 == 0  # ms
    gemini.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])

    run = gemini.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    responses = gemini.server.function_responses()
    assert len(responses) == 4
    assert "Exit Code: 2" in responses[0].text
    assert responses[3].is_error and responses[3].text.startswith(BLOCKED)
    assert "does not exist" in responses[3].text

    session, events = only_session(gemini.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "gemini"
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["run_shell_command"] * 4
    ran = [r for _, r in pairs if r is not None]
    assert len(ran) == sum(1 for r in responses if not r.is_error)
    assert all(r["ok"] is False and r["error"].startswith("Exit code 2") for r in ran), ran
    assert all("PGID" not in r["output"] for r in ran)  # identical failures look identical
    assert len({c["call_id"] for c, _ in pairs}) == 4  # each call its own id
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert refused and refused[0]["action"] == "block"
    assert_seq_ordered(events)


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    gemini: Gemini,
) -> None:
    answer_an_escalation_with_guidance(gemini, shell(FAILING))
    texts = [r.text for r in gemini.server.function_responses()]
    assert any(GUIDANCE in t and t.startswith(BLOCKED) for t in texts), texts


def test_a_healthy_session_is_never_denied_nor_told_anything(gemini: Gemini) -> None:
    gemini.sandbox.write("foo.py", FOO)
    gemini.sandbox.commit("add foo")
    gemini.install_hooks()
    gemini.server.script = Script(main=[
        turn(Text("Reading."), ToolCall("read_file", {"file_path": "foo.py"})),
        turn(shell(CHECK)),
        turn(ToolCall("replace", {"file_path": "foo.py", "old_string": "return a - b",
                                  "new_string": "return a + b", "instruction": "fix add"})),
        turn(shell(CHECK), shell("git status --short")),
        turn(ToolCall("glob", {"pattern": "*.py"}), ToolCall("grep_search", {"pattern": "a + b"})),
        say("Fixed add."),
    ])

    run = gemini.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (gemini.sandbox.work / "foo.py").read_text() == FIXED
    assert not gemini.server.received(SOURCE), "the model was told something"
    _session, events = only_session(gemini.sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    tools = [c["tool"] for c, _ in pairs]
    # calls of one turn run in parallel: their order within the turn is Gemini's to choose
    assert tools[:3] == ["read_file", "run_shell_command", "replace"]
    assert tools[3:5] == ["run_shell_command", "run_shell_command"]
    assert sorted(tools[5:]) == ["glob", "grep_search"]
    assert all(r is not None for _, r in pairs), "a call lost its result"
    outcomes = [r["ok"] for _, r in pairs]
    assert outcomes == [True, False, True, True, True, True, True]
    assert "AssertionError" in pairs[1][1]["error"] or "Exit code 1" in pairs[1][1]["error"]
    assert len({c["call_id"] for c, _ in pairs}) == 7
    assert of_type(events, "message")[-1]["role"] == "assistant"
    assert events[-1]["type"] == "session_end"
    assert_seq_ordered(events)
