"""Run the real Codex CLI headless in a sandbox, against the fake Responses API.

`codex exec` with a custom model provider pointing at the fake (`OPENAI_BASE_URL` alone is
ignored), `--dangerously-bypass-hook-trust` (headless runs cannot approve hooks),
`--dangerously-bypass-approvals-and-sandbox` (the sandbox is ours) and `--json` (JSONL events).
Codex's home is `$HOME/.codex`, inside the sandbox.
"""

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.agent_cli import clis
from tests.agent_cli.openai_api import OpenAIServer
from tests.agent_cli.runner import AgentRun, AgentRunner

MODEL = "fake-model"


@dataclass(slots=True)
class CodexRun(AgentRun):
    """What one `codex exec --json` printed."""

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.json_lines()

    @property
    def session_id(self) -> str | None:
        return next(
            (e.get("thread_id") for e in self.events if e.get("type") == "thread.started"), None
        )

    def items(self, kind: str | None = None) -> list[dict[str, Any]]:
        """The completed items (`agent_message`, `command_execution`, ...)."""
        return [
            e["item"] for e in self.events
            if e.get("type") == "item.completed" and isinstance(e.get("item"), dict)
            and (kind is None or e["item"].get("type") == kind)
        ]

    @property
    def final_message(self) -> str | None:
        messages = self.items("agent_message")
        return messages[-1].get("text") if messages else None


class Codex(AgentRunner[CodexRun]):
    server: OpenAIServer
    run_class = CodexRun

    @property
    def codex_home(self) -> Path:
        """`$CODEX_HOME` by default: `hooks.json`, `config.toml`, the rollouts (transcripts)."""
        return self.sandbox.home / ".codex"

    def agent_env(self) -> dict[str, str]:
        env = self.sandbox.env(OPENAI_API_KEY="sk-fake-key-for-tests")
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        return env

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        provider = (
            f'model_providers.fake={{name="fake",base_url="{self.server.url}/v1",'
            'env_key="OPENAI_API_KEY",wire_api="responses"}'
        )
        return [
            str(self.executable), "exec", "-c", provider, "-c", "model_provider=fake",
            "-m", MODEL, "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", "--json",
            *args, prompt,
        ]

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install codex --root STORE EXTRA...` into the sandbox's user hooks
        (`$HOME/.codex/hooks.json`: user hooks need no project trust); must succeed."""
        done = self.sandbox.supervisor("install", "codex", "--root", str(self.sandbox.store),
                                       *extra)
        assert done.returncode == 0, done.stderr
        return done
