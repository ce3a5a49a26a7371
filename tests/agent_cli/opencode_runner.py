"""Run the real OpenCode (`opencode-ai`) or Kilo CLI (`@kilocode/cli`, its fork) headless in a
sandbox, against the fake Chat Completions API.

`opencode run --model fake/fake-model --format json PROMPT` (or `kilo run ...`) in the work dir,
whose `opencode.json` (`kilo.json`) names the fake as an `@ai-sdk/openai-compatible` provider,
allows every tool without asking, and turns off sharing and auto-update; the environment turns
off the models.dev fetch, auto-update and the default plugins, and OpenCode's config folders hold
the npm install it makes at start (`seed_config_folder`). What still leaves 127.0.0.1: Kilo's
request for `@kilocode/plugin`, which the registry answers with no such version, and its models
fetch for its own provider.
`supervisor install opencode|kilo --project WORK` writes the plugin into the work dir's plugin
folder (`.opencode/plugin/`, `.kilo/plugin/`).
"""

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.chat_api import MODEL, ChatServer
from tests.agent_cli.runner import RUN_TIMEOUT_S, AgentRun, AgentRunner
from tests.agent_cli.sandbox import Sandbox


@dataclass(frozen=True, slots=True)
class Flavor:
    """What differs between OpenCode and Kilo: the target, the config file, the env prefix."""

    target: str
    cli: clis.AgentCli
    config_file: str
    env_prefix: str
    plugin_dir: str
    snapshot_wait_env: str | None = None
    """The variable that sets how long the CLI waits for its snapshot of the work dir before it
    asks the user whether to go on waiting (Kilo: 10 s by default; see `agent_env`)."""

    @property
    def config_folders(self) -> tuple[str, str]:
        """The user's and the project's config folder, relative to HOME and to the work dir."""
        return f".config/{self.target}", f".{self.target}"


OPENCODE = Flavor("opencode", clis.OPENCODE, "opencode.json", "OPENCODE_", ".opencode/plugin")
KILO = Flavor("kilo", clis.KILO, "kilo.json", "KILO_", ".kilo/plugin",
              snapshot_wait_env="KILO_SNAPSHOT_TRACK_TIMEOUT_MS")


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
        install = clis.config_install(flavor.cli)
        if install is not None:
            user, project = flavor.config_folders
            for folder in (sandbox.home / user, sandbox.work / project):
                seed_config_folder(folder, install)

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
        if self.flavor.snapshot_wait_env is not None:
            # Kilo snapshots the work dir before each step; when that takes over 10 s (a load of
            # 15 does it) it asks "Continue with snapshots?", which nobody answers in `kilo run`:
            # the run hung until the test killed it. It may take as long as the run may.
            env[self.flavor.snapshot_wait_env] = str(int(RUN_TIMEOUT_S * 1000))
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


def seed_config_folder(folder: Path, install: Path) -> None:
    """Give `folder` the install OpenCode would make there, as on a machine where it ran before.

    At start OpenCode runs npm (in-process) in each config folder whose `node_modules` is
    missing, or whose `package-lock.json` lacks a package it adds (`@opencode-ai/plugin`), and
    waits for it before its first model request: in a fresh sandbox that was two installs from
    the registry per run, 50 to 110 s under a load of 10 to 15, and an escalation that never
    came within the test's two minutes. The same install is made once into the CLI cache
    (`install`, `clis.config_install`); here its `package.json` and lock are copied and its
    `node_modules` linked, so OpenCode finds nothing to install and writes nothing there."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(install / name, folder / name)
    link = folder / "node_modules"
    if not link.is_symlink():  # (a benchmark's measured run follows its warm-up in one home)
        link.symlink_to(install / "node_modules", target_is_directory=True)
