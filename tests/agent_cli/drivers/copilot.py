"""GitHub Copilot CLI (`copilot_runner`): hooks in `~/.copilot/settings.json`; its payloads name
no event and no call, so these scenarios prove the target tells the events apart and pairs calls
with their results."""

from tests.agent_cli.scenarios import (
    DENY,
    ESCALATION,
    FAILED_EDIT,
    HEALTHY,
    Agent,
    Driver,
    Events,
    closest,
)
from tests.agent_cli.script import ToolCall


class CopilotDriver(Driver):
    """The healthy run's text before the first call ("Reading.") is read from Copilot's own
    session-events file; after the merges it was sometimes missing (a timing race between
    Copilot's concurrent sessionStart/userPromptSubmitted hooks and its writes, not yet
    understood), so it is not asserted: the closing note of issue 28 says so."""

    name = "copilot"
    shell_tool = "bash"
    refusal_prefix = "Denied by preToolUse hook: "
    scenarios = frozenset({DENY, ESCALATION, HEALTHY, FAILED_EDIT})
    exit_2 = "completed with exit code 2"
    edit_failure = "No match found"

    def check_install(self, agent: Agent) -> None:
        entry = agent.settings()["hooks"]["preToolUse"][0]
        assert entry["type"] == "command" and " copilot --timeout " in entry["bash"]

    def read(self, path: str) -> ToolCall:
        return ToolCall("view", {"path": path})

    def edit(self, path: str, old: str, new: str) -> ToolCall:
        return ToolCall("edit", {"path": path, "old_str": old, "new_str": new})

    def check_failed_edit(self, agent: Agent, path: str, told: list[str],
                          events: Events) -> None:
        # the context Copilot adds after a failed call may be a message of its own
        said = "\n".join(str(m.get("content")) for m in agent.server.history())
        assert closest(path) in said, said[-3000:]
