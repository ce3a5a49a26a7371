"""GitHub Copilot CLI (`copilot_runner`): hooks in `~/.copilot/settings.json`; its payloads name
no event and no call, so these scenarios prove the target tells the events apart and pairs calls
with their results."""

from tests.agent_cli.e2e import CHECK, SOURCE
from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    WRONG,
    Agent,
    Driver,
    Events,
)
from tests.agent_cli.script import Text, ToolCall, Turn, say, turn

DENIED = f"Denied by preToolUse hook: {SOURCE}"


class CopilotDriver(Driver):
    name = "copilot"
    fixture = "copilot"
    agent = "copilot"
    shell_tool = "bash"
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT})
    exit_2 = "completed with exit code 2"
    edit_failure = "No match found"

    def shell(self, command: str) -> ToolCall:
        return ToolCall("bash", {"command": command, "description": "run it"})

    def reason(self, text: str) -> str | None:
        return text.removeprefix(DENIED[:-len(SOURCE)]) if text.startswith(DENIED) else None

    def check_install(self, agent: Agent) -> None:
        entry = agent.settings()["hooks"]["preToolUse"][0]
        assert entry["type"] == "command" and " copilot --timeout " in entry["bash"]

    def healthy(self, agent: Agent) -> tuple[list[Turn], list[list[tuple[str, bool]]]]:
        # The assistant's text before the first call ("Reading.") is read from Copilot's own
        # session-events file; after the merges it was sometimes missing (a timing race between
        # Copilot's concurrent sessionStart/userPromptSubmitted hooks and its writes, not yet
        # understood), so it is not asserted: the closing note of issue 28 says so.
        foo = str(agent.sandbox.work / "foo.py")
        return [
            turn(Text("Reading."), ToolCall("view", {"path": foo})),
            turn(self.shell(CHECK)),
            turn(ToolCall("edit", {"path": foo, "old_str": "return a - b",
                                   "new_str": "return a + b"})),
            turn(self.shell(CHECK)),
            say("Fixed add."),
        ], [[("view", True)], [("bash", False)], [("edit", True)], [("bash", True)]]

    def failed_edit(self, path: str) -> list[Turn]:
        return [turn(ToolCall("edit", {"path": path, "old_str": WRONG, "new_str": "pass"}))]

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        # the context Copilot adds after a failed call may be a message of its own
        said = "\n".join(str(m.get("content")) for m in agent.server.history())
        assert f"The text you searched for is not in {path}. The closest text is at lines 3-4" \
            in said, said[-3000:]
