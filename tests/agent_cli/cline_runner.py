"""Run the real Cline CLI (`cline`) headless in a sandbox, against the fake Chat Completions API.

`cline auth -p openai-compatible -k KEY -m fake-model -b URL` once (it writes the provider into
the sandbox's `~/.cline`), then `cline --json PROMPT` in the work dir (act mode, tools
auto-approved). `CLINE_SESSION_BACKEND_MODE=local` runs the session in the CLI's own process:
by default Cline starts a hub daemon on a fixed port (25463) that outlives the run and runs the
plugins with its own environment, which would tie tests (and their HOMEs) together.
`supervisor install cline --project WORK` writes the plugin into `WORK/.cline/plugins/`.
"""

import contextlib
import os
import signal
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.agent_cli import clis
from tests.agent_cli.chat_api import MODEL, ChatServer
from tests.agent_cli.runner import AgentRun, AgentRunner
from tests.agent_cli.sandbox import Sandbox


@dataclass(slots=True)
class ClineRun(AgentRun):
    """What one `cline --json` printed: JSON lines."""

    @property
    def session_id(self) -> str | None:
        for line in self.json_lines():
            if isinstance(line.get("taskId"), str):
                return line["taskId"]
        return None


class Cline(AgentRunner[ClineRun]):
    server: ChatServer
    run_class = ClineRun

    def __init__(self, executable: Path, sandbox: Sandbox, server: ChatServer) -> None:
        super().__init__(executable, sandbox, server)
        self.hub_port: int | None = None
        """Set (`use_hub`): sessions run in Cline's hub daemon on this port, as by default."""
        done = subprocess.run(
            [str(executable), "auth", "-p", "openai-compatible", "-k", "sk-fake", "-m", MODEL,
             "-b", f"{server.url}/v1"],
            cwd=sandbox.work, env=self.agent_env(), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=120,
        )
        assert done.returncode == 0, done.stderr or done.stdout

    @property
    def plugin_path(self) -> Path:
        return self.sandbox.work / ".cline" / "plugins" / "agent-supervisor.js"

    def use_hub(self) -> None:
        """Run sessions the default way, in the hub daemon Cline starts (on a free port of its
        own here); `stop_hub` ends it."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.hub_port = probe.getsockname()[1]

    def hub_pids(self) -> list[int]:
        """The hub daemons serving this runner's port."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                args = (entry / "cmdline").read_bytes().split(b"\0")
                if b"--cline-hub-daemon" in args and str(self.hub_port).encode() in args:
                    found.append(int(entry.name))
        return found

    def stop_hub(self) -> None:
        for pid in self.hub_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def agent_env(self) -> dict[str, str]:
        if self.hub_port is not None:
            env = self.sandbox.env(CLINE_HUB_PORT=str(self.hub_port))
        else:
            env = self.sandbox.env(CLINE_SESSION_BACKEND_MODE="local")
        env["PATH"] = clis.node_path(env.get("PATH", os.defpath))
        env["PWD"] = str(self.sandbox.work)
        # Cline gives a plugin 4 s to load, and on a loaded machine (the suite in parallel) runs
        # on without it: what the install notes tell users to set (docs/cline.md)
        env["CLINE_PLUGIN_IMPORT_TIMEOUT_MS"] = "30000"
        return env

    def install_hooks(self, *extra: str) -> subprocess.CompletedProcess[str]:
        """`supervisor install cline --project WORK --root STORE EXTRA...`; must succeed."""
        done = self.sandbox.supervisor("install", "cline", "--project", str(self.sandbox.work),
                                       "--root", str(self.sandbox.store), *extra)
        assert done.returncode == 0, done.stderr
        return done

    def command(self, prompt: str, args: tuple[str, ...]) -> list[str]:
        return [str(self.executable), "--json", *args, prompt]
