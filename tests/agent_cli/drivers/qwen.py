"""Qwen Code (`qwen_runner`): Claude Code-shaped hooks in `~/.qwen/settings.json`; the model
reads a refusal word for word as the tool's error."""

import json
from typing import Any

from tests.agent_cli.e2e import CHECK, FAILING_QUIETLY, SOURCE, of_type
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    USAGE,
    WRONG,
    Agent,
    Driver,
    Events,
    Pairs,
)
from tests.agent_cli.script import Text, ToolCall, Turn, say, turn


class QwenDriver(Driver):
    name = "qwen"
    fixture = "qwen"
    agent = "qwen-code"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT, USAGE})
    shell_tool = "run_shell_command"
    # Qwen Code reports a one-shot run's command at its exit, at times before it read what the
    # command printed: `ls`'s message would be in some results and not others
    failing = FAILING_QUIETLY
    exit_2 = "Exit Code: 2"
    edit_failure = "0 occurrences found for old_string"
    ends_session = False  # SessionEnd does not fire in a headless run
    # Qwen Code writes an answer's usage to its chat file at times only after the call's hooks
    # ran: the counts are exact, but a budget may hold one call late (docs/qwen-code.md).
    usage_last_may_race = True
    usage_holds_in_time = False

    def shell(self, command: str) -> ToolCall:
        return ToolCall("run_shell_command", {"command": command, "description": "run it"})

    def reason(self, text: str) -> str | None:
        return text if text.startswith(SOURCE) else None

    def check_install(self, agent: Agent) -> None:
        settings = json.loads(agent.settings_path.read_text())
        assert settings["security"]["auth"]["selectedType"] == "openai"  # the user's keys stay
        assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] < 1000  # seconds

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert "Exit Code" not in told[3]  # refused: never ran
        assert len(of_type(events, "task_start")) == 1  # the empty prompts between turns are none

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        foo = str(agent.sandbox.work / "foo.py")
        return [
            turn(Text("Reading."), ToolCall("read_file", {"file_path": foo})),
            turn(self.shell(CHECK)),
            turn(ToolCall("edit", {"file_path": foo, "old_string": "return a - b",
                                   "new_string": "return a + b"})),
            turn(self.shell(CHECK), self.shell("git status --short")),
            say("Fixed add."),
        ], [[("read_file", True)], [("run_shell_command", False)], [("edit", True)],
            [("run_shell_command", True)] * 2]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        messages = of_type(events, "message")
        assert [m["text"] for m in messages if m["role"] == "assistant"][:1] == ["Reading."]
        assert messages[-1]["role"] == "assistant" and messages[-1]["text"] == "Fixed add."

    def check_usage(self, agent: Agent, events: Events) -> None:
        assert {u["model"] for u in of_type(events, "usage")} == {"fake-model"}

    def failed_edit(self, path: str) -> list[Turn]:
        return [
            turn(ToolCall("read_file", {"file_path": path})),  # Qwen edits only files it read
            turn(ToolCall("edit", {"file_path": path, "old_string": WRONG, "new_string": "pass"})),
        ]

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        assert len(told) == 2, told
        assert self.edit_failure in told[1]
        # the hint (additionalContext) follows the tool's error in the same tool result
        assert f"The text you searched for is not in {path}. The closest text is at lines 3-4" \
            in told[1], told[1]
        assert "  3 │     for line in text.splitlines():" in told[1]
