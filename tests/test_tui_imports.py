"""The dashboard's start loads what its first screen needs, not the rest.

`supervisor dashboard` (`keys.load_app`, then the app) opens on the sessions screen. The engine
(which only an escalation's task-size signals use), the checkpoints' git side, and the web,
OpenTelemetry, Redis, notification and analysis parts are imported when something needs them,
so the start does not pay for them; the events' parser (pydantic) loads when the first session
is read; and importing `supervisor.tui.app` alone (an
embedder's, a test's) does not load the screens opened later either (a session's with its
panels, an escalation's, the help's list of every screen). Checked in a fresh interpreter
that starts the real app on a root with an escalated session and waits for it in the first
screen, then opens the escalation: the engine comes then. `python benchmarks/run.py startup`
measures the time.
"""

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import cli_env

START = r"""
import asyncio, json, sys
from pathlib import Path
from supervisor.store.writer import event_writer

root = Path(sys.argv[1])
event_writer(root, "s1").append_many([
    {"type": "session_start", "agent": "demo", "cwd": "/tmp"},
    {"type": "tool_call", "call_id": "c1", "tool": "bash", "args": {"cmd": "make"}},
    {"type": "escalation", "escalation_id": "esc-1", "level": 3, "reason": "make 5 times",
     "evidence": [2], "options": ["approve", "abort"], "deadline_ts": None,
     "fallback": "abort"},
])
from supervisor.tui.keys import load_app  # as `supervisor dashboard` starts

async def main():
    app = load_app()(root, theme="supervisor-dark")
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        while "s1" not in app.model.sessions or not app.model.sessions["s1"].escalations:
            await pilot.pause(0.01)
        await pilot.pause()
        first = sorted(sys.modules)
        app.open_escalation("s1", "esc-1")
        while getattr(app.screen, "task_size", None) is None:
            await pilot.pause(0.01)
        return first, sorted(sys.modules)

first, opened = asyncio.run(main())
print(json.dumps({"first": first, "opened": opened}))
"""

PAINT_THEN_READ = r"""
import asyncio, json, sys
from pathlib import Path
from supervisor.tui.keys import load_app
from supervisor.tui.widgets.session_table import SessionTable

root = Path(sys.argv[1])
painted = []
original = SessionTable.render_line
def noting(table, y):
    if not painted:
        painted.append(sorted(sys.modules))
    return original(table, y)
SessionTable.render_line = noting

async def main():
    app = load_app()(root, theme="supervisor-dark")
    async with app.run_test(headless=True, size=(120, 40)) as pilot:
        while not painted:
            await pilot.pause(0.01)
        from supervisor.store.writer import event_writer  # the lines' encoder: no pydantic

        event_writer(root, "s1").append_many([{"type": "session_start", "agent": "demo"}])
        while "s1" not in app.model.sessions:
            await pilot.pause(0.01)
        return sorted(sys.modules)

read = asyncio.run(main())
print(json.dumps({"painted": painted[0], "read": read}))
"""

NOT_AT_START = ("supervisor.engine", "supervisor.guard.checkpoints", "supervisor.web",
                "supervisor.otel", "supervisor.analysis", "supervisor.importers",
                "supervisor.notify", "supervisor.host", "rapidfuzz", "redis", "opentelemetry",
                "apprise", "aiohttp")
"""Modules (and their submodules) the first screen does without."""
BEFORE_READING = ("pydantic", "pydantic_core", "supervisor.protocol.models",
                  "supervisor.protocol.codec")
"""What the first screen is painted without, and loaded with the first session read: the
events' parser."""
LATER_SCREENS = ("supervisor.tui.screens.session", "supervisor.tui.screens.escalation",
                 "supervisor.tui.screens.event", "supervisor.tui.screens.diff",
                 "supervisor.tui.panels")
"""What neither `import supervisor.tui.app` nor the start with the built-in keys loads
(`load_app` does when the operator changed a key: it checks them against these screens'
bindings before the dashboard starts, `tests/test_tui_keys.py`)."""


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def probe(script: str, tmp_path: Path) -> dict[str, list[str]]:
    """What a fresh interpreter running `script` on an empty root had imported, by stage."""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "root")],
                          capture_output=True, text=True, timeout=60,
                          env=cli_env(SUPERVISOR_CONFIG=str(tmp_path / "config")))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_first_screen_loads_nothing_it_does_without(tmp_path: Path) -> None:
    found = probe(START, tmp_path)
    assert loaded(found["first"], NOT_AT_START + LATER_SCREENS) == []
    assert "supervisor.tui.screens.escalation" in found["opened"]
    # the escalation's task size brought the engine (the check above can fail: it names a
    # module the dashboard does load, only when it is needed)
    assert "supervisor.engine.task_size" in found["opened"]


def test_the_first_screen_is_painted_before_the_events_parser_loads(tmp_path: Path) -> None:
    """pydantic and the protocol's models are a third of the dashboard's start: the first
    screen (here an empty root's) is painted without them; the first session read loads them."""
    found = probe(PAINT_THEN_READ, tmp_path)
    assert loaded(found["painted"], BEFORE_READING) == []
    assert set(BEFORE_READING) <= set(found["read"])


def test_importing_the_app_loads_none_of_the_later_screens() -> None:
    code = "import json, sys, supervisor.tui.app; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=cli_env())
    assert done.returncode == 0, done.stderr
    modules = json.loads(done.stdout)
    assert loaded(modules, NOT_AT_START + LATER_SCREENS) == []
    assert "supervisor.tui.screens.sessions" in modules
