"""The OpenCode and Kilo targets against the real binaries (`opencode-ai`, `@kilocode/cli`,
pinned) and a scripted Chat Completions model.

The plugin is installed by `supervisor install opencode|kilo --project WORK` into the work dir's
plugin folder. The scenarios every CLI shares run in `test_scenarios.py` (`drivers/opencode.py`,
for both); here, what only the plugin does, in both CLIs.
"""

from tests.agent_cli.opencode_runner import OpenCode
from tests.agent_cli.script import Script, ToolCall, say, turn


def shell(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command, "description": "run it"})


def test_a_plugin_that_cannot_reach_the_supervisor_lets_the_agent_work(
    opencode_like: OpenCode,
) -> None:
    """Fail open: with the hook client gone, every call runs as without the plugin."""
    agent = opencode_like
    agent.install_hooks()
    text = agent.plugin_path.read_text()
    start = text.index("const HOOK = ")
    end = text.index("\n", start)
    gone = agent.sandbox.base / "no-such-hook-client"
    agent.plugin_path.write_text(f'{text[:start]}const HOOK = ["{gone}"];{text[end:]}')
    agent.server.script = Script(main=[turn(shell("echo hello > x.txt")), say("Wrote it.")])

    run = agent.run("write x.txt")

    assert run.returncode == 0, run.describe()
    assert (agent.sandbox.work / "x.txt").read_text() == "hello\n"
    assert not agent.sandbox.sessions()
