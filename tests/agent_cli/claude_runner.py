"""Run the real Claude Code CLI headless in a sandbox, against the fake Messages API.

`ClaudeCode(executable, sandbox, server)`: `install_hooks()` runs `supervisor install
claude-code --project WORK --root STORE` (the hook command it writes runs this checkout through
the sandbox's PYTHONPATH); `run(prompt)` runs `claude -p PROMPT --output-format stream-json
--verbose --permission-mode acceptEdits --allowedTools ...` in the work dir and returns a
`ClaudeRun` (its stream-json output); `start(prompt)` does the same without waiting (to answer a
hold meanwhile), `.wait()` gives the run.
"""

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.runner import AgentRun, AgentRunner
from tests.agent_cli.sandbox import Sandbox

ALLOWED_TOOLS = "Read Edit Write Bash Glob Grep Agent"


@dataclass(slots=True)
class ClaudeRun(AgentRun):
    """What one `claude -p --output-format stream-json` printed."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The stream-json messages."""
        return self.json_lines()

    @property
    def result(self) -> dict[str, Any]:
        """The final `{"type": "result", ...}` message ({} when there was none)."""
        return next((m for m in reversed(self.messages) if m.get("type") == "result"), {})

    @property
    def session_id(self) -> str | None:
        return next((m["session_id"] for m in self.messages if m.get("session_id")), None)

    def of_type(self, kind: str, subtype: str | None = None) -> list[dict[str, Any]]:
        return [
            m for m in self.messages
            if m.get("type") == kind and (subtype is None or m.get("subtype") == subtype)
        ]


class ClaudeCode(AgentRunner[ClaudeRun]):
    server: AnthropicServer
    run_class = ClaudeRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: AnthropicServer) -> None:
        super().__init__(executable, sandbox, server)
        self.allowed_tools = ALLOWED_TOOLS

    def agent_env(self) -> dict[str, str]:
        """The environment of the reference: the fake API, no other traffic."""
        return self.sandbox.env(
            ANTHROPIC_BASE_URL=self.server.url,
            ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            DISABLE_AUTOUPDATER="1",
            DISABLE_TELEMETRY="1",
            DISABLE_ERROR_REPORTING="1",
        )

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [
            str(self.executable), "-p", prompt, "--output-format", "stream-json", "--verbose",
            "--permission-mode", "acceptEdits", "--allowedTools", self.allowed_tools, *args,
        ]

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install claude-code --project WORK --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor(
            "install", "claude-code", "--project", str(self.sandbox.work),
            "--root", str(self.sandbox.store), *extra,
        )
        assert done.returncode == 0, done.stderr
        return done

    def settings(self) -> dict[str, Any]:
        """The project's `.claude/settings.json` as installed."""
        return json.loads((self.sandbox.work / ".claude" / "settings.json").read_text())
