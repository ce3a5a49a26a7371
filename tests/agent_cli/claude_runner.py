"""Run the real Claude Code CLI headless in a sandbox, against the fake Messages API.

`ClaudeCode(executable, sandbox, server)`: `install_hooks()` runs `supervisor install
claude-code --project WORK --root STORE` (the hook command it writes runs this checkout through
the sandbox's PYTHONPATH); `run(prompt)` runs `claude -p PROMPT --output-format stream-json
--verbose --permission-mode acceptEdits --allowedTools ...` in the work dir and returns its
stream-json output; `start(prompt)` does the same without waiting (to answer a hold meanwhile).
"""

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.agent_cli.anthropic_api import AnthropicServer
from tests.agent_cli.sandbox import Sandbox

ALLOWED_TOOLS = "Read Edit Write Bash Glob Grep Agent"
RUN_TIMEOUT_S = 180.0


def claude_env(sandbox: Sandbox, server: AnthropicServer) -> dict[str, str]:
    """The environment of the reference (docs/agent-cli-tests.md): the fake API, no traffic."""
    return sandbox.env(
        ANTHROPIC_BASE_URL=server.url,
        ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
    )


@dataclass(slots=True)
class ClaudeRun:
    """What one `claude -p` printed."""

    returncode: int
    stdout: str
    stderr: str
    duration_s: float
    messages: list[dict[str, Any]] = field(default_factory=list)
    """The stream-json lines, parsed (lines that are not JSON are left out)."""

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

    def describe(self) -> str:
        """For assertion messages: the exit status and the output's tail."""
        return (
            f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\n"
            f"stderr: {self.stderr[-2000:]}"
        )


class RunningClaude:
    """A `claude -p` started in the background; `wait()` collects it like `run()`."""

    def __init__(self, proc: subprocess.Popen[str], started: float) -> None:
        self.proc = proc
        self.started = started

    def wait(self, timeout: float = RUN_TIMEOUT_S) -> ClaudeRun:
        try:
            stdout, stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            stdout, stderr = self.proc.communicate()
            raise AssertionError(
                f"claude did not finish within {timeout:.0f} s\nstdout: {stdout[-3000:]}\n"
                f"stderr: {stderr[-2000:]}"
            ) from None
        return ClaudeRun(
            returncode=self.proc.returncode, stdout=stdout, stderr=stderr,
            duration_s=time.monotonic() - self.started, messages=_json_lines(stdout),
        )

    def kill(self) -> None:
        """End the CLI and everything it started (its own process group)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)


class ClaudeCode:
    def __init__(self, executable: Path, sandbox: Sandbox, server: AnthropicServer) -> None:
        self.executable = executable
        self.sandbox = sandbox
        self.server = server

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

    def command(self, prompt: str, allowed_tools: str, args: tuple[str, ...]) -> list[str]:
        return [
            str(self.executable), "-p", prompt, "--output-format", "stream-json", "--verbose",
            "--permission-mode", "acceptEdits", "--allowedTools", allowed_tools, *args,
        ]

    def start(
        self, prompt: str, *, allowed_tools: str = ALLOWED_TOOLS, args: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> RunningClaude:
        proc = subprocess.Popen(
            self.command(prompt, allowed_tools, args), cwd=self.sandbox.work,
            env={**claude_env(self.sandbox, self.server), **(env or {})},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True,
        )
        return RunningClaude(proc, time.monotonic())

    def run(
        self, prompt: str, *, allowed_tools: str = ALLOWED_TOOLS, args: tuple[str, ...] = (),
        env: dict[str, str] | None = None, timeout: float = RUN_TIMEOUT_S,
    ) -> ClaudeRun:
        running = self.start(prompt, allowed_tools=allowed_tools, args=args, env=env)
        try:
            return running.wait(timeout)
        finally:
            running.kill()


def _json_lines(text: str) -> list[dict[str, Any]]:
    found = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found
