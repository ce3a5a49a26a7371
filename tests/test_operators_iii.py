"""Operators III (issue 36): what an operator sees and can reach, in a split pane too."""

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from tui_support import (
    call,
    checkpoint,
    escalation,
    load,
    make_app,
    screen_text,
    start,
    write_events,
)

from supervisor.store.liveness import THIS_HOST
from tests.terminal import Terminal, env, terminals  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.slow
async def test_the_prompt_scrolls_to_its_evidence_and_steps_at_80x24(root: Path) -> None:
    live = start(pid=os.getpid(), host=THIS_HOST)
    write_events(root, "s1", [live, checkpoint("cp-1", 1), *call(1), *call(2), *call(3),
                              checkpoint("cp-2", 6), escalation(deadline_ts=None,
                                                                evidence=[3, 5, 7])])
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("s1", "esc-1")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        first = screen_text(app)
        assert "a  approve" in first and "Evidence (3 steps" in first
        assert "Recent steps before it" not in first  # below the fold
        for _ in range(6):
            await pilot.press("down")
        await pilot.pause()
        scrolled = screen_text(app)
        assert "Recent steps before it" in scrolled
        assert "a  approve" in scrolled  # the answers stay in view


@pytest.mark.slow
async def test_a_fallback_is_not_called_answered_and_a_pause_is_no_escalation(root: Path
                                                                               ) -> None:
    from tui_support import press, until

    live = start(pid=os.getpid(), host=THIS_HOST)
    write_events(root, "s1", [live, *call(1), escalation(deadline_ts=None),
                              {"type": "decision_applied", "escalation_id": "esc-1",
                               "decision_id": "fallback", "action": "abort",
                               "outcome": "deadline passed: session aborted",
                               "operator": "guard"}])
    write_events(root, "p1", [live, *call(1), {
        "type": "escalation", "escalation_id": "esc-9", "level": 3, "reason": "paused by ana",
        "evidence": [], "options": ["approve", "guidance", "skip", "abort"],
        "deadline_ts": None, "fallback": "skip", "kind": "pause"}])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("s1", "esc-1")
        await pilot.pause()
        assert "Deadline: passed: the fallback (abort) applied" in screen_text(app)
        await pilot.press("escape")
        app.open_escalation("p1", "esc-9")
        # the footer draws its keys after the screen (a loaded machine shows the gap)
        await until(pilot, lambda: "Resume" in screen_text(app) or "Approve" in screen_text(app))
        text = screen_text(app)
        title = next(line for line in text.splitlines() if "Paused esc-9" in line)
        assert "paused by an operator" in title and "escalate" not in title
        assert " a Resume" in text or "a Approve" in text  # offered before the answer
        await press(pilot, "a")
        await pilot.pause()
        text = screen_text(app)
        assert "sent resume" in text and "sent approve" not in text
        # answered from here: the footer no longer offers the answers
        footer = text.splitlines()[-1]
        assert "Approve" not in footer and "Skip" not in footer


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_quitting_the_demo_says_its_folder_is_removed(
        tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    term = Terminal("demo", [sys.executable, "-m", "supervisor", "demo"], env, tmp_path)
    terminals.append(term)
    term.wait_for(lambda s: "session" in s and "agent" in s, "the sessions screen", timeout=90)
    screen = term.quit()  # `y` too if the loop agent already waits
    assert "EXITED 0" in screen
    said = re.search(r"demo root (\S+) removed \(--keep keeps it\)", screen.replace("\n", ""))
    assert said is not None, screen
    assert not Path(said.group(1)).exists()


def test_a_notification_row_of_the_history_reads_as_words() -> None:
    from supervisor.store.render import summary

    assert summary({"type": "notification", "escalation_id": "esc-1", "outcome": "failed",
                    "service": "ntfy", "attempt": 2, "reason": "HTTP 503"}) == (
        "esc-1: failed via ntfy (attempt 2): HTTP 503")
    assert summary({"type": "notification", "escalation_id": "esc-1", "outcome": "sent",
                    "service": "ntfy", "attempt": 1, "reason": None}) == (
        "esc-1: sent via ntfy (attempt 1)")
