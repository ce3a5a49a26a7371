"""Pilot tests of reading a session: the event in full, quiet history, filter and search, the
side bar, the panels as listed components, numbers for people and how a session ended."""

import json
from pathlib import Path

import pytest
from tui_support import (
    call,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    start,
    until,
    write_events,
)

from supervisor.tui.app import help_sections
from supervisor.tui.panels import PANELS
from supervisor.tui.screens.event import EventScreen
from supervisor.tui.screens.session import SessionScreen
from supervisor.tui.widgets.history_view import HistoryView
from supervisor.tui.widgets.text_pager import TextPager

SIZE = (120, 40)
pytestmark = pytest.mark.anyio

LONG_OUTPUT = "\n".join(f"FAILED tests/test_mod.py::test_case_{n} - AssertionError: {n} != 0"
                        for n in range(60)) + "\nfinal line: 60 failed"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def failing_session(root: Path, sid: str = "s1", heartbeats: int = 0) -> None:
    """A call whose result fails with a long output, its verdict and a detection naming it."""
    events = [start(), *call(1), *call(2)]  # seqs 2-5
    events += [
        {"type": "tool_call", "call_id": "c9", "tool": "bash",
         "args": {"cmd": "pytest -x", "env": {"CI": "1"}}},                         # seq 6
        {"type": "verdict", "call_id": "c9", "action": "nudge", "level": 1,
         "reason": "same error 3 times", "message": "Read the failing test first."},  # 7
        {"type": "tool_result", "call_id": "c9", "ok": False, "output": LONG_OUTPUT,
         "output_bytes": len(LONG_OUTPUT) + 5000, "output_hash": "sha256:abc",
         "error": "exit 1", "duration_ms": 812.0},                                  # 8
        {"type": "detection", "detector": "same_error", "level": 1, "signature": "err:x",
         "evidence": [3, 6], "message": "pytest fails the same way"},               # 9
    ]
    events += [{"type": "heartbeat"} for _ in range(heartbeats)]
    events += [{"type": "verdict", "call_id": "c10", "action": "allow", "level": 0,
                "reason": None, "message": None}]
    write_events(root, sid, events)


async def _open(app, pilot, sid: str = "s1") -> SessionScreen:
    await load(pilot, initial=True)
    app.open_session(sid)
    await pilot.pause()
    assert isinstance(app.screen, SessionScreen)
    return app.screen


async def _settle(pilot) -> None:
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()


@pytest.mark.slow
async def test_enter_opens_a_failing_call_in_full(root: Path) -> None:
    failing_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        history = screen.query_one(HistoryView)
        assert history.jump_to_seq(8)  # the failing result
        await press(pilot, "enter")
        await _settle(pilot)
        assert isinstance(app.screen, EventScreen)
        pager = app.screen.query_one(TextPager)
        text = pager.plain_text()
        # the call with its arguments as pretty JSON, paired with this result
        assert "Tool call  #6" in text and '"cmd": "pytest -x"' in text and '"CI": "1"' in text
        # the whole output, not the history's 240-character summary
        assert "test_case_0 " in text and "final line: 60 failed" in text
        assert "ERROR exit 1" in text and "812 ms" in text
        assert "the log keeps the first" in text  # says honestly that the guard cut it
        assert "Verdict  #7" in text and "Read the failing test first." in text
        assert "same_error (level 1)" in text  # the detection whose evidence names the call
        await press(pilot, "slash", *"test_case_5", "enter")
        await pilot.pause()
        assert "match 1/11" in screen_text(app)
        await press(pilot, "n")
        await pilot.pause()
        assert "match 2/11" in screen_text(app)
        await press(pilot, "slash", "ctrl+u", *"no such text", "enter")
        await pilot.pause()
        assert "no match" in screen_text(app)
        await press(pilot, "escape")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)


@pytest.mark.slow
async def test_detail_view_steps_through_the_history(root: Path) -> None:
    failing_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        screen.query_one(HistoryView).jump_to_seq(2)
        await press(pilot, "enter")
        await _settle(pilot)
        assert "Tool call  #2" in app.screen.query_one(TextPager).plain_text()
        await press(pilot, "right")
        await _settle(pilot)
        event_screen = app.screen
        assert isinstance(event_screen, EventScreen) and event_screen.index == 2
        assert "Result  #3" in event_screen.query_one(TextPager).plain_text()
        await press(pilot, "left", "left")
        await _settle(pilot)
        text = event_screen.query_one(TextPager).plain_text()
        assert event_screen.index == 0 and '"agent": "demo-agent"' in text


