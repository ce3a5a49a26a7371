"""The OpenCode and Kilo targets against the real binaries (`opencode-ai`, `@kilocode/cli`,
pinned) and a scripted Chat Completions model.

The plugin is installed by `supervisor install opencode|kilo --project WORK` into the work dir's
plugin folder. Each scenario runs in both CLIs (the same plugin) and asserts on what the model
received (the fake's request log) and what the store recorded.
"""

from tests.agent_cli.chat_api import ToolMessage
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
from tests.agent_cli.opencode_runner import OpenCode
from tests.agent_cli.script import Script, Text, ToolCall, say, turn


def shell(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": "run it"})


def texts(messages: list[ToolMessage]) -> list[str]:
    return [m.text for m in messages]


def test_a_repeated_failing_command_is_denied_by_the_4th_attempt(opencode_like: OpenCode) -> None:
    agent = opencode_like
    agent.install_hooks()
    agent.server.script = Script(main=[turn(shell(FAILING))] * 4 + [say("Giving up.")])

    run = agent.run("list missing-dir")

    assert run.returncode == 0, run.describe()
    told = texts(agent.server.tool_messages())
    assert len(told) == 4, told
    assert all("cannot access 'missing-dir'" in t for t in told[:3]), told
    # the plugin's refusal is the call's result, word for word
    assert told[3].startswith(f"{SOURCE}:"), told[3]
    assert "does not exist" in told[3] or "repeat" in told[3], told[3]

    session, events = only_session(agent.sandbox)
    assert session == run.session_id
    assert events[0]["type"] == "session_start"
    assert events[0]["agent"] == agent.flavor.target
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["bash"] * 4
    ran = [r for _, r in pairs[:3]]
    assert all(r is not None and r["ok"] is False and r["error"].startswith("Exit code 2")
               for r in ran), ran
    assert pairs[3][1] is None  # refused: it never ran
    assert len({c["call_id"] for c, _ in pairs}) == 4  # OpenCode's own call ids
    refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
    assert [v["action"] for v in refused] == ["block"]
    assert refused[0]["call_id"] == pairs[3][0]["call_id"]
    assert_seq_ordered(events)


def test_an_escalation_is_held_and_the_operators_guidance_reaches_the_model(
    opencode_like: OpenCode,
) -> None:
    answer_an_escalation_with_guidance(opencode_like, shell(FAILING))
    told = texts(opencode_like.server.tool_messages())
    assert any(GUIDANCE in t and t.startswith(SOURCE) for t in told), told


def test_a_healthy_session_is_never_denied_nor_told_anything(opencode_like: OpenCode) -> None:
    agent = opencode_like
    sandbox = agent.sandbox
    sandbox.write("foo.py", FOO)
    sandbox.commit("add foo")
    agent.install_hooks()
    foo, notes = str(sandbox.work / "foo.py"), str(sandbox.work / "NOTES.md")
    agent.server.script = Script(main=[
        turn(Text("Reading."), ToolCall("read", {"filePath": foo})),
        turn(shell(CHECK)),
        turn(ToolCall("edit", {"filePath": foo, "oldString": "return a - b",
                               "newString": "return a + b"})),
        turn(shell(CHECK)),
        turn(ToolCall("write", {"filePath": notes, "content": "add fixed\n"})),
        say("Fixed add."),
    ])

    run = agent.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    assert (sandbox.work / "foo.py").read_text() == FIXED
    assert (sandbox.work / "NOTES.md").read_text() == "add fixed\n"
    assert not agent.server.received(SOURCE), "the model was told something"
    _session, events = only_session(sandbox)
    assert {v["action"] for v in of_type(events, "verdict")} == {"allow"}
    pairs = results_by_call(events)
    assert [c["tool"] for c, _ in pairs] == ["read", "bash", "edit", "bash", "write"]
    # recorded under the engine's argument names
    assert pairs[2][0]["args"] == {"file_path": foo, "old_string": "return a - b",
                                   "new_string": "return a + b"}
    assert all(r is not None for _, r in pairs), "a call lost its result"
    assert [r["ok"] for _, r in pairs] == [True, False, True, True, True]
    assert pairs[1][1]["error"].startswith("Exit code 1")
    assert pairs[4][0]["args"] == {"file_path": notes, "content": "add fixed\n"}
    messages = of_type(events, "message")
    assert messages[0]["role"] == "user" and "fix foo.py" in messages[0]["text"]
    said = [m["text"] for m in messages if m["role"] == "assistant"]
    assert said == ["Reading.", "Fixed add."], said
    assert_seq_ordered(events)


def test_a_plugin_that_cannot_reach_the_supervisor_lets_the_agent_work(
    opencode_like: OpenCode,
) -> None:
    """Fail open: with the hook client gone, every call runs as without the plugin."""
    agent = opencode_like
    agent.install_hooks()
    text = agent.plugin_path.read_text()
    start = text.index("const HOOK = ")
    end = text.index("\n", start)
    gone = agent.sandbox.base / "no-such-hook-client"
    agent.plugin_path.write_text(f'{text[:start]}const HOOK = ["{gone}"];{text[end:]}')
    agent.server.script = Script(main=[turn(shell("echo hello > x.txt")), say("Wrote it.")])

    run = agent.run("write x.txt")

    assert run.returncode == 0, run.describe()
    assert (agent.sandbox.work / "x.txt").read_text() == "hello\n"
    assert not agent.sandbox.sessions()
