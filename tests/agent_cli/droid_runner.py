"""Run the real Factory Droid CLI headless in a sandbox, against the fake Chat Completions API.

`droid exec --auto high -m custom:Fake-0 -o stream-json PROMPT` with `FACTORY_AIRGAP_ENABLED=1`
(no Factory account: found in the binary, not documented) and the model declared in the user
settings (`$HOME/.factory/settings.json`, inside the sandbox: `customModels` with provider
`generic-chat-completion-api` at the fake). `install_hooks()` runs `supervisor install droid
--user`, which merges the hooks into that file.
"""

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.agent_cli.chat_api import MODEL, ChatServer
from tests.agent_cli.qwen_runner import JsonlRun
from tests.agent_cli.runner import AgentRunner
from tests.agent_cli.sandbox import Sandbox


class Droid(AgentRunner[JsonlRun]):
    server: ChatServer
    run_class = JsonlRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: ChatServer) -> None:
        super().__init__(executable, sandbox, server)
        self.settings_path.parent.mkdir(parents=True, exist_ok=True)
        settings: dict[str, Any] = {"customModels": [{
            "model": MODEL, "displayName": "Fake", "baseUrl": f"{server.url}/v1",
            "apiKey": "sk-fake-key-for-tests", "provider": "generic-chat-completion-api",
            "maxOutputTokens": 4096}]}
        self.settings_path.write_text(json.dumps(settings, indent=2))

    @property
    def settings_path(self) -> Path:
        return self.sandbox.home / ".factory" / "settings.json"

    def agent_env(self) -> dict[str, str]:
        return self.sandbox.env(FACTORY_AIRGAP_ENABLED="1",
                                FACTORY_DROID_AUTO_UPDATE_ENABLED="false")

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install droid --user --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", "droid", "--user",
                                       "--root", str(self.sandbox.store), *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "exec", "--auto", "high", "-m", "custom:Fake-0",
                "-o", "stream-json", *args, prompt]
