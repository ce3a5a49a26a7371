"""What every agent runner shares: start the CLI in the sandbox's work dir in its own process
group, wait with a timeout (then kill the group and fail with the output so far), and hand back
an `AgentRun`. A runner for one agent says its command line, its environment and how it finds
the session id in its output (`claude_runner`, `codex_runner`, `gemini_runner`)."""

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from tests.agent_cli.model_server import ModelServer
from tests.agent_cli.sandbox import Sandbox

RUN_TIMEOUT_S = 180.0


@dataclass(slots=True)
class AgentRun:
    """What one headless run printed."""

    returncode: int
    stdout: str
    stderr: str
    duration_s: float

    def json_lines(self) -> list[dict[str, Any]]:
        """The stdout lines that are JSON objects (JSONL output), others left out."""
        found = []
        for line in self.stdout.splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                found.append(value)
        return found

    def describe(self) -> str:
        """For assertion messages: the exit status and the output's tail."""
        return (
            f"exit {self.returncode}\nstdout: {self.stdout[-3000:]}\n"
            f"stderr: {self.stderr[-2000:]}"
        )


RunT = TypeVar("RunT", bound=AgentRun)


class RunningAgent(Generic[RunT]):
    """A CLI started in the background; `wait()` collects it as a `run_class`."""

    def __init__(self, proc: subprocess.Popen[str], run_class: type[RunT]) -> None:
        self.proc = proc
        self.run_class = run_class
        self.started = time.monotonic()

    def wait(self, timeout: float = RUN_TIMEOUT_S) -> RunT:
        try:
            stdout, stderr = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            stdout, stderr = self.proc.communicate()
            raise AssertionError(
                f"the agent did not finish within {timeout:.0f} s\nstdout: {stdout[-3000:]}\n"
                f"stderr: {stderr[-2000:]}"
            ) from None
        finally:
            self.kill()  # whatever the CLI left in its process group
        return self.run_class(
            self.proc.returncode, stdout, stderr, time.monotonic() - self.started
        )

    def kill(self) -> None:
        """End the CLI and everything still in its process group."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


class AgentRunner(Generic[RunT]):
    """Base of the runners: `command()`, `agent_env()` and `run_class` are the agent's own."""

    run_class: type[RunT]

    def __init__(self, executable: Path, sandbox: Sandbox, server: ModelServer) -> None:
        self.executable = executable
        self.sandbox = sandbox
        self.server = server

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        raise NotImplementedError

    def agent_env(self) -> dict[str, str]:
        raise NotImplementedError

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install <target>` into the sandbox's settings (`extra`: its options)."""
        raise NotImplementedError

    def start(
        self, prompt: str, *, args: tuple[str, ...] = (), env: dict[str, str] | None = None
    ) -> RunningAgent[RunT]:
        proc = subprocess.Popen(
            self.command(prompt, args), cwd=self.sandbox.work,
            env={**self.agent_env(), **(env or {})}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        return RunningAgent(proc, self.run_class)

    def run(
        self, prompt: str, *, args: tuple[str, ...] = (), env: dict[str, str] | None = None,
        timeout: float = RUN_TIMEOUT_S,
    ) -> RunT:
        return self.start(prompt, args=args, env=env).wait(timeout)
