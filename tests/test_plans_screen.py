"""Plans on the operator's screen (issue 31): the escalation prompt shows the task-size signals
and offers `split` first when they point to it; `p` takes the sub-tasks, one per line, and
writes one `split` decision. Pilot on real session files."""

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static, TextArea
from tui_support import (
    control_lines,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    start,
    until,
    write_events,
)

from supervisor.engine.task_size import THRESHOLDS, task_size
from supervisor.tui.screens.escalation import EscalationScreen
from supervisor.tui.screens.plan_input import PlanScreen

SIZE = (120, 45)
OPTIONS = ["approve", "guidance", "skip", "abort", "split"]
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _edit(n: int, path: str, ok: bool = True) -> list[dict[str, Any]]:
    return [{"type": "tool_call", "call_id": f"e{n}", "tool": "Edit", "args": {"path": path},
             "files_before": {path: f"old{n}"}},
            {"type": "tool_result", "call_id": f"e{n}", "ok": ok, "output": "",
             "output_bytes": 0, "output_hash": "h", "error": None if ok else "edit failed",
             "files": {path: f"new{n}" if ok else f"old{n}"}}]


def _fail(n: int, output: str, error: str) -> list[dict[str, Any]]:
    return [{"type": "tool_call", "call_id": f"f{n}", "tool": "bash",
             "args": {"command": "pytest"}},
            {"type": "tool_result", "call_id": f"f{n}", "ok": False, "output": output,
             "output_bytes": len(output), "output_hash": f"h{n}", "error": error}]


def _sprawling() -> list[dict[str, Any]]:
    """A task that changed five files and fails in four ways across three test files."""
    events: list[dict[str, Any]] = [start(), {"type": "task_start", "task_id": "t1",
                                              "title": "port the app"}]
    for n, path in enumerate(["a.py", "b.py", "c.py", "d.py", "e.py"]):
        events += _edit(n, path)
    for n, where in enumerate(["tests/test_a.py", "tests/test_b.py", "tests/test_c.py",
                               "tests/test_c.py"]):
        events += _fail(n, f"FAILED {where}::test_{n} - AssertionError", f"kind {'xyz'[n % 3]}"
                        f" error {n}" if n < 3 else "TypeError: bad operand")
    return events


def test_the_signals_count_what_they_say() -> None:
    size = task_size(_sprawling())
    assert size.values == {"files_changed": 5, "distinct_errors": 4,
                           "steps_since_progress": 4, "failing_places": 3}
    assert size.pointing == ["files_changed", "distinct_errors", "failing_places"]
    assert size.suggests_split
    # numbers are masked: the same error at another line is one error
    same = task_size([start(), *_fail(1, "x.py:10: boom", "boom at line 10"),
                      *_fail(2, "x.py:12: boom", "boom at line 12")])
    assert same.values["distinct_errors"] == 1 and same.values["failing_places"] == 1
    # a failed edit changes nothing; a task boundary starts the count again
    assert task_size([start(), *_edit(1, "a.py", ok=False)]).values["files_changed"] == 0
    again = task_size([*_sprawling(), {"type": "task_start", "task_id": "t2", "title": "x"}])
    assert again.values == {"files_changed": None, "distinct_errors": 0,
                            "steps_since_progress": 0, "failing_places": 0}
    # no call of the task named the files it writes (a script, an agent's own tool): how many
    # it changed is not known, and is said so, not "0"
    unseen = task_size([start(), *_fail(1, "boom", "boom")])
    assert unseen.values["files_changed"] is None and "files_changed" not in unseen.pointing
    assert unseen.lines()[0] == ("files changed: unknown (no call named the files it writes) "
                                 "(split from 4)")
    long = task_size([start(), *[e for n in range(THRESHOLDS["steps_since_progress"])
                                 for e in _fail(n, "same", "same")]])
    assert long.pointing == ["steps_since_progress"] and not long.suggests_split


async def _prompt(app: Any, pilot: Any) -> EscalationScreen:
    await load(pilot, initial=True)
    app.open_escalation("s1", "esc-1")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, EscalationScreen)
    await until(pilot, lambda: screen.task_size is not None)
    await pilot.pause()
    return screen


@pytest.mark.slow
async def test_split_is_offered_first_when_the_signals_point_to_it_and_sent(root: Path
                                                                            ) -> None:
    write_events(root, "s1", [*_sprawling(), escalation(options=OPTIONS)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _prompt(app, pilot)
        text = " ".join(screen_text(app).split())
        assert "split may help: files changed, distinct errors, files with failing tests" \
            in text, text
        options = str(screen.query_one("#esc-options", Static).content)
        assert options.index("split") < options.index("approve"), options
        await press(pilot, "p")
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen)
        await press(pilot, "ctrl+s")  # an empty plan is refused in the prompt
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen)
        app.screen.query_one(TextArea).text = "port a.py\n\n  port b.py  \nrun the tests\n"
        await press(pilot, "ctrl+s")
        await pilot.pause()
        await pilot.pause()
    (line,) = control_lines(root, "s1")
    assert line["action"] == "split" and line["escalation_id"] == "esc-1"
    assert line["tasks"] == ["port a.py", "port b.py", "run the tests"]


