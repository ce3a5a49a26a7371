"""Run the real Qwen Code CLI headless in a sandbox, against the fake Chat Completions API.

`qwen --auth-type openai --approval-mode yolo --output-format stream-json PROMPT` with
`OPENAI_BASE_URL` at the fake; the user settings (`$HOME/.qwen/settings.json`, inside the
sandbox) select OpenAI auth and turn off usage statistics and updates, so nothing leaves
127.0.0.1. `install_hooks()` runs `supervisor install qwen-code --user` (user settings load in
any folder; a project's only in a trusted one), which merges the hooks into that file.
"""

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.chat_api import MODEL, ChatServer
from tests.agent_cli.runner import AgentRun, AgentRunner
from tests.agent_cli.sandbox import Sandbox

USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
}


@dataclass(slots=True)
class JsonlRun(AgentRun):
    """What a run printed as JSON lines (stream-json): the session id is in them."""

    @property
    def session_id(self) -> str | None:
        for line in self.json_lines():
            for key in ("session_id", "sessionId"):
                if isinstance(line.get(key), str):
                    return line[key]
        return None


class QwenCode(AgentRunner[JsonlRun]):
    server: ChatServer
    run_class = JsonlRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: ChatServer) -> None:
        super().__init__(executable, sandbox, server)
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        self.settings_path.write_text(json.dumps(USER_SETTINGS, indent=2))

    @property
    def settings_path(self) -> Path:
        return self.sandbox.home / ".qwen" / "settings.json"

    def agent_env(self) -> dict[str, str]:
        env = self.sandbox.env(
            OPENAI_API_KEY="sk-fake-key-for-tests", OPENAI_BASE_URL=f"{self.server.url}/v1",
            OPENAI_MODEL=MODEL, QWEN_CODE_SUPPRESS_YOLO_WARNING="1",
        )
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        return env

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install qwen-code --user --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", "qwen-code", "--user",
                                       "--root", str(self.sandbox.store), *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "--auth-type", "openai", "--approval-mode", "yolo",
                "--output-format", "stream-json", *args, prompt]
