"""Hostile agent text on every screen: markup shown literally, terminal controls removed."""

from pathlib import Path

import pytest
from tui_support import (
    CONTROL_CHARS,
    HOSTILE,
    call,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    write_events,
)

from supervisor.tui.screens.escalation import EscalationScreen
from supervisor.tui.widgets.history_view import HistoryView

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _hostile_session(root: Path) -> None:
    write_events(root, "evil", [
        {"type": "session_start", "agent": "[red]agent[/red]\x1b[2J", "task": HOSTILE,
         "cwd": HOSTILE, "pid": 1, "policy": {"note": HOSTILE}},
        {"type": "tool_call", "call_id": "c1", "tool": "bash\x1b]0;title\x07",
         "args": {"cmd": HOSTILE}},
        {"type": "tool_result", "call_id": "c1", "ok": False, "output": HOSTILE,
         "output_bytes": 10, "output_hash": "h", "error": HOSTILE},
        {"type": "message", "role": "assistant", "text": HOSTILE},
        {"type": "detection", "detector": "exact_repeat", "level": 2, "signature": HOSTILE,
         "evidence": [2], "message": HOSTILE},
        {"type": "checkpoint", "checkpoint_id": "cp-1", "label": HOSTILE, "commit": "abc",
         "at_seq": 1, "files": 1, "changed_files": [HOSTILE]},
        *call(2),
        escalation(reason=HOSTILE, evidence=[2, 3]),
    ])
    path = root / "sessions" / "evil" / "events.jsonl"
    with path.open("ab") as f:
        f.write(HOSTILE.encode() + b"\n")


def _assert_safe(text: str) -> None:
    bad = sorted({hex(ord(ch)) for ch in text if ch in CONTROL_CHARS and ch != "\n"})
    assert not bad, f"control characters reached the screen: {bad}"
    assert "[bold red]pwned[/]" in text or "pwned" not in text


@pytest.mark.slow
async def test_hostile_text_is_shown_literally_and_without_controls(root: Path) -> None:
    _hostile_session(root)
    app = make_app(root)
    async with app.run_test(size=(160, 50)) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        _assert_safe(text)
        assert "[red]agent[" in text and "[bold red]pwned[/]" in text
        await press(pilot, "enter")
        await pilot.pause()
        text = screen_text(app)
        _assert_safe(text)
        assert "[link=https://evil.example]click[/link]" in text
        history = app.screen.query_one(HistoryView)
        for y in range(history.size.height):
            line = history.render_line(y).text
            assert not any(ch in CONTROL_CHARS for ch in line)
        for key in ("d", "c", "p"):
            await press(pilot, key)
            await pilot.pause()
            _assert_safe(screen_text(app))
        await press(pilot, "e")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        text = screen_text(app)
        _assert_safe(text)
        assert "Reason: [bold red]pwned[/]" in text
        await press(pilot, "r")
        await pilot.pause()
        _assert_safe(screen_text(app))


async def test_hostile_notification_is_not_markup(root: Path) -> None:
    write_events(root, "s1", [call(1)[0] | {"type": "session_start", "agent": "a"}])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        write_events(root, "s1", [escalation(reason=HOSTILE)])
        await load(pilot)
        notes = [n for n in app._notifications if n.title == "Escalation"]
        assert len(notes) == 1 and not notes[0].markup
        assert not any(ch in CONTROL_CHARS for ch in notes[0].message)