@pytest.mark.slow
async def test_a_small_task_shows_its_signals_and_keeps_split_last(root: Path) -> None:
    write_events(root, "s1", [start(), *_edit(1, "a.py"),
                              *_fail(1, "FAILED t.py::x", "boom"),
                              escalation(options=OPTIONS)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _prompt(app, pilot)
        text = " ".join(screen_text(app).split())
        assert "the signals do not point to a split" in text, text
        assert "files changed: 1 (split from 4)" in text
        options = str(screen.query_one("#esc-options", Static).content)
        assert options.index("approve") < options.index("split"), options
    assert control_lines(root, "s1") == []


@pytest.mark.slow
async def test_the_session_screen_shows_the_plan_rebuilt_from_the_events(root: Path,
                                                                         tmp_path: Path) -> None:
    """A real guard session split into three sub-tasks, the first done with a failure, the
    second skipped; a dashboard started afterwards (as after a restart) rebuilds the plan."""
    from supervisor.guard.core import Guard
    from supervisor.guard.settings import GuardSettings
    from supervisor.operator.send import send_decision
    from supervisor.tui.panels.plan import PlanPanel
    from supervisor.tui.screens.session import SessionScreen

    guard = Guard.open(root, "s1", cwd=tmp_path, settings=GuardSettings(checkpoints=False))
    guard.start("test-agent", task="port the app")
    send_decision(root, "s1", "split", operator="ana",
                  tasks=["port a.py", "port [b]red[/b].py", "run the tests"])
    v = guard.pre_call("bash", {"command": "ls"})  # the split applies here (refused)
    assert v.decision == "split"
    for n in range(2):
        v = guard.pre_call("bash", {"command": f"make {n}"})
        guard.post_call(v.call_id, "", ok=n == 1, error=None if n else "exit 2")
    guard.next_task()
    send_decision(root, "s1", "skip", operator="ana")
    guard.pre_call("bash", {"command": "ls"})
    guard.close()

    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        await pilot.press(PlanPanel.KEY)
        await pilot.pause()
        text = screen_text(app)
        assert "Plan (2/3)" in text
        rows = [" ".join(line.split()) for line in text.splitlines()]
        # the refused call that met the split belongs to no sub-task; two calls, one failure
        assert any("1 done port a.py 2 1" in r for r in rows), rows
        assert any("2 skipped port [b]red[/b].py 0 0" in r for r in rows), rows  # as written
        assert any("3 current run the tests 0 0" in r for r in rows), rows


@pytest.mark.slow
async def test_the_plan_panel_edits_and_drops_the_remaining_sub_tasks(root: Path,
                                                                      tmp_path: Path) -> None:
    from supervisor.guard.core import Guard
    from supervisor.guard.settings import GuardSettings
    from supervisor.operator.send import send_decision
    from supervisor.tui.panels.plan import PlanPanel
    from supervisor.tui.screens.modals import ConfirmScreen

    guard = Guard.open(root, "s1", cwd=tmp_path, settings=GuardSettings(checkpoints=False))
    guard.start("test-agent", task="port the app")
    guard.close()
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        await pilot.press(PlanPanel.KEY)
        await pilot.pause()
        await press(pilot, "E")  # no plan yet: refused, nothing written
        await pilot.pause()
        assert not isinstance(app.screen, PlanScreen)
        assert control_lines(root, "s1") == []
        with Guard.open(root, "s1", cwd=tmp_path) as guard:
            send_decision(root, "s1", "split", operator="ana", tasks=["a", "b", "c"])
            guard.pre_call("bash", {"command": "ls"})
        await load(pilot)
        await press(pilot, "E")
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen)
        area = app.screen.query_one(TextArea)
        assert area.text == "b\nc"  # the waiting sub-tasks, to edit
        area.text = "b, better\nc\nd"
        await press(pilot, "ctrl+s")
        await pilot.pause()
        await press(pilot, "D")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await press(pilot, "y")
        await pilot.pause()
        await pilot.pause()
    lines = control_lines(root, "s1")
    assert [(d["action"], d.get("tasks")) for d in lines] == [
        ("split", ["a", "b", "c"]), ("replan", ["b, better", "c", "d"]), ("drop_plan", None)]
