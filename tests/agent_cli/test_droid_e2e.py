"""The Factory Droid target against the real binary (`@factory/cli-linux-x64`, pinned) and a
scripted Chat Completions model.

Hooks installed by `supervisor install droid --user` into the sandbox's
`~/.factory/settings.json`. Droid runs no PostToolUse for a failed call: the failures are
recorded from its transcript (at the next hook), which these scenarios prove too.
"""

from tests.agent_cli.droid_runner import Droid
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

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def execute(command: str, why: str = "reads only") -> ToolCall:
    return ToolCall("Execute", {"command": command, "summary": "run it", "riskLevel": "low",
                                "riskLevelReason": why})


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(droid: Droid) -> None:
    droid.install_hooks()
    # the model words its notes on the same command differently each time
    droid.server.script = Script(main=[turn(execute(FAILING, f"reads only, try {n}"))
                                       for n in range(4)] + [say("Giving up.")])

    run = droid.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    told = [m.text for m in droid.server.tool_messages()]
    assert len(told) == 4, told
    assert "exit code: 2" in told[0]
    assert told[3].startswith(f"Error: {SOURCE}"), told[3]

    session, events = only_session(droid.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "droid"
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["Bash"] * 4
    assert [c["args"]["command"] for c, _ in pairs] == [FAILING] * 4
    ran = [r for _, r in pairs if r is not None]
    assert len(ran) == 3, pairs  # from the transcript: Droid reports no failure to hooks
    assert all(r["ok"] is False and r["error"].startswith("Exit code 2") for r in ran), ran
    assert pairs[3][1] is None
    assert len({c["call_id"] for c, _ in pairs}) == 4
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert refused and refused[0]["action"] == "block"
    assert_seq_ordered(events)


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    droid: Droid,
) -> None:
    answer_an_escalation_with_guidance(droid, execute(FAILING))
    told = [m.text for m in droid.server.tool_messages()]
    assert any(GUIDANCE in t and SOURCE in t for t in told), told


def test_a_healthy_session_is_never_denied_nor_told_anything(droid: Droid) -> None:
    droid.sandbox.write("foo.py", FOO)
    droid.sandbox.commit("add foo")
    droid.install_hooks()
    foo = str(droid.sandbox.work / "foo.py")
    droid.server.script = Script(main=[
        turn(Text("Reading."), ToolCall("Read", {"file_path": foo})),
        turn(execute(CHECK)),
        turn(ToolCall("Edit", {"file_path": foo, "old_str": "return a - b",
                               "new_str": "return a + b"})),
        turn(execute(CHECK)),
        say("Fixed add."),
    ])

    run = droid.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (droid.sandbox.work / "foo.py").read_text() == FIXED
    assert not droid.server.received(SOURCE), "the model was told something"
    _session, events = only_session(droid.sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["Read", "Bash", "Edit", "Bash"]
    assert all(r is not None for _, r in pairs), "a call lost its result"
    assert [r["ok"] for _, r in pairs] == [True, False, True, True]
    assert pairs[1][1]["error"].startswith("Exit code 1")
    texts = [m["text"] for m in of_type(events, "message") if m["role"] == "assistant"]
    assert texts == ["Reading.", "Fixed add."]
    assert events[-1]["type"] == "session_end"
    assert_seq_ordered(events)


def test_a_failed_edit_is_recorded_with_its_guidance(droid: Droid) -> None:
    """Droid's Edit fails without a PostToolUse: the failure and the failed-edit guidance are
    recorded from the transcript, but the guidance cannot reach the model with the failure."""
    droid.install_hooks()
    droid.sandbox.write("parser.py", PARSER)
    droid.sandbox.commit("add parser")
    path = str(droid.sandbox.work / "parser.py")
    droid.server.script = Script(main=[
        turn(ToolCall("Edit", {"file_path": path, "old_str": WRONG, "new_str": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = droid.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    (told,) = droid.server.tool_messages()
    assert "The text to replace was not found in the file" in told.text
    _, events = only_session(droid.sandbox)
    ((_call, result),) = results_by_call(events)
    assert result is not None and result["ok"] is False
    assert result["error"].startswith("The text to replace was not found")
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit" and "lines 3-4" in hint["message"]
