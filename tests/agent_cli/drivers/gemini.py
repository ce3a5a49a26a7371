"""Gemini CLI (`gemini_runner`): hooks in the work dir's `.gemini/settings.json` (the folder
trusted through `GEMINI_CLI_TRUST_WORKSPACE`); the model reads function responses, a refusal as
an error."""

import json
from typing import Any

from tests.agent_cli.e2e import CHECK, SOURCE, of_type
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    HEALTHY,
    PLANS,
    USAGE,
    Agent,
    Driver,
    Events,
    Pairs,
)
from tests.agent_cli.script import Text, ToolCall, Turn, say, turn

BLOCKED = f"Tool execution blocked: {SOURCE}"


class GeminiDriver(Driver):
    name = "gemini"
    fixture = "gemini"
    agent = "gemini"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, PLANS, USAGE})
    shell_tool = "run_shell_command"
    exit_2 = "Exit Code: 2"

    def shell(self, command: str) -> ToolCall:
        return ToolCall("run_shell_command", {"command": command, "description": "run it"})

    def told(self, agent: Agent) -> list[str]:
        return [r.text for r in agent.server.function_responses()]

    def reason(self, text: str) -> str | None:
        return text.removeprefix(BLOCKED[:-len(SOURCE)]) if text.startswith(BLOCKED) else None

    def check_install(self, agent: Agent) -> None:
        settings = json.loads((agent.sandbox.work / ".gemini" / "settings.json").read_text())
        assert settings["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"] % 1000 == 0  # ms

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        responses = agent.server.function_responses()
        assert responses[3].is_error
        assert "does not exist" in told[3]
        ran = [e for e in of_type(events, "tool_result")]
        assert len(ran) == sum(1 for r in responses if not r.is_error)
        assert all("PGID" not in r["output"] for r in ran)  # identical failures look identical

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        return [
            turn(Text("Reading."), ToolCall("read_file", {"file_path": "foo.py"})),
            turn(self.shell(CHECK)),
            turn(ToolCall("replace", {"file_path": "foo.py", "old_string": "return a - b",
                                      "new_string": "return a + b", "instruction": "fix add"})),
            turn(self.shell(CHECK), self.shell("git status --short")),
            turn(ToolCall("glob", {"pattern": "*.py"}),
                 ToolCall("grep_search", {"pattern": "a + b"})),
            say("Fixed add."),
        ], [[("read_file", True)], [("run_shell_command", False)], [("replace", True)],
            [("run_shell_command", True)] * 2, [("glob", True), ("grep_search", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        assert of_type(events, "message")[-1]["role"] == "assistant"

    def check_usage(self, agent: Agent, events: Events) -> None:
        assert all(u["model"] for u in of_type(events, "usage"))
