"""Run the real GitHub Copilot CLI headless in a sandbox, against the fake Chat Completions API.

`copilot -p PROMPT --allow-all-tools --output-format json` with `COPILOT_OFFLINE=true` and the
provider at the fake (`COPILOT_PROVIDER_BASE_URL`, type openai by default): no GitHub login.
The binary unpacks itself (about 235 MB) into `$COPILOT_CACHE_HOME`, which is shared by the
test runs beside the installed CLI, so it is unpacked once. `install_hooks()` runs
`supervisor install copilot --user` (`$HOME/.copilot/settings.json`, inside the sandbox).
"""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.chat_api import MODEL, ChatServer
from tests.agent_cli.qwen_runner import JsonlRun
from tests.agent_cli.runner import AgentRunner
from tests.agent_cli.sandbox import Sandbox


class Copilot(AgentRunner[JsonlRun]):
    server: ChatServer
    run_class = JsonlRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: ChatServer) -> None:
        super().__init__(executable, sandbox, server)
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)

    @property
    def settings_path(self) -> Path:
        return self.sandbox.home / ".copilot" / "settings.json"

    def settings(self) -> dict[str, Any]:
        return json.loads(self.settings_path.read_text())

    def agent_env(self) -> dict[str, str]:
        env = self.sandbox.env(
            COPILOT_OFFLINE="true", COPILOT_PROVIDER_BASE_URL=f"{self.server.url}/v1",
            COPILOT_PROVIDER_API_KEY="sk-fake-key-for-tests", COPILOT_MODEL=MODEL,
            COPILOT_CACHE_HOME=str(clis.cache_dir() / f"{clis.COPILOT.dirname}-unpacked"),
        )
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        return env

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install copilot --user --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", "copilot", "--user",
                                       "--root", str(self.sandbox.store), *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "-p", prompt, "--allow-all-tools",
                "--output-format", "json", *args]