@pytest.mark.slow
async def test_heartbeats_fold_into_one_row_and_unfold(root: Path) -> None:
    failing_session(root, heartbeats=42)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        history = screen.query_one(HistoryView)
        total = len(app.model.sessions["s1"].history)
        assert history.row_count == total - 41
        text = screen_text(app)
        assert "… 42 heartbeats, 1.4 min" in text
        assert "42 heartbeats folded (h)" in text
        await press(pilot, "h")
        await _settle(pilot)
        assert history.row_count == total
        assert "every heartbeat shown (h)" in screen_text(app)
        await press(pilot, "h")
        await _settle(pilot)
        assert history.row_count == total - 41
        # enter on the folded row shows each heartbeat instead of opening one
        history.jump_to_seq(10)
        await press(pilot, "enter")
        await _settle(pilot)
        assert isinstance(app.screen, SessionScreen) and history.row_count == total
        # a heartbeat arriving live joins the run
        await press(pilot, "h")
        await _settle(pilot)
        write_events(root, "s1", [{"type": "heartbeat"}, {"type": "heartbeat"}])
        await load(pilot)
        assert history.row_count == total - 41 + 1  # one new run of two


@pytest.mark.slow
async def test_filter_excludes_and_says_what_it_hides(root: Path) -> None:
    failing_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        history = screen.query_one(HistoryView)
        total = history.row_count
        await press(pilot, "f", *"-verdict allow", "enter")
        await _settle(pilot)
        assert history.row_count == total - 1
        assert 'filter "-verdict allow" hides 1' in screen_text(app)
        shown = [history.store.type_of(history.store_index(r)) for r in range(history.row_count)]
        assert shown.count("verdict") == 1  # the nudge stays
        await press(pilot, "f", "ctrl+u", *"bash, -result", "enter")
        await _settle(pilot)
        kinds = {history.store.type_of(history.store_index(r)) for r in range(history.row_count)}
        assert kinds == {"tool_call"}
        # new rows go through the filter too
        write_events(root, "s1", [*call(5, cmd="bash again")])
        await load(pilot)
        assert history.row_count == 4
        await press(pilot, "f", "ctrl+u", "enter")  # empty: every row again
        await _settle(pilot)
        assert "hidden" not in screen_text(app) and history.row_count == total + 2


@pytest.mark.slow
async def test_search_counts_matches(root: Path) -> None:
    failing_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot)
        await press(pilot, "slash", *"make", "enter")
        await pilot.pause()
        assert '"make": match 1/2' in screen_text(app)
        await press(pilot, "n")
        await pilot.pause()
        assert '"make": match 2/2' in screen_text(app)
        await press(pilot, "n")
        await pilot.pause()
        assert '"make": match 1/2' in screen_text(app)  # wraps around
        await press(pilot, "slash", *"zebra", "enter")
        await pilot.pause()
        assert '"zebra": no match' in screen_text(app)


