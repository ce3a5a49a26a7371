"""The decision registry's edges (issue 38): the dashboard, the CLI and the guard ask the kinds,
never a kind's name. A throwaway kind registered in a fixture is offered by the escalation
prompt, the CLI and the guard's escalation, and carried out, with none of them edited; a
throwaway command kind is a CLI command with no module of its own; and no branch on a kind's
name is left in the places that used to hold them."""

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tui_support import (
    control_lines,
    escalated_session,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    until,
    write_events,
)
from tui_support import start as start_event

from supervisor.cli import build_parser
from supervisor.cli import main as cli_main
from supervisor.guard import Session
from supervisor.protocol.decisions import (
    KINDS,
    Context,
    DecisionKind,
    Desk,
    Ignored,
    Result,
    register,
)
from supervisor.protocol.decisions.base import EffectFacts
from tests.conftest import REPO
from tests.guard_helpers import events, of_type

EDGES = ("supervisor/tui/app.py", "supervisor/tui/screens/escalation.py",
         "supervisor/cli/followup.py", "supervisor/guard/journal.py", "supervisor/guard/desk.py")
"""Where branches on a kind's name used to live (issue 38)."""


class Shelve(DecisionKind):
    """A kind no code of the supervisor knows: the call is refused, the agent goes on."""

    name = "shelve"
    title = "Shelve"
    summary = "the stopped call is refused; the agent goes on with something else"
    answers = True
    key = "k"
    protection = "at once"
    cli = "supervisor answer SESSION --shelve"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        return Result("block", "The operator shelved this call; do something else.",
                      "call shelved")


@contextmanager
def _running(root: Path, tmp_path: Path) -> Iterator[Session]:
    """Session `s1` of a real guard, one call made."""
    work = tmp_path / "work"
    work.mkdir()
    with Session("test-agent", task="t", cwd=work, root=root, session_id="s1",
                 heartbeat_s=None) as s:
        s.before_call("bash", {"command": "ls"})
        yield s


@pytest.fixture
def shelve() -> Iterator[DecisionKind]:
    kind = Shelve()
    register(kind)
    try:
        yield kind
    finally:
        del KINDS[kind.name]


class Hush(DecisionKind):
    """A command no code of the supervisor knows, whose command line has the plain shape: the
    CLI makes `supervisor hush SESSION` of it (`cli/decision_cmd.py`)."""

    name = "hush"
    title = "Hush"
    summary = "the agent is asked to say less"
    cli = "supervisor hush SESSION"

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        return Result("nudge", "The operator asks you to say less.", "asked to say less")


def test_a_new_command_kind_is_a_cli_command_with_no_module(root: Path, tmp_path: Path) -> None:
    kind = Hush()
    register(kind)
    try:
        with _running(root, tmp_path) as s:
            assert "hush" in build_parser().format_help()
            assert cli_main(["hush", "s1", "--root", str(root), "--no-wait"]) == 0
            assert control_lines(root, "s1")[-1]["action"] == "hush"
            s.before_call("bash", {"command": "ls -l"})
        [applied] = of_type(events(root, "s1"), "decision_applied")
        assert (applied["action"], applied["outcome"]) == ("hush", "asked to say less")
    finally:
        del KINDS[kind.name]
    assert "hush" not in build_parser().format_help()


def test_registration_refuses_a_taken_name_or_key(shelve: DecisionKind) -> None:
    with pytest.raises(ValueError, match="'approve' and 'again' share the key 'a'"):
        register(type("Again", (Shelve,), {"name": "again", "key": "a"})())
    with pytest.raises(ValueError, match="Shelve and Shelve are both named 'shelve'"):
        register(Shelve())
    assert "again" not in KINDS


def test_the_guard_offers_and_carries_out_a_new_kind(shelve: DecisionKind, root: Path,
                                                     tmp_path: Path) -> None:
    """The journal's escalation offers it, the CLI's `answer` has its flag and sends it, and
    the guard's desk carries it out: none of them names it."""
    with _running(root, tmp_path) as s:
        s.guard.pause("test")
        [esc] = of_type(events(root, "s1"), "escalation")
        assert "shelve" in esc["options"]
        assert build_parser().parse_args(["answer", "s1", "--shelve"]).shelve
        assert cli_main(["answer", "s1", "--shelve", "--root", str(root), "--no-wait"]) == 0
        assert control_lines(root, "s1")[-1]["action"] == "shelve"
        s.guard.poll()
    [applied] = of_type(events(root, "s1"), "decision_applied")
    assert (applied["action"], applied["outcome"]) == ("shelve", "call shelved")


class Hold(Shelve):
    """A holding kind in place of `pause`: what an agent's own pause must escalate as."""

    name = "hold"
    title = "Hold"
    answers = False
    key = None
    holds = True


