"""`supervisor run` agents and the dashboard: key latency with 20 live run agents and the
Terminal panel of one open, against the same dashboard over 20 sessions without agents.

Each run agent (`supervisor run --cmd`, a Python loop) prints a coloured line every 0.1 s in its
tmux pane, so the panel's 4-per-second capture always has a new screen to sanitise and draw,
and the 20 panes keep the supervisor's tmux server busy. Both dashboards (Textual, headless)
open one session with the Terminal panel shown and the history focused; a key (`up`/`down`
alternately, moving the history's cursor) is timed from the press until the app is idle
again. Phases A B C B C A (without agents; with them and the panel shown; with them and the
panel hidden, informative: what the agents' own load costs) so a busy moment of the machine
hits all. Target: p50 and p95 within 1.5x of the dashboard without agents (issue #26).
"""

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, Figure, percentile, work_dir

from supervisor.host.tmux import Server, socket_name
from supervisor.store.writer import event_writer

AGENTS = 20
KEYS = 100
AGENT = (f"{sys.executable} -c \"import time\nfor i in range(10**9):\n"
         "    print(f'\\x1b[32mstep {i}\\x1b[0m working on task {i}', flush=True)\n"
         "    time.sleep(0.1)\"")


def _sessions(root: Path, names: list[str]) -> None:
    for name in names:
        with event_writer(root, name) as w:
            w.append({"type": "session_start", "agent": "bench", "task": f"task {name}"})
            for n in range(50):
                w.append({"type": "tool_call", "call_id": f"c{n}", "tool": "bash",
                          "args": {"cmd": f"make step{n}"}})


def _start_agents(root: Path, count: int) -> list[str]:
    names = [f"r{i:02d}" for i in range(count)]
    env = {"PYTHONPATH": str(REPO)}
    for name in names:
        done = subprocess.run(
            [sys.executable, "-m", "supervisor", "run", "--root", str(root), "--name", name,
             "--cmd", AGENT], capture_output=True, text=True, env={**os.environ, **env})
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
    _sessions(root, names)
    return names


async def _keys(root: Path, session: str, keys: int, latencies: list[float],
                captures: list[int], panel_shown: bool = True) -> None:
    from supervisor.tui.app import SupervisorApp
    from supervisor.tui.panels.terminal import TerminalPanel

    app = SupervisorApp(root, theme="supervisor-dark")
    async with app.run_test(headless=True, size=(160, 50)) as pilot:
        await pilot.pause(1.0)
        app.open_session(session)
        await pilot.pause()
        if panel_shown:
            await pilot.press("T")
        await pilot.pause(1.0)
        screen = app.screen
        screen.history.focus()  # type: ignore[attr-defined]
        await pilot.pause()
        # a panel is made when its tab is first shown: hidden, there may be none (it then
        # captures nothing, which is what the hidden case measures)
        made = screen.query(TerminalPanel)
        panel = made.first() if made else None
        before = panel.captures if panel else 0
        for n in range(keys):
            started = time.perf_counter()
            await pilot.press("up" if n % 2 else "down")
            await pilot.pause()
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.02)
        captures.append(panel.captures - before if panel else 0)


def run(scale: float = 1.0) -> list[Figure]:
    if shutil.which("tmux") is None:
        return [Figure("tmux not installed: nothing measured", 0)]
    agents = max(2, round(AGENTS * scale))
    keys = max(20, round(KEYS * scale))
    plain_root = work_dir("run-plain")
    plain = [f"p{i:02d}" for i in range(agents)]
    _sessions(plain_root, plain)
    run_root = work_dir("run-agents")
    server = Server(socket_name(run_root))
    with_runs: list[float] = []
    hidden: list[float] = []
    without: list[float] = []
    captures: list[int] = []
    hidden_captures: list[int] = []
    try:
        asyncio.run(_keys(plain_root, plain[0], keys, without, []))
        names = _start_agents(run_root, agents)
        time.sleep(1.0)
        for _ in range(2):
            asyncio.run(_keys(run_root, names[0], keys, with_runs, captures))
            asyncio.run(_keys(run_root, names[0], keys, hidden, hidden_captures, False))
        server.kill_server()
        asyncio.run(_keys(plain_root, plain[0], keys, without, []))
    finally:
        server.kill_server()
        for root in (plain_root, run_root):
            shutil.rmtree(root, ignore_errors=True)
    ms = 1000.0
    note = (f"{agents} run agents printing 10 lines/s, the Terminal panel of one open; "
            f"{keys} keys per phase, A B C B C A (C: the panel hidden); panel captures per "
            f"phase: {json.dumps(captures)}, hidden: {json.dumps(hidden_captures)}")
    return [
        Figure("key latency p50, 20 run agents", percentile(with_runs, 50) * ms, "ms",
               baseline=percentile(without, 50) * ms, max_ratio=1.5, note=note),
        Figure("key latency p95, 20 run agents", percentile(with_runs, 95) * ms, "ms",
               baseline=percentile(without, 95) * ms, max_ratio=1.5, note=note),
        Figure("key latency p50, 20 run agents, panel hidden", percentile(hidden, 50) * ms,
               "ms", baseline=percentile(without, 50) * ms, note=note),
        Figure("key latency p95, 20 run agents, panel hidden", percentile(hidden, 95) * ms,
               "ms", baseline=percentile(without, 95) * ms, note=note),
    ]
