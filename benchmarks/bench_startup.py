"""The dashboard's start: a new process until its first screen is painted.

`supervisor dashboard` as it starts (`keys.load_app`, then the app, headless) on an empty root,
from the process's start until the sessions table is first painted; against a bare Textual app
whose one screen is a `DataTable` and a `Footer`, started and painted the same way (target: at
most 2x). Both are whole processes, interleaved (A B B A), medians; their byte code is compiled
once beforehand into a scratch cache (`PYTHONPYCACHEPREFIX`), as an installed package has it,
so neither pays for compiling its sources. What the start no longer imports (the engine, the
checkpoints' git side, the screens opened later) is held by tests/test_tui_imports.py.
"""

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import REPO, Figure, work_dir

PAINTED = "painted"

DASHBOARD = """
import asyncio, sys
from pathlib import Path
from supervisor.tui.keys import load_app
from supervisor.tui.widgets.session_table import SessionTable

painted = []
original = SessionTable.render_line
def noting(table, y):
    painted.append(y)
    return original(table, y)
SessionTable.render_line = noting

async def main():
    app = load_app()(Path(sys.argv[1]), theme="supervisor-dark")
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        while not painted:
            await asyncio.sleep(0.002)
        print("painted", flush=True)

asyncio.run(main())
"""

BARE = """
import asyncio, sys
from textual.app import App
from textual.widgets import DataTable, Footer

painted = []
original = DataTable.render_line
def noting(table, y):
    painted.append(y)
    return original(table, y)
DataTable.render_line = noting

class Bare(App):
    def compose(self):
        table = DataTable()
        table.add_columns("session", "agent", "status", "level", "steps", "last")
        yield table
        yield Footer()

async def main():
    async with Bare().run_test(headless=True, size=(120, 40)) as pilot:
        while not painted:
            await asyncio.sleep(0.002)
        print("painted", flush=True)

asyncio.run(main())
"""


def _start(code: str, root: Path, env: dict[str, str]) -> float:
    """Seconds from spawning the process until it says it painted (then it exits)."""
    started = time.perf_counter()
    with subprocess.Popen([sys.executable, "-c", code, str(root)], stdout=subprocess.PIPE,
                          text=True, env=env, cwd=root) as child:
        assert child.stdout is not None
        line = child.stdout.readline()
        took = time.perf_counter() - started
        child.wait(timeout=60)
    if line.strip() != PAINTED or child.returncode != 0:
        raise RuntimeError(f"the process did not paint its first screen ({child.returncode})")
    return took


def run(scale: float = 1.0) -> list[Figure]:
    rounds = max(2, int(6 * scale))
    scratch = work_dir("startup")
    root, cache, config = scratch / "root", scratch / "pycache", scratch / "config"
    root.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(REPO), PYTHONPYCACHEPREFIX=str(cache),
               SUPERVISOR_CONFIG=str(config), HOME=str(scratch))
    times: dict[str, list[float]] = {"dashboard": [], "bare": []}
    try:
        _start(DASHBOARD, root, env)  # compiles both into the cache: not counted
        _start(BARE, root, env)
        for index in range(rounds):
            order = ("dashboard", "bare") if index % 2 == 0 else ("bare", "dashboard")
            for which in order:
                times[which].append(_start(DASHBOARD if which == "dashboard" else BARE,
                                           root, env))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return [Figure("dashboard start to its first screen", statistics.median(times["dashboard"]),
                   "s", statistics.median(times["bare"]), 2.0,
                   note=f"whole processes, empty root, median of {rounds}, interleaved; "
                        "baseline: a bare Textual app with a DataTable, started the same way")]
