"""One bad session never takes the dashboard down (issue 18, item 8): lines with numbers no
reader can hold are bad lines, shown with the reason; a session whose events make a view fail
is shown as broken; the other sessions are shown as always, on every restart."""

import json
from pathlib import Path

import pytest
from tui_support import call, load, make_app, screen_text, start, write_events

from supervisor.tui.screens.session import SessionScreen

pytestmark = pytest.mark.anyio
SIZE = (140, 40)

KILLERS = [
    {"v": 1, "seq": 2**63, "ts": 1.0, "type": "heartbeat"},
    {"v": 1, "seq": 3, "ts": 1.0, "type": "verdict", "call_id": "c", "action": "allow",
     "level": 0, "gauges": {"tool_calls": 10**400}},
    {"v": 1, "seq": 4, "ts": 1.7e18, "type": "heartbeat"},
    {"v": 1, "seq": 5, "ts": 1e300, "type": "tool_call", "call_id": "c", "tool": "t",
     "args": {}},
    {"v": 1, "seq": 6, "ts": 1.0, "type": "limit", "name": "x", "value": 1e300,
     "limit": 1e-300, "action": "stop"},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _sessions(root: Path) -> None:
    write_events(root, "good", [start(), *call(1)])
    write_events(root, "hostile", [start(policy={"limits": {"tokens": {"limit": 10**400}}})])
    with (root / "sessions" / "hostile" / "events.jsonl").open("ab") as f:
        for line in KILLERS:
            f.write(json.dumps(line).encode() + b"\n")


@pytest.mark.slow
async def test_lines_no_reader_can_hold_are_bad_lines_on_every_start(root: Path) -> None:
    _sessions(root)
    for _restart in range(2):
        app = make_app(root)
        async with app.run_test(size=SIZE) as pilot:
            await load(pilot, initial=True)
            text = screen_text(app)
            assert "good" in text and "hostile" in text
            assert app.model.sessions["hostile"].summary.bad_lines == len(KILLERS)
            app.open_session("hostile")
            await pilot.pause()
            assert isinstance(app.screen, SessionScreen)
            assert "hostile" in screen_text(app)


@pytest.mark.slow
async def test_a_session_that_breaks_the_fold_is_shown_broken(root: Path,
                                                               monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    """Whatever else can still fail on a session's events (the next unknown), the dashboard
    shows that session as broken, with the reason, and goes on with the others."""
    from supervisor.tui import model

    _sessions(root)
    write_events(root, "trap", [start(task="trap"), *call(1)])
    original = model._HANDLERS["tool_call"]

    def explode(st: model.SessionState, e: object) -> None:
        if st.session_id == "trap":
            raise OverflowError("a value no view can hold")
        original(st, e)

    monkeypatch.setitem(model._HANDLERS, "tool_call", explode)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        assert "broken" in text and "good" in text
        summary = app.model.sessions["trap"].summary
        assert summary.status(0) == "broken" and "OverflowError" in (summary.broken or "")
        assert app.model.sessions["good"].summary.tool_calls == 1
        write_events(root, "good", call(2))  # the others go on live
        await load(pilot)
        assert app.model.sessions["good"].summary.tool_calls == 2
