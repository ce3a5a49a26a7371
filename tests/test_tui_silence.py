"""The dashboard shows a hook session whose hooks stopped reaching the supervisor (its transcript
changed long after its last hook event) as "unsupervised", in its own colour, with the reason in
the session's overview; the judgement is `supervisor.store.silence`'s, throttled to one `stat`
per session every few seconds, and a hook event that arrives ends it at once."""

import os
from pathlib import Path

import pytest
from tui_support import FROZEN_NOW, call, load, make_app, press, screen_text, start, write_events

from supervisor.store.liveness import THIS_HOST
from supervisor.store.recordings import MARKER, MARKER_TEXT
from supervisor.tui import palette
from supervisor.tui.format import STATUS_STYLES
from supervisor.tui.model import SILENCE_CHECK_S
from supervisor.tui.panels.overview import OverviewPanel
from supervisor.tui.screens.session import SessionScreen
from supervisor.tui.widgets.session_table import SessionTable

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


HEARD = FROZEN_NOW - 590
"""The last hook event of the session (`write_events` from `FROZEN_NOW - 600`, 2 s apart)."""


def _status_cell(app: object, sid: str) -> tuple[str, str]:
    table = app.screen.query_one(SessionTable)  # type: ignore[attr-defined]
    cell = table.get_row_at(table.keys.index(sid))[3]
    return cell.plain, str(cell.style)


@pytest.mark.slow
async def test_a_silent_hook_session_is_shown_unsupervised_with_the_reason(
        root: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text('{"type":"user"}\n')
    os.utime(transcript, (HEARD, HEARD))  # written with the last hook event: supervised
    write_events(root, "hooked", [start(pid=os.getpid(), host=THIS_HOST,
                                        transcript_path=str(transcript)), *call(2)])
    write_events(root, "other", [start(pid=os.getpid(), host=THIS_HOST), *call(2)])
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        await load(pilot, initial=True)
        assert _status_cell(app, "hooked")[0] == "idle"
        assert app.model.silence_check_s == SILENCE_CHECK_S > 1

        os.utime(transcript, (FROZEN_NOW - 10, FROZEN_NOW - 10))  # the agent went on working
        app.refresh_screens()
        await pilot.pause()
        assert _status_cell(app, "hooked")[0] == "idle"  # throttled: not looked at again yet

        app.model.silence_check_s = 0.0
        app.refresh_screens()
        await pilot.pause()
        text, style = _status_cell(app, "hooked")
        assert text == "unsupervised"
        assert style == palette.style(STATUS_STYLES["unsupervised"])
        assert style not in {palette.style(STATUS_STYLES[s]) for s in ("waiting", "dead")}
        assert _status_cell(app, "other")[0] == "idle"  # no transcript: nothing to go by
        table = app.screen.query_one(SessionTable)
        assert table.keys[0] == "hooked"  # it needs the operator: sorted first

        table.cursor_row = 0
        await press(pilot, "enter")
        assert isinstance(app.screen, SessionScreen)
        app.refresh_screens()
        await pilot.pause()
        shown = screen_text(app)
        assert "unsupervised" in shown
        meta = str(app.screen.query_one(OverviewPanel).query_one("#meta").render())
        assert ("its transcript changed 10 min after the last hook event: its hooks no longer "
                "reach the supervisor") in " ".join(meta.split())

        # a hook event arrives: the silence ends at once, throttle or not
        app.model.silence_check_s = 3600.0
        write_events(root, "hooked", [{"type": "tool_call", "ts": FROZEN_NOW - 5,
                                       "call_id": "c9", "tool": "bash", "args": {"cmd": "ls"}}])
        await load(pilot)
        meta = str(app.screen.query_one(OverviewPanel).query_one("#meta").render())
        assert "transcript changed" not in meta
        assert "unsupervised" not in screen_text(app)
        await press(pilot, "escape")
        assert _status_cell(app, "hooked")[0] == "running"


async def test_recordings_are_never_unsupervised(root: Path, tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("{}\n")
    os.utime(transcript, (FROZEN_NOW - 10, FROZEN_NOW - 10))
    write_events(root, "old", [start(transcript_path=str(transcript)), *call(2)])
    (root / MARKER).write_text(MARKER_TEXT)
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        await load(pilot, initial=True)
        assert _status_cell(app, "old")[0] != "unsupervised"
        assert app.model.unsupervised("old", FROZEN_NOW) is None
