"""The real OpenCode and Kilo: an `edit` whose oldString is not in the file fails (the tool
throws, so OpenCode runs no `tool.execute.after`), and the model receives where the closest text
really is with the failure: the plugin reports the failed call before the next model request and
appends the supervisor's answer to the error the model reads."""

from tests.agent_cli.e2e import of_type, only_session
from tests.agent_cli.opencode_runner import OpenCode
from tests.agent_cli.script import Script, ToolCall, say, turn

PARSER = """\
def parse(text):
    rows = []
    for line in text.splitlines():
        rows.append(line.split(","))
    return rows
"""
WRONG = "for line in data.readlines():\n    rows.append(line.strip().split(';'))"


def test_a_failed_edit_reaches_the_model_with_the_region(opencode_like: OpenCode) -> None:
    agent = opencode_like
    agent.install_hooks()
    agent.sandbox.write("parser.py", PARSER)
    agent.sandbox.commit("add parser")
    parser = str(agent.sandbox.work / "parser.py")
    agent.server.script = Script(main=[
        turn(ToolCall("edit", {"filePath": parser, "oldString": WRONG, "newString": "pass"})),
        say("I will copy the lines as shown."),
    ])

    run = agent.run("tidy parser.py")

    assert run.returncode == 0, run.describe()
    (told,) = [m.text for m in agent.server.tool_messages()]
    assert "Could not find oldString in the file" in told, told
    assert "Agent Supervisor: The text you searched for is not in" in told, told
    assert "The closest text is at lines 3-4" in told, told
    assert "  3 │     for line in text.splitlines():" in told, told
    _, events = only_session(agent.sandbox)
    (result,) = of_type(events, "tool_result")
    assert result["ok"] is False and result["error"].startswith("Could not find oldString")
    (hint,) = of_type(events, "hint")
    assert hint["kind"] == "failed_edit" and hint["message"] in told
