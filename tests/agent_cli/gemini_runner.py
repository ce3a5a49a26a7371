"""Run the real Gemini CLI headless in a sandbox, against the fake Gemini API.

`gemini -p PROMPT --skip-trust -y -o json` with `GOOGLE_GEMINI_BASE_URL` at the fake and an API
key; the user settings (`$HOME/.gemini/settings.json`, inside the sandbox) select API-key auth
and turn off auto-update and usage statistics, so nothing leaves 127.0.0.1. Project settings
(`WORK/.gemini/settings.json`, where `supervisor install gemini --project` writes hooks) merge
over them.
"""

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.gemini_api import GeminiServer
from tests.agent_cli.runner import AgentRun, AgentRunner
from tests.agent_cli.sandbox import Sandbox

USER_SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
}


@dataclass(slots=True)
class GeminiRun(AgentRun):
    """What one `gemini -p -o json` printed: one JSON object."""

    @property
    def output(self) -> dict[str, Any]:
        start = self.stdout.find("{")
        try:
            value = json.loads(self.stdout[start:]) if start >= 0 else {}
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    @property
    def session_id(self) -> str | None:
        return self.output.get("session_id")

    @property
    def response(self) -> str | None:
        return self.output.get("response")


class Gemini(AgentRunner[GeminiRun]):
    server: GeminiServer
    run_class = GeminiRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: GeminiServer) -> None:
        super().__init__(executable, sandbox, server)
        self.user_settings_path.parent.mkdir(parents=True, exist_ok=True)
        self.write_user_settings({})

    @property
    def user_settings_path(self) -> Path:
        return self.sandbox.home / ".gemini" / "settings.json"

    def write_user_settings(self, extra: dict[str, Any]) -> None:
        """The sandbox's user settings: ours (auth, no network) plus `extra`'s top-level keys."""
        self.user_settings_path.write_text(json.dumps({**USER_SETTINGS, **extra}, indent=2))

    def agent_env(self) -> dict[str, str]:
        # the work dir is trusted from the start, so its project settings (hooks) are read;
        # --skip-trust alone trusts it only after the settings were loaded
        env = self.sandbox.env(
            GEMINI_API_KEY="fake-key-for-tests", GOOGLE_GEMINI_BASE_URL=self.server.url,
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        return env

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install gemini --project WORK --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", "gemini", "--project", str(self.sandbox.work),
                                       "--root", str(self.sandbox.store), *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "-p", prompt, "--skip-trust", "-y", "-o", "json", *args]