@pytest.mark.slow
async def test_rows_cut_at_the_edge_end_with_an_ellipsis_and_w_widens(root: Path) -> None:
    long_cmd = "echo " + "x" * 150 + " END-OF-COMMAND"
    write_events(root, "s1", [start(), *call(1, cmd=long_cmd)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        row = next(line for line in screen_text(app).splitlines() if "echo xxx" in line)
        assert "…" in row and "END-OF-COMMAND" not in row
        history = screen.query_one(HistoryView)
        narrow = history.size.width
        await press(pilot, "w")
        await pilot.pause()
        assert history.size.width > narrow and history.size.width >= SIZE[0] - 2
        assert "Overview" not in screen_text(app)
        await press(pilot, "c")  # a panel's key brings the side bar back
        await pilot.pause()
        assert "Checkpoints" in screen_text(app) and history.size.width == narrow


@pytest.mark.slow
async def test_each_panel_is_listed_once_with_its_key_palette_and_help(root: Path) -> None:
    failing_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(app, pilot)
        titles = {c.title for c in app.get_system_commands(screen)}
        helped = dict(next(keys for title, keys in help_sections() if title == "Session"))
        for panel in PANELS:
            assert f"Show {panel.TITLE.lower()}" in titles
            assert helped[panel.KEY] == panel.TITLE
            await press(pilot, panel.KEY)
            await pilot.pause()
            assert screen.query_one("#side").active == f"tab-{panel.ID}"
            shown = screen.query_one(f"#panel-{panel.ID}")
            # Textual hands the focus over on a later turn of its loop, which a loaded machine
            # can leave until after Pilot's pause.
            await until(pilot, lambda shown=shown: app.focused is shown.focus_target())


@pytest.mark.slow
async def test_gauges_show_numbers_for_people_and_the_policy_as_toml(root: Path) -> None:
    policy = {"limits": {"duration_s": {"limit": 28800, "action": "pause"},
                         "tokens": {"limit": 50_000_000, "action": "pause"},
                         "cost_usd": {"limit": 100.0, "action": "pause"},
                         "iterations_per_session": {"limit": 200, "action": "stop"}},
              "window": 1000}
    write_events(root, "s1", [
        start(policy=policy), *call(1),
        {"type": "usage", "input_tokens": 1000, "output_tokens": 300, "cost_usd": 0.002},
    ], step=4.0)
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        await _open(app, pilot)
        text = screen_text(app)
        assert "12 s / 8 h" in text
        assert "1.3k / 50M tokens" in text
        assert "$0.002 / $100" in text
        assert "1 / 200" in text
        assert "[limits.duration_s]" in text and "limit = 28800" in text
        assert "window = 1000" in text


@pytest.mark.slow
async def test_how_each_session_ended_in_the_table_and_the_header(root: Path) -> None:
    write_events(root, "done", [start(), {"type": "session_end", "status": "completed"}])
    write_events(root, "stopped", [
        start(), {"type": "limit", "name": "iterations_per_session", "value": 10, "limit": 10,
                  "action": "stop"},
        {"type": "session_end", "status": "terminated", "reason": "hard limit: 10 calls"}])
    write_events(root, "killed", [start(), {"type": "session_end", "status": "aborted",
                                            "reason": "operator abort"}])
    folder = root / "sessions" / "nostart"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_text('{"v":1,"seq":1,"ts":1.0,"type":"heartbeat"}\n')
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        rows = {line.split()[0]: line for line in screen_text(app).splitlines()
                if line.split() and line.split()[0] in ("done", "stopped", "killed", "nostart")}
        assert "completed" in rows["done"] and "limit" in rows["stopped"]
        assert "aborted" in rows["killed"] and "broken" in rows["nostart"]
        assert "running" not in rows["nostart"]
        app.open_session("stopped")
        await pilot.pause()
        head = screen_text(app).splitlines()[0]
        assert "limit: hard limit: 10 calls" in head


def test_detail_pairs_the_nearest_call_when_ids_repeat(root: Path) -> None:
    from supervisor.store.follower import Follower
    from supervisor.tui.event_detail import load_detail
    from supervisor.tui.model import DashboardModel

    write_events(root, "s1", [start(), *call(1), *call(1), *call(1)])  # c1 three times
    model = DashboardModel(root)
    model.apply(Follower(root).scan())
    store = model.sessions["s1"].history
    detail = load_detail(store, store.index_of_seq(5), [], [])  # the second result
    assert detail.call is not None and detail.call.event["seq"] == 4
    assert detail.result is not None and detail.result.event["seq"] == 5
    detail = load_detail(store, store.index_of_seq(6), [], [])  # the third call
    assert detail.result is not None and detail.result.event["seq"] == 7
    path = root / "sessions" / "s1" / "events.jsonl"
    path.write_text("")  # the file changed under the view: said, not raised
    detail = load_detail(store, 1, [], [])
    assert detail.event is None and "changed" in (detail.error or "")


def test_policy_text_is_the_policy_show_layout() -> None:
    from supervisor.engine import Policy
    from supervisor.engine.policy_file import dump_toml, toml_text

    policy = Policy.profile("default")
    assert toml_text(policy.to_dict()) == dump_toml(policy)
    assert json.loads(json.dumps(policy.to_dict()))  # what the guard records is JSON


# -- evidence an operator can use: each evidence call with its result, by #seq ------------------

def evidence_session(root: Path, sid: str = "s1") -> None:
    """Two failing runs of the same test (seqs 2-3 and 5-6, verdicts at 4 and 7), a message,
    a detection naming both calls (8) and an escalation naming the calls (9)."""
    fail = "collected 3 items\n\nE   AssertionError: 1 != 2\nFAILED tests/test_dates.py::test_parse"
    events = [start()]
    for n in (1, 2):
        events += [
            {"type": "tool_call", "call_id": f"c{n}", "tool": "bash",
             "args": {"cmd": "pytest -q tests/test_dates.py"}},
            {"type": "tool_result", "call_id": f"c{n}", "ok": False, "output": fail,
             "output_bytes": len(fail), "output_hash": "h", "error": "exit 1"},
            {"type": "verdict", "call_id": f"c{n}", "action": "allow", "level": 0,
             "reason": None, "message": None},
        ]
    events += [
        {"type": "detection", "detector": "recurring_error", "level": 2, "signature": "e:x",
         "evidence": [2, 6], "message": "the same test failed the same way at #2 and #5"},
        {"type": "escalation", "escalation_id": "esc-1", "level": 3, "evidence": [2, 5],
         "reason": "recurring_error: the same failure 3 times", "options": ["approve", "abort"],
         "deadline_ts": None, "fallback": "abort"},
    ]
    write_events(root, sid, events)


def test_evidence_steps_pair_each_call_with_its_result(root: Path) -> None:
    from supervisor.store.follower import Follower
    from supervisor.tui.event_detail import evidence_steps
    from supervisor.tui.model import DashboardModel

    evidence_session(root)
    model = DashboardModel(root)
    model.apply(Follower(root).scan())
    history = model.sessions["s1"].history
    first, second, missing = evidence_steps(history, [2, 6, 99])
    assert first.call is not None and first.call[0] == 2 and first.result is not None
    assert first.result[0] == 3 and first.ok is False and first.error == "exit 1"
    assert first.excerpt == "E   AssertionError: 1 != 2\nFAILED tests/test_dates.py::test_parse"
    assert second.type == "tool_result" and second.call is not None and second.call[0] == 5
    assert second.result is not None and second.result[0] == 6
    assert missing.type == "?" and missing.call is None


def test_evidence_shows_the_error_line_not_only_the_last_lines() -> None:
    """A failure whose error is far above the end of its output (a crash, then the shutdown's
    log): the line naming the error is shown, then the last line."""
    from supervisor.tui.event_detail import excerpt

    out = ("Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n"
           "    main()\nKeyError: 'user_id'\n"
           + "\n".join(f"INFO stopping worker {n}" for n in range(20)) + "\nINFO done")
    lines = out.splitlines()
    assert excerpt(False, "exit 1", out, lines) == ["KeyError: 'user_id'", "INFO done"]
    assert excerpt(True, None, out, lines) == ["INFO stopping worker 19", "INFO done"]
    bare = "step 1\nstep 2\nstep 3"  # a failure naming no error: its last lines
    assert excerpt(False, "exit 2", bare, bare.splitlines()) == ["step 2", "step 3"]


@pytest.mark.slow
async def test_escalation_shows_each_evidence_call_with_its_result(root: Path) -> None:
    """The modal's evidence: call and result by #seq with the failing output's last lines;
    its recent steps: calls, results and messages, not the engine's verdict/detection rows."""
    evidence_session(root)
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("s1", "esc-1")
        await _settle(pilot)
        text = screen_text(app)
        assert "Evidence (2 steps, each call with its result)" in text
        assert "#2      call    bash" in text and "#5      call    bash" in text
        assert ("#3      result  failed (exit 1): E   AssertionError: 1 != 2 ⏎ FAILED tests/"
                in text)
        assert "#6      result  failed (exit 1)" in text
        recent = text[text.index("Recent steps"):]
        assert "tool_result" in recent and "tool_call" in recent
        assert "verdict" not in recent and "detection" not in recent


@pytest.mark.slow
async def test_detection_panel_and_detail_view_show_evidence_results(root: Path) -> None:
    evidence_session(root)
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _open(app, pilot)
        await press(pilot, "d")
        await _settle(pilot)
        text = screen_text(app)
        assert "#3      result  failed (exit 1)" in text  # the panel: result of the call #2
        assert "#5      call" in text and "#6      result" in text  # #6 named: its call too
        history = screen.query_one(HistoryView)
        history.focus()
        history.jump_to_seq(8)
        await press(pilot, "enter")
        await _settle(pilot)
        assert isinstance(app.screen, EventScreen)
        detail = app.screen.query_one(TextPager).plain_text()
        assert "Evidence (2 steps)" in detail
        assert "#2      call    bash" in detail and "#3      result  failed (exit 1)" in detail


@pytest.mark.slow
async def test_a_long_output_line_is_wrapped_whole_beside_the_scrollbar(root: Path) -> None:
    """Wrapped at the width the scrollbar leaves: no character hides under it."""
    digits = "".join(f"{n:04d}" for n in range(500))  # 2000 characters, no space to break at
    events = [start(), {"type": "tool_call", "call_id": "c1", "tool": "bash",
                        "args": {"cmd": "seq"}},
              {"type": "tool_result", "call_id": "c1", "ok": False, "output": digits,
               "output_bytes": len(digits), "output_hash": "h", "error": "exit 1"}]
    write_events(root, "s1", events)
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _open(app, pilot)
        screen.query_one(HistoryView).jump_to_seq(3)
        await press(pilot, "enter")
        await _settle(pilot)
        pager = app.screen.query_one(TextPager)
        assert pager.virtual_size.height > pager.size.height  # it scrolls: a scrollbar shows
        rows = "".join(pager.render_line(y).text.strip() for y in range(pager.size.height))
        assert digits[:600] in rows


@pytest.mark.slow
async def test_one_evidence_step_is_one_step(root: Path) -> None:
    """The prompt counts its evidence as a person would: "1 step", not "1 steps"."""
    write_events(root, "s1", [start(), *call(1), escalation(evidence=[2])])
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("s1", "esc-1")
        await _settle(pilot)
        assert "Evidence (1 step, each call with its result)" in screen_text(app)
