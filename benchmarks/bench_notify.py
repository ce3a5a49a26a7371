"""Notifications do not move the hook: the tool call that escalates, with notifications
configured to a service that never answers, against the same call with none configured.

The guard only starts `supervisor notify deliver` (detached) when it writes an escalation; the
sending, its retries and its time-outs happen in that process. The figure is the median wall
time of the escalating `Guard.pre_call` (what the hook and the resident hook server run), runs
interleaved, each on a fresh session: target at most 1.5x, checkpoints off so the fork and exec
are measured against the smallest escalation there is. A call that does not escalate never
looks at the notification config at all (no figure needed: no code runs).
"""

import os
import shutil
import socket
import statistics
import time
from pathlib import Path

from common import Figure, work_dir

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings

ARGS = {"command": "pytest -q tests/test_dates.py"}


def _escalating_call_ms(root: Path, session: str, workspace: Path) -> float:
    """Repeat a failing call until it escalates; the wall time of the call that did."""
    guard = Guard.open(root, session, cwd=workspace, settings=GuardSettings(checkpoints=False))
    try:
        guard.start("bench", None, heartbeat_s=None)
        for step in range(50):
            started = time.perf_counter()
            verdict = guard.pre_call("Bash", ARGS, call_id=f"c{step}")
            elapsed = time.perf_counter() - started
            if verdict.action == "pause":
                return elapsed * 1000
            guard.post_call(f"c{step}", "1 failed", ok=False, error="exit 1", tool="Bash")
        raise RuntimeError("the repeated call never escalated")
    finally:
        guard.close()


def run(scale: float = 1.0) -> list[Figure]:
    runs = max(3, int(15 * scale))
    base = work_dir("notify")
    hung = socket.socket()  # accepts connections (the backlog), never answers
    hung.bind(("127.0.0.1", 0))
    hung.listen(64)
    configured = base / "config-on"
    configured.mkdir()
    (configured / "config.toml").write_text(
        f'[notify]\nurls = ["json://127.0.0.1:{hung.getsockname()[1]}/x"]\n'
        "burst_s = 0\nretries = 0\n")
    workspace = base / "work"
    workspace.mkdir()
    saved = os.environ.get("SUPERVISOR_CONFIG")
    on: list[float] = []
    off: list[float] = []
    try:
        for index in range(runs):
            for folder, out in ((base / "config-off", off), (configured, on)):
                os.environ["SUPERVISOR_CONFIG"] = str(folder)
                out.append(_escalating_call_ms(base / "root", f"s{index}-{folder.name}",
                                               workspace))
    finally:
        if saved is None:
            os.environ.pop("SUPERVISOR_CONFIG", None)
        else:
            os.environ["SUPERVISOR_CONFIG"] = saved
        hung.close()  # the deliverers waiting on it fail at once, and exit
        time.sleep(0.5)
        shutil.rmtree(base, ignore_errors=True)
    return [Figure("escalating call, notify on (service hung)", statistics.median(on), "ms",
                   baseline=statistics.median(off), max_ratio=1.5,
                   note=f"median of {runs}; baseline: no [notify] in the config")]
