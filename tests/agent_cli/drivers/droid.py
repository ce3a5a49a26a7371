"""Factory Droid (`droid_runner`): Claude Code-shaped hooks in `~/.factory/settings.json`. Droid
runs no PostToolUse for a failed call: the failures are recorded from its transcript (at the
next hook), which the scenarios prove too."""

from typing import Any

from tests.agent_cli.e2e import of_type, results_by_call
from tests.agent_cli.scenarios import Agent, Driver, Events, Pairs
from tests.agent_cli.script import ToolCall


class DroidDriver(Driver):
    name = "droid"
    shell_tool = "Bash"
    shell_call = "Execute"
    refusal_prefix = "Error: "
    exit_2 = "exit code: 2"

    def shell_input(self, command: str, why: str = "reads only") -> dict[str, Any]:
        return {"command": command, "summary": "run it", "riskLevel": "low",
                "riskLevelReason": why}

    def repeated(self, command: str, attempt: int) -> ToolCall:
        # the model words its notes on the same command differently each time
        return ToolCall("Execute", self.shell_input(command, f"reads only, try {attempt}"))

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        # the failures come from the transcript: Droid reports no failure to hooks
        assert [c["args"]["command"] for c, _ in results_by_call(events)] == [self.failing] * 4

    def read(self, path: str) -> ToolCall:
        return ToolCall("Read", {"file_path": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("Edit", {"file_path": path, "old_str": old, "new_str": new})

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        texts = [m["text"] for m in of_type(events, "message") if m["role"] == "assistant"]
        assert texts == ["Reading.", "Fixed add."]
