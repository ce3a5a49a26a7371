"""The Qwen Code target against the real binary (`@qwen-code/qwen-code`, pinned) and a scripted
Chat Completions model.

Hooks installed by `supervisor install qwen-code --user` into the sandbox's
`~/.qwen/settings.json`. Each scenario asserts on what the model received (the fake's log: the
`role: "tool"` messages) and what the store recorded.
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
from tests.agent_cli.qwen_runner import QwenCode
from tests.agent_cli.script import Script, Text, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def shell(command: str) -> ToolCall:
    return ToolCall("run_shell_command", {"command": command, "description": "run it"})


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(qwen: QwenCode) -> None:
    qwen.install_hooks()
    settings = json.loads(qwen.settings_path.read_text())
    assert settings["security"]["auth"]["selectedType"] == "openai"  # the user's keys stay
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] < 1000  # seconds
    qwen.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])

    run = qwen.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    told = [m.text for m in qwen.server.tool_messages()]
    assert len(told) == 4, told
    assert "Exit Code: 2" in told[0]
    assert told[3].startswith(SOURCE) and "Exit Code" not in told[3]  # refused: never ran

    session, events = only_session(qwen.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start" and events[0]["agent"] == "qwen-code"
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["run_shell_command"] * 4
    ran = [r for _, r in pairs if r is not None]
    assert len(ran) == 3, pairs
    assert all(r["ok"] is False and r["error"].startswith("Exit code 2") for r in ran), ran
    assert len({c["call_id"] for c, _ in pairs}) == 4
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert refused and refused[0]["action"] == "block"
    assert len(of_type(events, "task_start")) == 1  # the empty prompts between turns are none
    assert_seq_ordered(events)


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    qwen: QwenCode,
) -> None:
    answer_an_escalation_with_guidance(qwen, shell(FAILING))
    told = [m.text for m in qwen.server.tool_messages()]
    assert any(GUIDANCE in t and t.startswith(SOURCE) for t in told), told


def test_a_healthy_session_is_never_denied_nor_told_anything(qwen: QwenCode) -> None:
    qwen.sandbox.write("foo.py", FOO)
    qwen.sandbox.commit("add foo")
    qwen.install_hooks()
    foo = str(qwen.sandbox.work / "foo.py")
    qwen.server.script = Script(main=[
        turn(Text("Reading."), ToolCall("read_file", {"file_path": foo})),
        turn(shell(CHECK)),
        turn(ToolCall("edit", {"file_path": foo, "old_string": "return a - b",
                               "new_string": "return a + b"})),
        turn(shell(CHECK), shell("git status --short")),
        say("Fixed add."),
    ])

    run = qwen.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (qwen.sandbox.work / "foo.py").read_text() == FIXED
    assert not qwen.server.received(SOURCE), "the model was told something"
    _session, events = only_session(qwen.sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs][:3] == ["read_file", "run_shell_command", "edit"]
    assert all(r is not None for _, r in pairs), "a call lost its result"
    assert [r["ok"] for _, r in pairs] == [True, False, True, True, True]
    assert "Exit code 1" in pairs[1][1]["error"]
    messages = of_type(events, "message")
    assert [m["text"] for m in messages if m["role"] == "assistant"][:1] == ["Reading."]
    assert messages[-1]["role"] == "assistant" and messages[-1]["text"] == "Fixed add."
    assert_seq_ordered(events)


def test_a_failed_edit_reaches_the_model_with_the_region(qwen: QwenCode) -> None:
    qwen.install_hooks()
    qwen.sandbox.write("parser.py", PARSER)
    qwen.sandbox.commit("add parser")
    path = str(qwen.sandbox.work / "parser.py")
    qwen.server.script = Script(main=[
        turn(ToolCall("read_file", {"file_path": path})),  # Qwen edits only files it read
        turn(ToolCall("edit", {"file_path": path, "old_string": WRONG, "new_string": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = qwen.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    told = qwen.server.tool_messages()
    assert len(told) == 2, told
    assert "0 occurrences found for old_string" in told[1].text
    # the hint (additionalContext) follows the tool's error in the same tool result
    assert f"The text you searched for is not in {path}. The closest text is at lines 3-4" \
        in told[1].text, told[1].text
    assert "  3 │     for line in text.splitlines():" in told[1].text
    _, events = only_session(qwen.sandbox)
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit"


def test_over_http_the_4th_identical_failing_call_is_denied(qwen: QwenCode) -> None:
    """`--transport http`: Qwen's per-call events POST to the resident server (started by the
    first command hook, SessionStart)."""
    from tests.hookd_helpers import stop_servers

    qwen.install_hooks("--transport", "http")
    hooks = json.loads(qwen.settings_path.read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["type"] == "http"
    assert hooks["SessionStart"][0]["hooks"][0]["type"] == "command"
    qwen.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])
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
