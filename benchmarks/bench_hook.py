"""The Claude Code hook: wall time of one `supervisor hook claude-code` process per tool call.

Two figures, each measured against its baseline in the same run (medians of interleaved runs):

- start-up: a PreToolUse on an existing session, against `python -c 'import json,sys;
  json.load(sys.stdin)'` reading the same payload (target: at most 1.5x);
- flat cost: the same call on a session with 10,000 earlier events against one with 10
  (target: at most 1.1x), because the hook loads a bounded snapshot and never re-reads the log;
  and against one with 2,000, both past the engine's window (1,000 events), where the snapshot
  has stopped growing.

Both sessions run under a policy whose hard limits are out of reach and whose checkpoints are off,
so the history can be built quickly and no measured call is held by an escalation; every measured
call has different arguments, so none is a repeat.
"""

import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, Figure, work_dir

from supervisor.engine import Policy
from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings

POLICY = """
[guard]
checkpoints = false
[limits.iterations_per_session]
limit = 10000000
[limits.consecutive_tool_calls]
limit = 10000000
[limits.iterations_per_cycle]
limit = 10000000
[limits.actions_per_task]
limit = 10000000
[limits.errors_per_session]
limit = 10000000
"""
BASELINE = [sys.executable, "-c", "import json,sys; json.load(sys.stdin)"]
HOOK = [sys.executable, "-m", "supervisor", "hook", "claude-code", "--timeout", "60"]


def build_session(root: Path, session: str, workspace: Path, events: int) -> int:
    """A session with about `events` events written the way the guard writes them: edits that
    succeed, test runs whose output changes, and a message now and then."""
    import tomllib

    policy = Policy.from_dict(tomllib.loads(POLICY))
    guard = Guard.open(root, session, cwd=workspace, policy=policy,
                       settings=GuardSettings(checkpoints=False), save_every_s=3600.0)
    try:
        guard.start("claude-code", None, heartbeat_s=None)
        step = 0
        while _count(root, session) < events:
            path = str(workspace / f"mod{step % 50}.py")
            edit = {"file_path": path, "old_string": f"v{step}", "new_string": f"v{step + 1}"}
            verdict = guard.pre_call("Edit", edit, call_id=f"e{step}")
            if verdict.action not in ("allow", "nudge"):
                raise RuntimeError(f"history building was refused at step {step}: {verdict}")
            guard.post_call(f"e{step}", f"edited {path}", ok=True, tool="Edit")
            if step % 7 == 6:
                guard.message("assistant", f"Step {step}: the edit of {path} is in place.")
            step += 1
    finally:
        guard.close()
    return _count(root, session)


def _count(root: Path, session: str) -> int:
    path = root / "sessions" / session / "events.jsonl"
    if not path.exists():
        return 0
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def payload(session: str, workspace: Path, index: int) -> bytes:
    return json.dumps({
        "session_id": session, "transcript_path": f"/tmp/{session}.jsonl",
        "cwd": str(workspace), "permission_mode": "default", "hook_event_name": "PreToolUse",
        "tool_name": "Read", "tool_input": {"file_path": str(workspace / f"read{index}.py")},
        "tool_use_id": f"toolu_bench_{index}",
    }).encode()


def timed(command: list[str], data: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, input=data, capture_output=True, env=env, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"{command[-3:]} failed: {done.stderr.decode()[-500:]}")
    if command is HOOK and done.stdout:
        raise RuntimeError(f"a measured call was not simply allowed: {done.stdout[:300]!r}")
    return took


def run(scale: float = 1.0) -> list[Figure]:
    runs = max(5, round(21 * scale))
    history = max(100, round(10_000 * scale))
    base = work_dir("hook")
    root, workspace = base / "store", base / "ws"
    workspace.mkdir()
    root.mkdir()
    (root / "policy.toml").write_text(POLICY)
    env = {"PATH": "/usr/bin:/bin", "SUPERVISOR_HOME": str(root), "PYTHONPATH": str(REPO)}
    try:
        small = build_session(root, "bench-small", workspace, 10)
        full = build_session(root, "bench-full", workspace, history // 5)
        large = build_session(root, "bench-large", workspace, history)
        baseline, hook_small, hook_full, hook_large = [], [], [], []
        for i in range(runs + 1):
            b = timed(BASELINE, payload("bench-small", workspace, i), env)
            s = timed(HOOK, payload("bench-small", workspace, i), env)
            f = timed(HOOK, payload("bench-full", workspace, i), env)
            g = timed(HOOK, payload("bench-large", workspace, i), env)
            if i:  # the first round warms the file cache and the bytecode
                baseline.append(b)
                hook_small.append(s)
                hook_full.append(f)
                hook_large.append(g)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    ms = 1000.0
    return [
        Figure(
            "hook PreToolUse wall time vs json.load of the payload",
            statistics.median(hook_small) * ms, "ms",
            baseline=statistics.median(baseline) * ms, max_ratio=1.5,
            note=f"median of {runs} interleaved runs; {small} earlier events",
        ),
        Figure(
            f"hook wall time with {large} vs {small} earlier events",
            statistics.median(hook_large) * ms, "ms",
            baseline=statistics.median(hook_small) * ms, max_ratio=1.1,
            note=f"median of {runs} interleaved runs",
        ),
        Figure(
            f"hook wall time with {large} vs {full} earlier events",
            statistics.median(hook_large) * ms, "ms",
            baseline=statistics.median(hook_full) * ms, max_ratio=1.1,
            note="both beyond the engine's window (1,000 events): the snapshot no longer grows",
        ),
    ]


if __name__ == "__main__":
    for figure in run(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0):
        print(f"{figure.name}: {figure.value:.1f} {figure.unit} vs {figure.baseline:.1f} "
              f"(ratio {figure.ratio:.2f}, target {figure.target})")
