"""The hook records an agent `supervisor run` started into the run's session, whatever id the
agent gives itself, with the pane's pid in `session_start` (in-process and through the resident
server, whose client sends the run in its header)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from supervisor.store.liveness import THIS_HOST
from tests.conftest import cli_env
from tests.hook_helpers import SID, events, fixture_payload


def hook(payload: bytes, root: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        [sys.executable, "-m", "supervisor", "hook", "claude-code", "--root", str(root)],
        input=payload, capture_output=True, timeout=60, env=cli_env(**env),
    )
    assert done.returncode == 0, done.stderr
    return done


@pytest.mark.slow
@pytest.mark.parametrize("daemon", ["0", "1"])
def test_a_run_agent_records_into_the_run_session(tmp_path: Path, daemon: str) -> None:
    root = tmp_path / "store"
    work = tmp_path / "work"
    work.mkdir()
    run = {"SUPERVISOR_RUN_SESSION": "r1", "SUPERVISOR_RUN_PID": str(os.getpid()),
           "SUPERVISOR_HOOK_DAEMON": daemon}
    for name in ("session_start", "pre_tool_use", "post_tool_use", "subagent_pre_tool_use"):
        hook(fixture_payload(name, work), root, **run)
    sessions = sorted(p.name for p in (root / "sessions").iterdir())
    assert SID not in sessions  # never the agent's own id
    assert sessions == ["r1", "r1.sub-a3f9c2e1"]
    start = events(root, "r1")[0]
    assert start["type"] == "session_start" and start["claude_session_id"] == SID
    assert (start["pid"], start["host"]) == (os.getpid(), THIS_HOST)
    assert [e["type"] for e in events(root, "r1")].count("tool_call") == 1
    child = events(root, "r1.sub-a3f9c2e1")[0]
    assert child["parent_session"] == "r1" and child["pid"] is None


def test_without_a_run_the_agents_id_names_the_session(tmp_path: Path) -> None:
    root = tmp_path / "store"
    hook(fixture_payload("session_start", tmp_path), root, SUPERVISOR_HOOK_DAEMON="0")
    assert [p.name for p in (root / "sessions").iterdir()] == [SID]
    assert events(root, SID)[0]["pid"] is None
