"""The GitHub Copilot CLI target against the real binary (`@github/copilot`, pinned, offline)
and a scripted Chat Completions model.

Hooks installed by `supervisor install copilot --user` into the sandbox's
`~/.copilot/settings.json`. Copilot's payloads name no event and no call: the scenarios prove
the target tells the events apart and pairs calls with their results.
"""

from tests.agent_cli.copilot_runner import Copilot
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

DENIED = f"Denied by preToolUse hook: {SOURCE}"
PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def bash(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": "run it"})


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(copilot: Copilot) -> None:
    copilot.install_hooks()
    entry = copilot.settings()["hooks"]["preToolUse"][0]
    assert entry["type"] == "command" and " copilot --timeout " in entry["bash"]
    copilot.server.script = Script(main=[turn(bash(FAILING))] * 4 + [say("Giving up.")])

    run = copilot.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    told = [m.text for m in copilot.server.tool_messages()]
    assert len(told) == 4, told
    assert "completed with exit code 2" in told[0]
    assert told[3].startswith(DENIED), told[3]

    session, events = only_session(copilot.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "copilot"
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["bash"] * 4
    ran = [r for _, r in pairs if r is not None]
    assert len(ran) == 3, pairs
    assert all(r["ok"] is False and r["error"].startswith("Exit code 2") for r in ran), ran
    assert len({c["call_id"] for c, _ in pairs}) == 4
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert refused and refused[0]["action"] == "block"
    assert_seq_ordered(events)


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    copilot: Copilot,
) -> None:
    answer_an_escalation_with_guidance(copilot, bash(FAILING))
    told = [m.text for m in copilot.server.tool_messages()]
    assert any(GUIDANCE in t and t.startswith(DENIED) for t in told), told


def test_a_healthy_session_is_never_denied_nor_told_anything(copilot: Copilot) -> None:
    copilot.sandbox.write("foo.py", FOO)
    copilot.sandbox.commit("add foo")
    copilot.install_hooks()
    foo = str(copilot.sandbox.work / "foo.py")
    copilot.server.script = Script(main=[
        turn(Text("Reading."), ToolCall("view", {"path": foo})),
        turn(bash(CHECK)),
        turn(ToolCall("edit", {"path": foo, "old_str": "return a - b",
                               "new_str": "return a + b"})),
        turn(bash(CHECK)),
        say("Fixed add."),
    ])

    run = copilot.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (copilot.sandbox.work / "foo.py").read_text() == FIXED
    assert not copilot.server.received(SOURCE), "the model was told something"
    _session, events = only_session(copilot.sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["view", "bash", "edit", "bash"]
    assert all(r is not None for _, r in pairs), "a call lost its result"
    assert [r["ok"] for _, r in pairs] == [True, False, True, True]
    assert pairs[1][1]["error"].startswith("Exit code 1")
    # The assistant's text before the first call ("Reading.") is read from Copilot's own
    # session-events file; after the merges it was sometimes missing (a timing race between
    # Copilot's concurrent sessionStart/userPromptSubmitted hooks and its writes, not yet
    # understood), so it is not asserted here: the closing note of issue 28 says so.
    assert events[-1]["type"] == "session_end"
    assert_seq_ordered(events)


def test_a_failed_edit_reaches_the_model_with_the_region(copilot: Copilot) -> None:
    copilot.install_hooks()
    copilot.sandbox.write("parser.py", PARSER)
    copilot.sandbox.commit("add parser")
    path = str(copilot.sandbox.work / "parser.py")
    copilot.server.script = Script(main=[
        turn(ToolCall("edit", {"path": path, "old_str": WRONG, "new_str": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = copilot.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    history = copilot.server.history()
    assert any("No match found" in str(m.get("content")) for m in history), history
    told = "\n".join(str(m.get("content")) for m in history)
    assert f"The text you searched for is not in {path}. The closest text is at lines 3-4" \
        in told, told[-3000:]
    _, events = only_session(copilot.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit"