def test_the_agents_own_pause_holds_it_as_the_registrys_holding_kind(root: Path,
                                                                     tmp_path: Path) -> None:
    """`Guard.pause` (the SDK's, the agent's own request) escalates as the registry's holding
    kind, as the operator's command does, not as a name of its own."""
    before = dict(KINDS)
    del KINDS["pause"]
    register(Hold())
    try:
        with _running(root, tmp_path) as s:
            s.guard.pause("the agent asks for a look")
        [esc] = of_type(events(root, "s1"), "escalation")
    finally:
        KINDS.clear()
        KINDS.update(before)
    assert (esc["kind"], esc["reason"]) == ("hold", "the agent asks for a look")
    assert esc["deadline_ts"] is None  # a hold: no loop behind it, no deadline by default


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_escalation_prompt_offers_and_sends_a_new_kind(shelve: DecisionKind,
                                                                 root: Path) -> None:
    from supervisor.tui.screens.escalation import EscalationScreen

    escalated_session(root, "s1")
    options = ["approve", "guidance", "skip", "abort", "shelve"]
    write_events(root, "s2", [start_event(), escalation(options=options)])
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("s2", "esc-1")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, EscalationScreen)
        assert re.search(r" k +shelve \(at once\)", screen_text(app))
        assert "Decide: shelve" in [c.title for c in screen.commands()]
        await press(pilot, "k")
        await until(pilot, lambda: control_lines(root, "s2"))
        assert [line["action"] for line in control_lines(root, "s2")] == ["shelve"]


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_kind_registered_after_the_screens_were_built_has_its_keys(root: Path) -> None:
    """The dashboard's screen classes exist before the kinds are registered (a plugin's, or
    this test's): the escalation prompt binds the new answer's key and the session screen the
    new command's key as each screen is built, as deliberate keys, and pressing them sends."""
    from supervisor.tui.screens.escalation import EscalationScreen
    from supervisor.tui.screens.session import SessionScreen

    answer, command = Shelve(), type("Hush2", (Hush,), {"command_key": "J"})()
    register(answer)
    register(command)
    try:
        escalated_session(root, "s1")
        write_events(root, "s2", [start_event(), escalation(options=["approve", "shelve"])])
        app = make_app(root)
        async with app.run_test(size=(120, 40)) as pilot:
            await load(pilot, initial=True)
            app.open_escalation("s2", "esc-1")
            await pilot.pause()
            assert isinstance(app.screen, EscalationScreen)
            assert "k" in app.screen.DELIBERATE_KEYS
            await press(pilot, "k")
            await until(pilot, lambda: control_lines(root, "s2"))
            assert [line["action"] for line in control_lines(root, "s2")] == ["shelve"]
            await press(pilot, "escape")
            app.open_session("s1")
            await pilot.pause()
            assert isinstance(app.screen, SessionScreen)
            assert "J" in app.screen.DELIBERATE_KEYS
            await press(pilot, "J")
            await until(pilot, lambda: control_lines(root, "s1"))
            assert [line["action"] for line in control_lines(root, "s1")] == ["hush"]
    finally:
        del KINDS[answer.name], KINDS[command.name]


def _kind_name_branches(text: str) -> list[str]:
    """Comparisons of a value with a decision kind's name (`action == "pause"`,
    `kind in ("skip", "split")`): what a kind's own attribute should say instead."""
    names = "|".join(re.escape(n) for n in KINDS)
    literal = rf"""["'](?:{names})["']"""
    pattern = re.compile(rf"""(?:[!=]=\s*{literal}|{literal}\s*[!=]=|"""
                         rf"""\bin\s*[(\[{{][^)\]}}\n]*{literal})""")
    return [line.strip() for line in text.splitlines() if pattern.search(line)]


@pytest.mark.parametrize("path", EDGES)
def test_no_branch_on_a_kind_name_is_left(path: str) -> None:
    assert _kind_name_branches((REPO / path).read_text()) == []


def test_the_branch_finder_finds_branches() -> None:
    assert _kind_name_branches(
        'if action == "pause":\n'
        'elif kind in ("skip", "split"):\n'
        'x = "guidance" if command == "guide" else command\n'
        'fallback = pending.get("fallback") or "skip"\n') == [
        'if action == "pause":', 'elif kind in ("skip", "split"):']


def test_a_kind_key_another_binding_has_fails_where_it_is_bound() -> None:
    """A command key the plan panel's `E` (edit the plan) or the sessions screen's `K` (stop a
    run) already has is refused as the screen binds it, naming both actions; the registry's own
    keys bind cleanly."""
    from textual.binding import Binding

    from supervisor.tui.decision_keys import command_bindings, distinct
    from supervisor.tui.panels import PANELS
    from supervisor.tui.screens.sessions import SessionsScreen

    panels = [panel.BINDINGS for panel in PANELS]
    runs = [b for b in SessionsScreen.BINDINGS
            if isinstance(b, Binding) and not b.action.startswith("command(")]
    assert distinct("the session screen", command_bindings(), *panels)
    assert distinct("the sessions screen", [*command_bindings(), *runs])
    for key, clash in (("E", "change('replan')"), ("K", "run('stop')")):
        kind = type("Clash", (Hush,), {"name": "clash", "command_key": key})()
        register(kind)
        try:
            said = re.escape(f"the key {key!r} is bound to both \"command('clash')\" and "
                             f"\"{clash}\"")
            with pytest.raises(ValueError, match=said):
                distinct("the session screen", command_bindings(), *panels)
                distinct("the sessions screen", [*command_bindings(), *runs])
        finally:
            del KINDS[kind.name]
