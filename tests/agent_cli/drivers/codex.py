"""Codex CLI (`codex_runner`): hooks in the sandbox's user `hooks.json`, run headless with
`--dangerously-bypass-hook-trust`; the model reads its call outputs from the Responses API."""

from typing import Any

from tests.agent_cli.e2e import CHECK, of_type
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
from tests.agent_cli.script import Text, Turn, say, turn


class CodexDriver(Driver):
    name = "codex"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, PLANS, USAGE})
    shell_tool = "Bash"
    shell_call = "exec_command"
    refusal_prefix = "Command blocked by PreToolUse hook: "
    exit_2 = "Process exited with code 2"
    escalation_repeats = 5
    plans_repeats = 5

    def shell_input(self, command: str) -> dict[str, Any]:
        return {"cmd": command}

    def told(self, agent: Agent) -> list[str]:
        return [o.output for o in agent.server.call_outputs()]

    def check_denied(self, agent: Agent, told: list[str], events: Events) -> None:
        assert "does not exist" in told[3]  # the reason says what to do instead
        assert events[0]["model"] == "fake-model"
        prompt = of_type(events, "message")[0]
        assert prompt["role"] == "user" and prompt["turn_id"]

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        # Codex's own tools are its shell: every step is a command
        return [
            turn(Text("Reading."), self.shell("cat foo.py")),
            turn(self.shell(CHECK)),
            turn(self.shell("sed -i 's/a - b/a + b/' foo.py")),
            turn(self.shell(CHECK), self.shell("git status --short")),
            turn(self.shell("grep -n 'a + b' foo.py")),
            say("Fixed add."),
        ], [[("Bash", True)], [("Bash", False)], [("Bash", True)], [("Bash", True)] * 2,
            [("Bash", True)]]

    def check_healthy(self, agent: Agent, run: Any, pairs: Pairs,
                      events: Events) -> None:
        outcomes = [(c["args"]["command"], r["ok"]) for c, r in pairs]
        assert (CHECK, False) in outcomes and outcomes.count((CHECK, True)) == 1
        assert of_type(events, "message")[-1]["text"] == "Fixed add."

    def check_usage(self, agent: Agent, events: Events) -> None:
        assert {u["model"] for u in of_type(events, "usage")} == {"fake-model"}
