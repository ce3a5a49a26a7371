"""Operators III (issue 36): what an operator sees and can reach, in a split pane too."""

import os
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

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


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
