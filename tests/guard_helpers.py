"""Helpers for the guard's end-to-end tests: start the demo agent, read events, wait for them."""

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import cli_env


def events(root: Path, session: str) -> list[dict[str, Any]]:
    path = root / "sessions" / session / "events.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    out = []
    for raw in data.splitlines():
        if raw.strip():
            out.append(json.loads(raw))  # a bad line fails the test loudly
    return out


def of_type(evs: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in evs if e["type"] == kind]


def wait_for(root: Path, session: str, predicate, timeout: float = 30.0) -> list[dict[str, Any]]:
    """Poll the session's events until `predicate(events)` is true; return the events."""
    end = time.monotonic() + timeout
    while True:
        evs = events(root, session)
        if predicate(evs):
            return evs
        if time.monotonic() > end:
            shown = [(e["seq"], e["type"]) for e in evs[-15:]]
            raise AssertionError(f"timed out waiting; last events: {shown}")
        time.sleep(0.05)


def start_demo(
    root: Path, session: str, scenario: str, workdir: Path, *, deadline: float = 60.0,
    heartbeat: float = 0.3,
) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         session, "--scenario", scenario, "--workdir", str(workdir), "--pace", "0",
         "--deadline", str(deadline), "--heartbeat", str(heartbeat)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )


def escalated(n: int = 1):
    return lambda evs: len(of_type(evs, "escalation")) >= n
