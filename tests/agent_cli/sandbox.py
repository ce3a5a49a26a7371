"""A throwaway world for one agent run: a git work dir, an isolated HOME, a store root.

The agent CLI runs with `env()`: this machine's environment without any agent or model
variable that could reach a real service or a real config (`ANTHROPIC_*`, `CLAUDE*`, `OPENAI_*`,
`CODEX_*`, `GEMINI_*`, `GOOGLE_*`), HOME, TMPDIR and the XDG directories inside the sandbox, a git
identity, `SUPERVISOR_HOME` = the store root, and `PYTHONPATH` = this checkout, so a hook command
`<this venv's python> -m supervisor.hooks.client` written by `supervisor install` runs the code
under test (also in the resident hook server it starts).
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_AGENT_PREFIXES = ("ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_")
HOOKD_IDLE_S = "30"
"""A resident hook server left by a run exits by itself this soon (the fixtures kill it too)."""


@dataclass(slots=True)
class Sandbox:
    base: Path

    def __post_init__(self) -> None:
        for path in (self.work, self.home, self.store, self.tmp):
            path.mkdir(parents=True, exist_ok=True)
        if not (self.work / ".git").exists():
            self.git("init", "-q", "-b", "main")
            self.write("README.md", "scratch project for an agent CLI test\n")
            self.commit("initial")

    @property
    def work(self) -> Path:
        return self.base / "work"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def store(self) -> Path:
        return self.base / "store"

    @property
    def tmp(self) -> Path:
        """`TMPDIR` of the run: what an agent writes to its temp dir stays in the sandbox."""
        return self.base / "tmp"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_AGENT_PREFIXES)}
        for name in ("SUPERVISOR_POLICY", "SUPERVISOR_HOOK_DAEMON", "PYTEST_ADDOPTS"):
            env.pop(name, None)
        env.update(
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_DATA_HOME=str(self.home / ".local" / "share"),
            XDG_STATE_HOME=str(self.home / ".local" / "state"),
            TMPDIR=str(self.tmp),
            GIT_AUTHOR_NAME="Agent Test", GIT_AUTHOR_EMAIL="agent@example.invalid",
            GIT_COMMITTER_NAME="Agent Test", GIT_COMMITTER_EMAIL="agent@example.invalid",
            SUPERVISOR_HOME=str(self.store),
            SUPERVISOR_HOOKD_IDLE_S=HOOKD_IDLE_S,
            PYTHONPATH=os.pathsep.join(filter(None, (str(REPO), env.get("PYTHONPATH")))),
        )
        env.update(extra)
        return env

    # -- the work dir ---------------------------------------------------------------------------
    def write(self, name: str, text: str) -> Path:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.work, env=self.env(), capture_output=True, text=True,
            timeout=60, check=True,
        )
        return done.stdout

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    # -- the supervisor -------------------------------------------------------------------------
    def supervisor(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """`python -m supervisor ARGS` from this checkout, on this sandbox's store."""
        return subprocess.run(
            [sys.executable, "-m", "supervisor", *args], cwd=self.work, env=self.env(),
            capture_output=True, text=True, timeout=timeout,
        )

    def write_policy(self, text: str) -> Path:
        """`<store>/policy.toml`, the policy every hook session of this store uses."""
        path = self.store / "policy.toml"
        path.write_text(text)
        return path

    def sessions(self) -> list[str]:
        """The store's session ids, oldest first."""
        base = self.store / "sessions"
        if not base.is_dir():
            return []
        found = [p for p in base.iterdir() if (p / "events.jsonl").exists()]
        return [p.name for p in sorted(found, key=lambda p: (p / "events.jsonl").stat().st_mtime)]

    def events(self, session: str) -> list[dict[str, Any]]:
        """A session's events, as written (the raw JSON lines)."""
        path = self.store / "sessions" / session / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def all_events(self) -> dict[str, list[dict[str, Any]]]:
        return {session: self.events(session) for session in self.sessions()}

    def wait_for_event(
        self, kind: str, timeout: float = 60.0, session: str | None = None
    ) -> tuple[str, dict[str, Any]]:
        """(session, event): the first event of type `kind` written in the store (in `session`
        when given), polling until `timeout` seconds passed (then AssertionError)."""
        deadline = time.monotonic() + timeout
        while True:
            for sid in [session] if session else self.sessions():
                for event in self.events(sid):
                    if event.get("type") == kind:
                        return sid, event
            if time.monotonic() > deadline:
                raise AssertionError(f"no {kind} event within {timeout:.0f} s")
            time.sleep(0.1)
