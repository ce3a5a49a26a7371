"""OpenCode and Kilo (`opencode_runner`, one plugin in either): the plugin installed into the
work dir's plugin folder; its refusal is the call's result, word for word."""

from typing import Any

from tests.agent_cli.e2e import SOURCE, of_type
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    LINE_3,
    Agent,
    Driver,
    Events,
    Pairs,
)
from tests.agent_cli.script import ToolCall, Turn, turn


class OpenCodeDriver(Driver):
    name = "opencode"
    shell_tool = "bash"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT})
    exit_2 = "cannot access 'missing-dir'"
    edit_failure = "Could not find oldString in the file"
    ends_session = False

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert all(self.exit_2 in t for t in told[:3]), told
        assert told[3].startswith(f"{SOURCE}:"), told[3]
        assert "does not exist" in told[3] or "repeat" in told[3], told[3]
        refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
        assert [v["action"] for v in refused] == ["block"]
        assert refused[0]["call_id"] == of_type(events, "tool_call")[3]["call_id"]

    def read(self, path: str) -> ToolCall:
        return ToolCall("read", {"filePath": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        # when the text is not there the tool throws, so OpenCode runs no `tool.execute.after`:
        # the plugin reports the failed call before the next model request and appends our
        # answer to the error
        return ToolCall("edit", {"filePath": path, "oldString": old, "newString": new})

    def healthy_more(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        notes = self.path(agent, "NOTES.md")
        return [turn(ToolCall("write", {"filePath": notes, "content": "add fixed\n"}))], \
            [[("write", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        foo, notes = self.path(agent, "foo.py"), self.path(agent, "NOTES.md")
        assert (agent.sandbox.work / "NOTES.md").read_text() == "add fixed\n"
        # recorded under the engine's argument names
        assert pairs[2][0]["args"] == {"file_path": foo, "old_string": "return a - b",
                                       "new_string": "return a + b"}
        assert pairs[4][0]["args"] == {"file_path": notes, "content": "add fixed\n"}
        messages = of_type(events, "message")
        assert messages[0]["role"] == "user" and "fix foo.py" in messages[0]["text"]
        said = [m["text"] for m in messages if m["role"] == "assistant"]
        assert said == ["Reading.", "Fixed add."], said

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        (result,) = told
        assert self.edit_failure in result, result
        assert "Agent Supervisor: The text you searched for is not in" in result, result
        assert "The closest text is at lines 3-4" in result, result
        assert LINE_3 in result, result
        (recorded,) = of_type(events, "tool_result")
        assert recorded["ok"] is False and recorded["error"].startswith("Could not find oldString")
        (hint,) = of_type(events, "hint")
        assert hint["message"] in result


class KiloDriver(OpenCodeDriver):
    name = "kilo"
