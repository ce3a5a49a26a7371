"""The new-run form takes the keys typed right after `n` (pilot, real files): it opens as `n`
is handled, and what comes before its fields can take keys is played into it in order."""

from pathlib import Path

import pytest
from textual import events
from textual.widgets import Input
from tui_support import load, make_app, start, told, write_events

from supervisor.tui.deliberate import BURST_GAP_S
from supervisor.tui.screens.new_run import NewRunScreen
from supervisor.tui.screens.sessions import SessionsScreen

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def typed(text: str) -> list[events.Key]:
    names = {"\t": "tab", " ": "space"}
    return [events.Key(names.get(c, c), c) for c in text]


async def test_keys_typed_right_after_n_fill_the_form(root: Path) -> None:
    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        sessions = app.screen
        assert isinstance(sessions, SessionsScreen)
        await pilot.pause(BURST_GAP_S + 0.05)  # `n` alone, then the rest at once
        for key in [events.Key("n", "n"), *typed("\tcat /etc/motd\tr1")]:
            app.post_message(key)
        for _ in range(10):
            await pilot.pause()
        form = app.screen
        assert isinstance(form, NewRunScreen)
        fields = {f.id: f.value for f in form.query(Input)}
        assert fields["new-agent"] == "" and fields["new-cmd"] == "cat /etc/motd"
        assert fields["new-name"] == "r1" and form.focused is form.query_one("#new-name")
        # none of it reached the table (`/` would open its filter, `e` the oldest escalation)
        assert not sessions.filter_text and sessions.query_one("#filter").display is False
        app.post_message(events.Key("tab", "\t"))  # and the form goes on as usual
        await pilot.pause()
        assert form.focused is form.query_one("#new-folder")


async def test_a_burst_after_n_does_not_reach_the_table(root: Path) -> None:
    """Keys the sessions screen never takes from a burst (`s` sorts, `h` hides rows) are
    judged as they arrive, before the form opens: dropped, and said; the others are the
    form's."""
    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        sessions = app.screen
        await pilot.pause(BURST_GAP_S + 0.05)
        for key in [events.Key("n", "n"), *typed("\tbash")]:
            app.post_message(key)
        for _ in range(10):
            await pilot.pause()
        assert isinstance(app.screen, NewRunScreen)
        assert app.screen.query_one("#new-cmd", Input).value == "ba"
        assert sessions.sort.column == "status" and not sessions.hide_ended
        assert any("ignored s: keys came faster than a person types" in m for m in told(app))


async def test_escape_typed_right_after_n_closes_the_form(root: Path) -> None:
    write_events(root, "s1", [start()])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        await pilot.pause(BURST_GAP_S + 0.05)
        for key in [events.Key("n", "n"), *typed("ab"), events.Key("escape", None)]:
            app.post_message(key)
        for _ in range(10):
            await pilot.pause()
        assert isinstance(app.screen, SessionsScreen)
