"""Factory Droid (`droid_runner`): Claude Code-shaped hooks in `~/.factory/settings.json`. Droid
runs no PostToolUse for a failed call: the failures are recorded from its transcript (at the
next hook), which the scenarios prove too."""

from typing import Any

from tests.agent_cli.e2e import CHECK, SOURCE, of_type, results_by_call
from tests.agent_cli.scenarios import Agent, Driver, Events, Pairs
from tests.agent_cli.script import Text, ToolCall, Turn, say, turn


def execute(command: str, why: str = "reads only") -> ToolCall:
    return ToolCall("Execute", {"command": command, "summary": "run it", "riskLevel": "low",
                                "riskLevelReason": why})


class DroidDriver(Driver):
    name = "droid"
    fixture = "droid"
    agent = "droid"
    shell_tool = "Bash"
    exit_2 = "exit code: 2"

    def shell(self, command: str) -> ToolCall:
        return execute(command)

    def repeated(self, command: str, attempt: int) -> ToolCall:
        # the model words its notes on the same command differently each time
        return execute(command, f"reads only, try {attempt}")

    def reason(self, text: str) -> str | None:
        return text.removeprefix("Error: ") if text.startswith(f"Error: {SOURCE}") else None

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        # the failures come from the transcript: Droid reports no failure to hooks
        assert [c["args"]["command"] for c, _ in results_by_call(events)] == [self.failing] * 4

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        foo = str(agent.sandbox.work / "foo.py")
        return [
            turn(Text("Reading."), ToolCall("Read", {"file_path": foo})),
            turn(self.shell(CHECK)),
            turn(ToolCall("Edit", {"file_path": foo, "old_str": "return a - b",
                                   "new_str": "return a + b"})),
            turn(self.shell(CHECK)),
            say("Fixed add."),
        ], [[("Read", True)], [("Bash", False)], [("Edit", True)], [("Bash", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        texts = [m["text"] for m in of_type(events, "message") if m["role"] == "assistant"]
        assert texts == ["Reading.", "Fixed add."]
