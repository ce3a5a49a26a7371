"""One driver per agent CLI for the shared scenarios (`tests/agent_cli/scenarios.py`): the next
CLI is one module here and one line below."""

from tests.agent_cli.drivers.claude import ClaudeDriver
from tests.agent_cli.drivers.cline import ClineDriver
from tests.agent_cli.drivers.codex import CodexDriver
from tests.agent_cli.drivers.copilot import CopilotDriver
from tests.agent_cli.drivers.droid import DroidDriver
from tests.agent_cli.drivers.gemini import GeminiDriver
from tests.agent_cli.drivers.opencode import KiloDriver, OpenCodeDriver
from tests.agent_cli.drivers.pi import PiDriver
from tests.agent_cli.drivers.qwen import QwenDriver
from tests.agent_cli.scenarios import Driver

DRIVERS: tuple[Driver, ...] = (
    ClaudeDriver(),
    CodexDriver(),
    GeminiDriver(),
    QwenDriver(),
    DroidDriver(),
    CopilotDriver(),
    OpenCodeDriver(),
    KiloDriver(),
    ClineDriver(),
    PiDriver(),
)


def having(scenario: str) -> list[Driver]:
    """The drivers whose CLI runs `scenario`."""
    return [d for d in DRIVERS if scenario in d.scenarios]
