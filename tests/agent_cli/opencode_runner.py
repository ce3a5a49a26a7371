"""Run the real OpenCode (`opencode-ai`) or Kilo CLI (`@kilocode/cli`, its fork) headless in a
sandbox, against the fake Chat Completions API.

`opencode run --model fake/fake-model --format json PROMPT` (or `kilo run ...`) in the work dir,
whose `opencode.json` (`kilo.json`) names the fake as an `@ai-sdk/openai-compatible` provider,
allows every tool without asking, and turns off sharing and auto-update; the environment turns
off the models.dev fetch, auto-update and the default plugins, so nothing leaves 127.0.0.1.
`supervisor install opencode|kilo --project WORK` writes the plugin into the work dir's plugin
folder (`.opencode/plugin/`, `.kilo/plugin/`).
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


@dataclass(frozen=True, slots=True)
class Flavor:
    """What differs between OpenCode and Kilo: the target, the config file, the env prefix."""

    target: str
    cli: clis.AgentCli
    config_file: str
    env_prefix: str
    plugin_dir: str


OPENCODE = Flavor("opencode", clis.OPENCODE, "opencode.json", "OPENCODE_", ".opencode/plugin")
KILO = Flavor("kilo", clis.KILO, "kilo.json", "KILO_", ".kilo/plugin")


@dataclass(slots=True)
class OpenCodeRun(AgentRun):
    """What one `run --format json` printed: JSON lines, one per event."""

    @property
    def session_id(self) -> str | None:
        for line in self.json_lines():
            value = line.get("sessionID") or (line.get("part") or {}).get("sessionID")
            if isinstance(value, str):
                return value
        return None

    @property
    def texts(self) -> list[str]:
        return [str((line.get("part") or {}).get("text")) for line in self.json_lines()
                if line.get("type") == "text"]


class OpenCode(AgentRunner[OpenCodeRun]):
    server: ChatServer
    run_class = OpenCodeRun

    def __init__(self, flavor: Flavor, executable: Path, sandbox: Sandbox,
                 server: ChatServer) -> None:
        super().__init__(executable, sandbox, server)
        self.flavor = flavor
        self.write_config({})

    def write_config(self, extra: dict[str, Any]) -> None:
        config = {
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible", "name": "Fake",
                "options": {"baseURL": f"{self.server.url}/v1", "apiKey": "sk-fake"},
                "models": {MODEL: {"name": "Fake model", "tool_call": True}},
            }},
            "model": f"fake/{MODEL}", "small_model": f"fake/{MODEL}",
            "permission": {"bash": "allow", "edit": "allow", "read": "allow",
                           "external_directory": "allow"},
            "autoupdate": False, "share": "disabled", **extra,
        }
        (self.sandbox.work / self.flavor.config_file).write_text(json.dumps(config, indent=2))

    @property
    def plugin_path(self) -> Path:
        return self.sandbox.work / self.flavor.plugin_dir / "agent-supervisor.js"

    def agent_env(self) -> dict[str, str]:
        prefix = self.flavor.env_prefix
        env = self.sandbox.env(**{f"{prefix}DISABLE_MODELS_FETCH": "1",
                                  f"{prefix}DISABLE_AUTOUPDATE": "1",
                                  f"{prefix}DISABLE_DEFAULT_PLUGINS": "1"})
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        env["PWD"] = str(self.sandbox.work)  # `run` takes its project from $PWD, not the cwd
        return env

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install TARGET --project WORK --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", self.flavor.target, "--project",
                                       str(self.sandbox.work), "--root", str(self.sandbox.store),
                                       *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "run", "--model", f"fake/{MODEL}", "--format", "json",
                *args, prompt]
