"""Gemini CLI (`gemini_runner`): hooks in the work dir's `.gemini/settings.json` (the folder
trusted through `GEMINI_CLI_TRUST_WORKSPACE`); the model reads function responses, a refusal as
an error."""

import json
from typing import Any

from tests.agent_cli.e2e import of_type
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
from tests.agent_cli.script import ToolCall, Turn, turn


class GeminiDriver(Driver):
    name = "gemini"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, PLANS, USAGE})
    shell_tool = "run_shell_command"
    refusal_prefix = "Tool execution blocked: "
    exit_2 = "Exit Code: 2"

    def told(self, agent: Agent) -> list[str]:
        return [r.text for r in agent.server.function_responses()]

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

    def read(self, path: str) -> ToolCall:
        return ToolCall("read_file", {"file_path": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("replace", {"file_path": path, "old_string": old, "new_string": new,
                                    "instruction": "fix add"})

    def path(self, agent: Agent, name: str) -> str:
        return name  # relative, as the model gave it

    def healthy_beside(self) -> list[ToolCall]:
        return [self.shell("git status --short")]

    def healthy_more(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        return [turn(ToolCall("glob", {"pattern": "*.py"}),
                     ToolCall("grep_search", {"pattern": "a + b"}))], \
            [[("glob", True), ("grep_search", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        assert of_type(events, "message")[-1]["role"] == "assistant"

    def check_usage(self, agent: Agent, events: Events) -> None:
        assert all(u["model"] for u in of_type(events, "usage"))
