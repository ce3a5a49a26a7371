"""OpenCode and Kilo (`opencode_runner`, one plugin in either): the plugin installed into the
work dir's plugin folder; its refusal is the call's result, word for word."""

from typing import Any

from tests.agent_cli.e2e import CHECK, SOURCE, of_type
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    WRONG,
    Agent,
    Driver,
    Events,
    Pairs,
)
from tests.agent_cli.script import Text, ToolCall, Turn, say, turn


class OpenCodeDriver(Driver):
    name = "opencode"
    fixture = "opencode"
    agent = "opencode"
    shell_tool = "bash"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT})
    exit_2 = "cannot access 'missing-dir'"
    edit_failure = "Could not find oldString in the file"
    ends_session = False

    def shell(self, command: str) -> ToolCall:
        return ToolCall("bash", {"command": command, "description": "run it"})

    def reason(self, text: str) -> str | None:
        return text if text.startswith(SOURCE) else None

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert all(self.exit_2 in t for t in told[:3]), told
        assert told[3].startswith(f"{SOURCE}:"), told[3]
        assert "does not exist" in told[3] or "repeat" in told[3], told[3]
        refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
        assert [v["action"] for v in refused] == ["block"]
        assert refused[0]["call_id"] == of_type(events, "tool_call")[3]["call_id"]

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        foo, notes = str(agent.sandbox.work / "foo.py"), str(agent.sandbox.work / "NOTES.md")
        return [
            turn(Text("Reading."), ToolCall("read", {"filePath": foo})),
            turn(self.shell(CHECK)),
            turn(ToolCall("edit", {"filePath": foo, "oldString": "return a - b",
                                   "newString": "return a + b"})),
            turn(self.shell(CHECK)),
            turn(ToolCall("write", {"filePath": notes, "content": "add fixed\n"})),
            say("Fixed add."),
        ], [[("read", True)], [("bash", False)], [("edit", True)], [("bash", True)],
            [("write", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        foo, notes = str(agent.sandbox.work / "foo.py"), str(agent.sandbox.work / "NOTES.md")
        assert (agent.sandbox.work / "NOTES.md").read_text() == "add fixed\n"
        # recorded under the engine's argument names
        assert pairs[2][0]["args"] == {"file_path": foo, "old_string": "return a - b",
                                       "new_string": "return a + b"}
        assert pairs[4][0]["args"] == {"file_path": notes, "content": "add fixed\n"}
        messages = of_type(events, "message")
        assert messages[0]["role"] == "user" and "fix foo.py" in messages[0]["text"]
        said = [m["text"] for m in messages if m["role"] == "assistant"]
        assert said == ["Reading.", "Fixed add."], said

    def failed_edit(self, path: str) -> list[Turn]:
        # the tool throws, so OpenCode runs no `tool.execute.after`: the plugin reports the
        # failed call before the next model request and appends our answer to the error
        return [turn(ToolCall("edit", {"filePath": path, "oldString": WRONG,
                                       "newString": "pass"}))]

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        (result,) = told
        assert self.edit_failure in result, result
        assert "Agent Supervisor: The text you searched for is not in" in result, result
        assert "The closest text is at lines 3-4" in result, result
        assert "  3 │     for line in text.splitlines():" in result, result
        (recorded,) = of_type(events, "tool_result")
        assert recorded["ok"] is False and recorded["error"].startswith("Could not find oldString")
        (hint,) = of_type(events, "hint")
        assert hint["message"] in result


class KiloDriver(OpenCodeDriver):
    name = "kilo"
    fixture = "kilo"
    agent = "kilo"
