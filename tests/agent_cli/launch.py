"""How each agent CLI of the scenario kit is started outside pytest (the `agent_cli` benchmark):
its pinned binary, its fake model API and its runner, keyed by the driver's `fixture` (the
conftest fixture of that name builds the same runner for the tests)."""

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.chat_api import ChatServer
from tests.agent_cli.claude_runner import ClaudeCode
from tests.agent_cli.cline_runner import Cline
from tests.agent_cli.codex_runner import Codex
from tests.agent_cli.copilot_runner import Copilot
from tests.agent_cli.drivers.pi import Pi
from tests.agent_cli.droid_runner import Droid
from tests.agent_cli.gemini_api import GeminiServer
from tests.agent_cli.gemini_runner import Gemini
from tests.agent_cli.model_server import ModelServer
from tests.agent_cli.openai_api import OpenAIServer
from tests.agent_cli.opencode_runner import KILO, OPENCODE, OpenCode
from tests.agent_cli.qwen_runner import QwenCode
from tests.agent_cli.runner import AgentRunner
from tests.agent_cli.sandbox import Sandbox
from tests.agent_cli.script import Script


@dataclass(frozen=True, slots=True)
class Launch:
    """One CLI: the binary to ensure, the fake API it talks to, and its runner."""

    cli: clis.AgentCli
    api: Callable[[Script], ModelServer]
    runner: Callable[[Path, Sandbox, Any], AgentRunner[Any]]


LAUNCH: dict[str, Launch] = {
    "claude": Launch(clis.CLAUDE, AnthropicServer, ClaudeCode),
    "codex": Launch(clis.CODEX, OpenAIServer, Codex),
    "gemini": Launch(clis.GEMINI, GeminiServer, Gemini),
    "qwen": Launch(clis.QWEN, ChatServer, QwenCode),
    "droid": Launch(clis.DROID, ChatServer, Droid),
    "copilot": Launch(clis.COPILOT, ChatServer, Copilot),
    "opencode": Launch(clis.OPENCODE, ChatServer, partial(OpenCode, OPENCODE)),
    "kilo": Launch(clis.KILO, ChatServer, partial(OpenCode, KILO)),
    "cline": Launch(clis.CLINE, ChatServer, Cline),
    "pi": Launch(clis.PI, ChatServer, Pi),
}
