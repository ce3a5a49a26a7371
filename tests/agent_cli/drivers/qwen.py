"""Qwen Code (`qwen_runner`): Claude Code-shaped hooks in `~/.qwen/settings.json`; the model
reads a refusal word for word as the tool's error."""

import json
from typing import Any

from tests.agent_cli.e2e import FAILING_QUIETLY, of_type
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    LINE_3,
    USAGE,
    Agent,
    Driver,
    Events,
    Pairs,
    closest,
)
from tests.agent_cli.script import ToolCall


class QwenDriver(Driver):
    name = "qwen"
    agent = "qwen-code"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT, USAGE})
    shell_tool = "run_shell_command"
    # Qwen Code reports a one-shot run's command at its exit, at times before it read what the
    # command printed: `ls`'s message would be in some results and not others
    failing = FAILING_QUIETLY
    exit_2 = "Exit Code: 2"
    edit_failure = "0 occurrences found for old_string"
    reads_before_edit = True  # Qwen edits only files it read
    ends_session = False  # SessionEnd does not fire in a headless run
    # Qwen Code writes an answer's usage to its chat file at times only after the call's hooks
    # ran (a queue of writes): counted at a later hook, so a budget may hold one call late; the
    # next call's PreToolUse waits (at most 0.3 s) for the answer asking for the call before,
    # and the Stop hook for the last answer, so the counts are exact (docs/qwen-code.md)
    usage_late = 1

    def check_install(self, agent: Agent) -> None:
        settings = json.loads(agent.settings_path.read_text())
        assert settings["security"]["auth"]["selectedType"] == "openai"  # the user's keys stay
        assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"] < 1000  # seconds

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert "Exit Code" not in told[3]  # refused: never ran
        assert len(of_type(events, "task_start")) == 1  # the empty prompts between turns are none

    def read(self, path: str) -> ToolCall:
        return ToolCall("read_file", {"file_path": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("edit", {"file_path": path, "old_string": old, "new_string": new})

    def healthy_beside(self) -> list[ToolCall]:
        return [self.shell("git status --short")]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        messages = of_type(events, "message")
        assert [m["text"] for m in messages if m["role"] == "assistant"][:1] == ["Reading."]
        assert messages[-1]["role"] == "assistant" and messages[-1]["text"] == "Fixed add."

    def check_usage(self, agent: Agent, events: Events) -> None:
        assert {u["model"] for u in of_type(events, "usage")} == {"fake-model"}

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        assert len(told) == 2, told
        assert self.edit_failure in told[1]
        # the hint (additionalContext) follows the tool's error in the same tool result
        assert closest(path) in told[1], told[1]
        assert LINE_3 in told[1]
