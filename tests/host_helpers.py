"""Helpers for `supervisor run` tests: the real command line in subprocesses, a store root of
the test's own (so its tmux server, `supervisor-<hash of the root>`, is the test's own), and the
server killed afterwards."""

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from supervisor.host.tmux import Server, socket_name
from tests.conftest import cli_env

DEMO = f"{sys.executable} -m supervisor.demo.agent"


class Runs:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "store"
        self.server = Server(socket_name(self.root))

    def sup(self, *args: str, cwd: Path | None = None, timeout: float = 60,
            **env: str) -> subprocess.CompletedProcess[str]:
        """`supervisor ARGS --root ROOT` in a subprocess (in `cwd`, default the tmp dir)."""
        return subprocess.run(
            [sys.executable, "-m", "supervisor", *args, "--root", str(self.root)],
            capture_output=True, text=True, timeout=timeout, cwd=cwd or self.tmp,
            env=cli_env(**env),
        )

    def ok(self, *args: str, **kwargs: Any) -> str:
        done = self.sup(*args, **kwargs)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def refused(self, *args: str, **kwargs: Any) -> str:
        """The one error line of a refused command."""
        done = self.sup(*args, **kwargs)
        assert done.returncode != 0, done.stdout
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("supervisor: error: "), done.stderr
        return lines[0]

    def events(self, session: str) -> list[dict[str, Any]]:
        path = self.root / "sessions" / session / "events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def record(self, session: str) -> dict[str, Any]:
        return json.loads((self.root / "host" / f"{session}.json").read_text())

    def status(self, session: str) -> str:
        rows = [json.loads(line) for line in self.ok("sessions", "--json").splitlines()]
        return str(next((r["status"] for r in rows if r["session"] == session), ""))

    def host_files(self) -> list[str]:
        directory = self.root / "host"
        return sorted(p.name for p in directory.iterdir()) if directory.is_dir() else []


def wait_for(check: Callable[[], Any], timeout: float = 30, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        time.sleep(0.1)


@pytest.fixture
def runs(tmp_path: Path) -> Iterator[Runs]:
    r = Runs(tmp_path)
    try:
        yield r
    finally:
        r.server.kill_server()
