"""The session screen's Terminal panel under Pilot, on a real `supervisor run` agent in real
tmux: the live screen with its colours and nothing else of the agent's escapes, a line typed to
the agent and recorded, no capture at all while the panel is hidden."""

import asyncio
import shutil
import sys
from pathlib import Path

import pytest
from textual import events

from supervisor.tui.panels.terminal import ScreenView, TerminalPanel
from supervisor.tui.screens.line import LineScreen
from supervisor.tui.screens.session import SessionScreen
from tests.host_helpers import Runs, runs, wait_for
from tests.tui_support import (
    CONTROL_CHARS,
    HOSTILE,
    load,
    make_app,
    screen_text,
    start,
    until,
    write_events,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
__all__ = ["runs"]
SIZE = (160, 50)
AGENT = f"""
import sys
sys.stdout.write("\\x1b[31mRED-ALERT\\x1b[0m " + {HOSTILE!r} + "\\n")
sys.stdout.flush()
for line in sys.stdin:
    print("got:" + line.strip(), flush=True)
"""


def start_agent(runs: Runs, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    runs.ok("run", "--name", "p1", "--cmd", f"{sys.executable} {script}")
    wait_for(lambda: "RED-ALERT" in runs.ok("screen", "p1"), what="the agent's first line")
    write_events(runs.root, "p1", [start(agent="scripted")])  # the session the panel is on


async def test_the_terminal_panel_shows_the_agents_screen_safely_and_talks_to_it(
        runs: Runs, tmp_path: Path) -> None:
    start_agent(runs, tmp_path)
    app = make_app(runs.root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("p1")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        assert not app.screen.query(TerminalPanel)  # not shown yet: not made, never captured
        await pilot.press("T")
        await until(pilot, lambda: "RED-ALERT" in screen_text(app))
        panel = app.screen.query_one(TerminalPanel)
        shown = panel.query_one(ScreenView).text
        red = [s for s in shown.spans if not isinstance(s.style, str) and s.style.color
               and s.style.color.number == 1]  # SGR 31: red
        assert red and shown.plain[red[0].start:red[0].end] == "RED-ALERT"  # colours kept
        text = screen_text(app)
        assert "pwned" in text and "evil.example" not in text.split("pwned")[0]
        assert not (set(shown.plain) & CONTROL_CHARS)  # no escape, bidi or bell survived
        assert "aGVsbG8" not in shown.plain  # the OSC 52 clipboard write went whole
        assert "running" in text and "a attach" in text

        # the line takes every key from `i` on: typed at once after it, `t` (next theme) and
        # `o` (the overview tab) are text, not the dashboard's keys
        theme = app.theme
        await pilot.pause(0.5)
        for key in "ito there":
            app.post_message(events.Key("space" if key == " " else key, key))
        await until(pilot, lambda: isinstance(app.screen, LineScreen))
        await pilot.press("enter")
        await until(pilot, lambda: "got:to there" in screen_text(app))
        said = [e for e in runs.events("p1") if e.get("via") == "send-keys"]
        assert [(e["role"], e["text"]) for e in said] == [("user", "to there")]
        assert app.theme == theme and panel.is_on_screen

        await pilot.press("z")  # the agent's screen across the whole width
        await pilot.pause()
        assert app.screen.maximized is panel
        assert panel.query_one(ScreenView).size.width >= SIZE[0] - 4
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.maximized is None and isinstance(app.screen, SessionScreen)

        await pilot.press("o")  # another panel: the terminal is hidden
        await pilot.pause()
        hidden_at = panel.captures
        await asyncio.sleep(1.0)
        await pilot.pause()
        assert panel.captures == hidden_at
        await pilot.press("T")
        await until(pilot, lambda: panel.captures > hidden_at)


async def test_a_session_not_started_by_run_says_so(runs: Runs) -> None:
    write_events(runs.root, "plain", [start()])
    app = make_app(runs.root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("plain")
        await pilot.pause()
        await pilot.press("T")
        await until(pilot, lambda: "Not started by `supervisor run`" in screen_text(app))
        assert app.screen.query_one(TerminalPanel).captures == 0
