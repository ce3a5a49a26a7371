"""Cline CLI (`cline_runner`): the plugin installed into `WORK/.cline/plugins/`, the session run
in the CLI's own process. The plugin's `skip` reason is the call's result: `{"error": reason}`.
Cline gives a plugin hook 3 s, so an escalation cannot hold a call as the shared scenario
expects: `test_cline_e2e` shows what it does instead."""

import json
from typing import Any

from tests.agent_cli.e2e import CHECK, SOURCE, of_type
from tests.agent_cli.scenarios import (
    DENY,
    FAILED_EDIT,
    HEALTHY,
    Agent,
    Driver,
    Events,
    Pairs,
)
from tests.agent_cli.script import Text, ToolCall, Turn, say, turn


class ClineDriver(Driver):
    name = "cline"
    shell_tool = "run_commands"
    scenarios = frozenset({DENY, HEALTHY, FAILED_EDIT})  # an escalation: test_cline_e2e
    exit_2 = "cannot access 'missing-dir'"
    edit_failure = "No replacement performed: text not found"
    exit_2_recorded = "Command exited with code 2"
    healthy_failure = "Command exited with code 1"
    ends_session = False

    def shell_input(self, command: str) -> dict[str, Any]:
        return {"commands": [command]}

    def reason(self, text: str) -> str | None:
        try:
            error = json.loads(text).get("error")
        except (ValueError, AttributeError):
            error = text
        return error if isinstance(error, str) and SOURCE in error else None

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert all(self.exit_2 in t for t in told[:3]), told
        assert json.loads(told[3])["error"].startswith(f"{SOURCE}:"), told[3]
        refused = [v for v in of_type(events, "verdict") if v["action"] != "allow"]
        assert [v["action"] for v in refused] == ["block"]

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("editor", {"path": path, "old_text": old, "new_text": new})

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        # no read first: Cline's editor needs none
        foo = self.path(agent, "foo.py")
        return [
            turn(Text("Checking."), self.shell(CHECK)),
            turn(self.edit(foo, "return a - b", "return a + b")),
            turn(self.shell(CHECK)),
            say("Fixed add."),
        ], [[("run_commands", False)], [("editor", True)], [("run_commands", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        messages = of_type(events, "message")
        assert messages[0] == {**messages[0], "role": "user", "text": "fix foo.py"}
        said = [m["text"] for m in messages if m["role"] == "assistant"]
        assert said == ["Checking.", "Fixed add."], said

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        (result,) = told
        assert self.edit_failure in result, result
        # the supervisor's answer reaches the model as hook context after the result
        assert agent.server.received("Agent Supervisor: The text you searched for is not in")
