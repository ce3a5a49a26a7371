"""Operators at the helm (issue 25): no answer from a stray key, a queue that means "needs you",
store errors said in one line, what a rollback throws away always current."""

import os
import re
import shutil
import sys
from pathlib import Path

import pytest
from tui_support import (
    burst,
    call,
    control_lines,
    escalated_session,
    escalation,
    load,
    make_app,
    press,
    screen_text,
    start,
    told,
    until,
    write_events,
)

from supervisor.store.liveness import THIS_HOST
from supervisor.tui.screens.escalation import EscalationScreen
from supervisor.tui.screens.modals import CheckpointPicker, ConfirmScreen
from tests.conftest import REPO
from tests.terminal import Terminal, env, terminals  # noqa: F401 - fixtures

SIZE = (120, 40)
pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- item 1: no irreversible answer from one key, nor from a burst -----------------------------

@pytest.mark.slow
async def test_approve_and_skip_wait_for_a_deliberate_confirmation(root: Path) -> None:
    escalated_session(root, "s1")
    escalated_session(root, "s2")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        for sid, key in (("s1", "a"), ("s2", "s")):
            app.open_escalation(sid, "esc-1")
            await pilot.pause()
            text = screen_text(app)
            # each answer says on screen which protection it has
            assert "approve (+y)" in text and "skip (+y)" in text and "abort (+y)" in text
            assert "rollback (+pick)" in text and "guidance (+ctrl+s)" in text
            assert "+y: asks, y confirms (cannot be taken back)" in text
            assert "keys that come faster than a person types are ignored" in text
            await press(pilot, key)
            assert isinstance(app.screen, ConfirmScreen)  # one key alone decides nothing
            assert control_lines(root, sid) == []
            assert "cannot be taken back" in screen_text(app)
            await press(pilot, "y")  # after a pause: a person's answer
            assert [line["action"] for line in control_lines(root, sid)] == [
                {"a": "approve", "s": "skip"}[key]]
            await pilot.press("escape")
            await pilot.pause()


@pytest.mark.slow
async def test_a_burst_of_keys_never_sends_a_decision(root: Path) -> None:
    """A shell command typed into the dashboard's pane, then a paste full of decision keys:
    screens open and close, but no decision is written."""
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await burst(pilot, "e")  # a first key after a pause opens the prompt (harmless)
        assert isinstance(app.screen, EscalationScreen)
        await burst(pilot, "ay sy xy r\r\ry gtext\r")
        assert control_lines(root, "s1") == []
        # its first key came after a pause: it may ask (approve?), but nothing more counted
        assert any("keys came faster than a person types" in said for said in told(app))
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen))  # a worker asks
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, EscalationScreen)
        # the same keys, pressed as a person does, do decide: the rule is what stopped them
        await press(pilot, "x", "y")
        assert [line["action"] for line in control_lines(root, "s1")] == ["abort"]


@pytest.mark.slow
async def test_operator_commands_are_ignored_in_a_burst(root: Path) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await burst(pilot, "lsPGBRX\r")
        assert control_lines(root, "s1") == []
        assert not isinstance(app.screen, (ConfirmScreen, CheckpointPicker))


@pytest.mark.slow
async def test_resuming_a_pause_acts_at_once_and_says_so(root: Path) -> None:
    write_events(root, "s1", [start(), {
        "type": "escalation", "escalation_id": "esc-1", "level": 3, "reason": "paused by ana",
        "evidence": [], "options": ["approve", "guidance", "skip", "abort"],
        "deadline_ts": None, "fallback": "skip", "kind": "pause"}])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("s1", "esc-1")
        await pilot.pause()
        assert "resume (at once)" in screen_text(app)
        await press(pilot, "a")
        assert [line["action"] for line in control_lines(root, "s1")] == ["approve"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_real_burst_in_tmux_sends_nothing(
        root: Path, tmp_path: Path, env, terminals) -> None:  # noqa: F811 - fixtures
    """The real dashboard in a real terminal (a private tmux server): a shell command and a
    paste land in its pane as one burst; nothing is decided. The same keys one at a time do."""
    write_events(root, "s1", [start(pid=os.getpid(), host=THIS_HOST),
                               escalation(deadline_ts=None)])
    term = Terminal("burst", [sys.executable, "-m", "supervisor", "dashboard", "--root",
                              str(root)], env, tmp_path)
    terminals.append(term)
    term.wait_for(lambda s: "Needs you: 1" in s, "the escalation in the queue")
    term.keys("e")
    term.wait_for(lambda s: "Escalation esc-1" in s, "the prompt")
    # typed into the wrong pane: `git status && rm -rf build` + enter, then a paste
    term.type("s")  # the burst's first key comes after a pause: it asks, nothing more
    term.type("tatus && rm -rf build\ryyyy\rxy\rary\r")
    screen = term.press_until("Escape", lambda s: "Needs you: 1" in s,
                              "back on the sessions screen", tries=6)
    assert not (root / "sessions" / "s1" / "control.jsonl").exists(), screen
    # a person: one key at a time, each once the screen shows what it answers
    term.press_until("e", lambda s: "Escalation esc-1" in s, "the prompt")
    term.press_until("s", lambda s: "y: yes" in s, "the question")
    term.press_until("y", lambda s: "waiting for the agent" in s, "the decision sent")
    assert [line["action"] for line in control_lines(root, "s1")] == ["skip"]
    term.keys("Escape")
    assert "EXITED 0" in term.quit()


# -- item 2: an operator's pause is not an escalation ------------------------------------------

def _paused_session(root: Path, sid: str = "p1") -> None:
    write_events(root, sid, [start(pid=os.getpid(), host=THIS_HOST), *call(2), {
        "type": "escalation", "escalation_id": "esc-1", "level": 3, "reason": "paused by ana",
        "evidence": [], "options": ["approve", "guidance", "skip", "abort"],
        "deadline_ts": None, "fallback": "skip", "kind": "pause"}])


@pytest.mark.slow
async def test_a_pause_is_paused_not_in_the_queue_no_level_no_alert(root: Path) -> None:
    write_events(root, "p1", [start(pid=os.getpid(), host=THIS_HOST), *call(2)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        bells: list[int] = []
        app.bell = lambda: bells.append(1)  # type: ignore[method-assign]
        _paused_session(root)  # the guard writes the pause as it does (level 3 in the event)
        await load(pilot)
        text = screen_text(app)
        assert "Needs you: 0" in text
        row = next(line for line in text.splitlines() if line.startswith(" p1 "))
        assert " paused " in row and "0 normal" in row and "escalate" not in row
        assert bells == [] and not app._arrivals
        assert not any("needs you" in n.message for n in app._notifications)
        # P on a paused session opens its prompt, where `a` resumes it
        await press(pilot, "P")
        assert isinstance(app.screen, EscalationScreen) and app.screen.is_pause
        assert control_lines(root, "p1") == []


@pytest.mark.slow
def test_the_cli_agrees_a_pause_is_paused(root: Path) -> None:
    import json

    from tests.conftest import run_cli

    _paused_session(root)
    out = run_cli("sessions", "--root", str(root), "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert (row["status"], row["level"], row["pending_escalations"], row["paused"]) == (
        "paused", 0, [], "esc-1")
    table = run_cli("sessions", "--root", str(root)).stdout.splitlines()[1].split()
    assert table[5:7] == ["paused", "0"] and table[9] == "-"


# -- item 3: store errors in one line, an unreadable folder shown, not fatal -------------------

def _as_nobody() -> list[str]:
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to run the CLI as another user (nobody)")
@pytest.mark.parametrize("what", ["root", "sessions"])
def test_another_users_root_is_one_line_and_status_2_everywhere(tmp_path: Path, what: str
                                                                 ) -> None:
    """A root (or its sessions folder) of another user, mode 700, read as `nobody`: each entry
    point says so in one line, exit status 2, without naming the marker file."""
    import subprocess
    import tempfile

    from tests.conftest import cli_env

    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="helm-"))
    try:
        base.chmod(0o755)
        store = base / "store"
        escalated_session(store)
        store.chmod(0o755)
        (store / "sessions").chmod(0o755)
        (store if what == "root" else store / "sessions").chmod(0o700)
        home = base / "home"
        home.mkdir()
        os.chown(home, 65534, 65534)
        env = cli_env(HOME=str(home), SUPERVISOR_CONFIG=str(home))
        for args in (["sessions"], ["dashboard"], ["tail", "s1"], ["answer", "s1", "--approve"],
                     ["pause", "s1"], ["checkpoints", "s1"], ["stats", "s1"]):
            out = subprocess.run([*_as_nobody(), sys.executable, "-m", "supervisor", *args,
                                  "--root", str(store)], capture_output=True, text=True,
                                 env=env, stdin=subprocess.DEVNULL, timeout=60, cwd=base)
            assert out.returncode == 2, (args, out.stdout, out.stderr)
            lines = out.stderr.strip().splitlines()
            assert len(lines) == 1 and "Permission denied" in lines[0], (args, out.stderr)
            assert "RECORDINGS" not in out.stderr and "Traceback" not in out.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
async def test_a_sessions_folder_that_becomes_unreadable_is_shown_not_fatal(root: Path
                                                                           ) -> None:
    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        sessions = root / "sessions"
        sessions.rename(root / "moved")
        sessions.write_text("not a folder any more\n")  # unreadable as a folder, even for root
        await load(pilot)
        text = screen_text(app)
        assert "cannot read the sessions folder (Not a directory)" in text
        assert " s1 " in text and "Needs you: 1" in text  # what was shown stays
        sessions.unlink()
        (root / "moved").rename(sessions)
        await load(pilot)
        assert "cannot read the sessions" not in screen_text(app)
        assert app.is_running


# -- item 4: what a rollback throws away is always current -------------------------------------

@pytest.mark.slow
async def test_what_a_rollback_throws_away_follows_the_work_tree(root: Path, tmp_path: Path
                                                                 ) -> None:
    from test_tui_checkpoints import guarded_session
    from tui_support import until

    from supervisor.tui.screens.session import SessionScreen
    from supervisor.tui.widgets.checkpoint_detail import CheckpointDetail

    work = tmp_path / "work"
    session = guarded_session(root, work)  # the agent keeps editing after cp-2
    try:
        app = make_app(root)
        async with app.run_test(size=(140, 45)) as pilot:
            await load(pilot, initial=True)
            app.open_session("s1")
            await pilot.pause()
            assert isinstance(app.screen, SessionScreen)
            await pilot.press("c", "down")
            detail = app.screen.query_one(CheckpointDetail)
            await until(pilot, lambda: detail.since is not None and detail.checkpoint
                        is not None and detail.checkpoint.checkpoint_id == "cp-2")
            assert "tree now): 1 file(s)" in screen_text(app)
            (work / "more.py").write_text("x = 1\n")  # the agent edits on: no event needed
            await until(pilot, lambda: "tree now): 2 file(s)" in screen_text(app))
            assert "+ more.py" in screen_text(app)
    finally:
        session.close()


# -- item 5: one truth for a dead agent's escalation -------------------------------------------

@pytest.mark.slow
def test_the_cli_lists_a_dead_agents_escalation_as_stale_like_the_dashboard(root: Path) -> None:
    import json
    import subprocess

    from supervisor.tui.model import DashboardModel
    from tests.conftest import run_cli

    gone = subprocess.Popen(["true"])
    gone.wait()
    write_events(root, "s1", [start(pid=gone.pid, host=THIS_HOST), escalation(deadline_ts=None)])
    out = run_cli("sessions", "--root", str(root), "--json")
    row = json.loads(out.stdout)
    assert (row["status"], row["pending_escalations"], row["stale_escalations"]) == (
        "dead", [], ["esc-1"])
    assert "1 stale" in run_cli("sessions", "--root", str(root)).stdout
    model = DashboardModel(root)  # the dashboard's own judgement, from the same files
    from supervisor.store.follower import Follower

    model.apply(Follower(root).scan())
    import time

    assert not model.queue(time.time()) and len(model.stale(time.time())) == 1


# -- items 8 and 9: the CLI says what happened in the operator's words, and whose -------------

@pytest.mark.slow
def test_guide_on_a_paused_agent_says_it_resumes_it_and_names_the_operator(
        root: Path, tmp_path: Path) -> None:
    from supervisor.guard import Guard, GuardSettings
    from tests.conftest import run_cli

    with Guard.open(root, "s1", cwd=tmp_path, settings=GuardSettings(checkpoints=False)
                    ) as guard:
        guard.start("hook-agent")
        paused = run_cli("pause", "s1", "--root", str(root), "--no-wait",
                         SUPERVISOR_OPERATOR="ana")
        assert paused.returncode == 0, paused.stderr
        assert control_lines(root, "s1")[-1]["operator"] == "ana"  # not the login name
        guard.pause("paused by ana")
        out = run_cli("guide", "s1", "use the cache", "--root", str(root), "--no-wait")
        assert out.returncode == 0, out.stderr
        assert "the agent is paused (esc-1): this guide answers it, so the agent also " \
               "resumes, with your guidance" in out.stdout


# -- item 12: a dead agent's prompt offers nothing and promises no fallback --------------------

@pytest.mark.slow
async def test_a_dead_agents_prompt_offers_no_answer_and_no_fallback(root: Path) -> None:
    import subprocess

    from tui_support import FROZEN_NOW

    gone = subprocess.Popen(["true"])
    gone.wait()
    write_events(root, "gone", [start(pid=gone.pid, host=THIS_HOST),
                                escalation(deadline_ts=FROZEN_NOW - 30)])
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        app.open_escalation("gone", "esc-1")
        await pilot.pause()
        prompt = app.screen
        assert isinstance(prompt, EscalationScreen)
        text = screen_text(app)
        assert "the fallback applies" not in text and "fallback when" not in text
        assert f"none applies: the agent is not running (its process {gone.pid} is gone)" \
            in text
        assert prompt._options_open is False  # the answers are dimmed, none is offered


# -- item 19: help and errors where they are asked for; one --wait default --------------------

@pytest.mark.slow
def test_hook_help_and_a_commands_own_usage_and_one_wait_default() -> None:
    from supervisor.cli import build_parser
    from supervisor.cli.followup import WAIT_S
    from tests.conftest import run_cli

    out = run_cli("hook", "--help")
    assert out.returncode == 0 and "usage: supervisor hook {claude-code" in out.stdout, out
    assert "unknown hook target" not in out.stdout + out.stderr
    out = run_cli("dashboard", "--foo")
    assert out.returncode == 2
    assert out.stderr.startswith("usage: supervisor dashboard"), out.stderr
    assert "supervisor dashboard: error: unrecognized arguments: --foo" in out.stderr
    parser = build_parser()
    waits = {name: parser.parse_args([name, "s1", *extra]).wait for name, extra in (
        ("answer", ["--approve"]), ("pause", []), ("resume", []), ("guide", ["t"]),
        ("abort", []), ("reset", []))}
    assert set(waits.values()) == {WAIT_S}, waits


# -- item 16: a missing --root fails; "created empty" only while it is ------------------------

@pytest.mark.slow
async def test_created_empty_leaves_the_header_once_sessions_appear(tmp_path: Path) -> None:
    store = tmp_path / "new"
    store.mkdir()
    app = make_app(store, root_created=True)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        assert "(created empty)" in screen_text(app)
        write_events(store, "s1", [start()])
        await load(pilot)
        assert " s1 " in screen_text(app) and "created empty" not in screen_text(app)


# -- item 11: bad lines are counted in the table; a corrupt seq does not steer the writer -----

@pytest.mark.parametrize("corrupt", [
    b'{"seq": 99999, "type": "tool_call"}\n',  # no v, no ts: a bad line
    b'{"v": 1, "seq": 99999, "ts": 1.0, "type": "note"}\n',  # well-formed, but jumps ahead
])
def test_a_corrupt_seq_does_not_steer_the_writer(root: Path, corrupt: bytes) -> None:
    from supervisor.store.writer import event_writer

    write_events(root, "s1", [start(), *call(2)])
    path = root / "sessions" / "s1" / "events.jsonl"
    with path.open("ab") as f:
        f.write(corrupt)
    writer = event_writer(root, "s1")
    try:
        assert writer.append({"type": "heartbeat"})["seq"] == 4
    finally:
        writer.close()


@pytest.mark.slow
async def test_the_sessions_table_counts_bad_lines_like_the_cli(root: Path) -> None:
    from tests.conftest import run_cli

    write_events(root, "s1", [start(), *call(1)])
    with (root / "sessions" / "s1" / "events.jsonl").open("ab") as f:
        f.write(b"not json\n{\"seq\": 5}\n")
    assert " 1 +2 bad " in run_cli("sessions", "--root", str(root)).stdout
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        row = next(line for line in screen_text(app).splitlines() if line.startswith(" s1 "))
        assert "1 +2 bad" in row


# -- item 7: recordings invite no answer -------------------------------------------------------

@pytest.mark.slow
async def test_recordings_invite_no_answer(tmp_path: Path) -> None:
    from test_operator_queue import recordings_copy

    samples = recordings_copy(tmp_path)
    app = make_app(samples)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        assert "Pending when recorded: 1  (read-only: e shows the oldest)" in text
        assert "Needs you" not in text and "answer the oldest" not in text
        assert not any("need you" in n.message for n in app._notifications)
        footer = text.splitlines()[-1]
        assert " Pause " not in footer and " Guidance " not in footer
        await press(pilot, "P")
        assert not isinstance(app.screen, EscalationScreen)
        await press(pilot, "e")
        assert isinstance(app.screen, EscalationScreen)
        text = screen_text(app)
        assert "Approve" not in text.splitlines()[-1] and "+y: asks" not in text


# -- item 10: one key, one meaning ---------------------------------------------------------------

@pytest.mark.slow
async def test_d_is_detections_even_in_the_checkpoints_tab(root: Path) -> None:
    from supervisor.tui.screens.diff import DiffScreen
    from supervisor.tui.screens.session import SessionScreen

    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=(140, 45)) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SessionScreen)
        await press(pilot, "c", "d")
        assert app.screen is screen and "Detections" in screen_text(app)
        assert "exact_repeat" in screen_text(app)  # the detection's tab, not a diff
        await press(pilot, "c", "v")
        assert isinstance(app.screen, DiffScreen)


# -- item 13: the help's keys never run into their descriptions ---------------------------------

@pytest.mark.slow
async def test_help_keys_stand_apart_from_their_descriptions(root: Path) -> None:
    from supervisor.tui.app import help_sections

    app = make_app(root)
    async with app.run_test(size=(160, 60)) as pilot:
        await load(pilot, initial=True)
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        assert "tab/shift+tab  " in text and "tab,shift+tab" not in text
        for _, keys in help_sections():
            for key, description in keys:
                assert f"{key}{description[:12]}" not in text, (key, description)


@pytest.mark.slow
async def test_help_descriptions_wrap_beside_their_keys_at_80x24(root: Path) -> None:
    """At 80 columns a description that does not fit wraps in its own column, beside its key:
    it wrapped back under the key column ("G" alone on its line, "Guidance" under it)."""
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await load(pilot, initial=True)
        await pilot.press("question_mark")
        await pilot.pause()
        text = screen_text(app)
        for key, first_word in (("q", "Quit"), ("ctrl+e", "Oldest"), ("ctrl+p", "command"),
                                ("P", "Pause"), ("G", "Guidance")):
            assert re.search(rf"\s{re.escape(key)}\s+{first_word}\b", text), (key, text)


# -- item 6: readable at 80 columns, reachable at 60 ---------------------------------------------

@pytest.mark.slow
async def test_queue_entries_are_told_apart_at_80_columns(root: Path) -> None:
    for sid, cmd, detector in (("s1", "make build", "exact_repeat"),
                               ("s2", "pytest -q", "exact_repeat"),
                               ("s3", "grep -r foo", "similar_calls")):
        events = [start()]
        for n in range(1, 4):
            events += call(n, cmd=cmd)
        events += [{"type": "detection", "detector": detector, "level": 3, "signature": "x",
                    "evidence": [2, 4, 6], "message": "m"},
                   escalation(evidence=[2, 4, 6],
                              reason="Paused: this exact call (repeated) already ran")]
        write_events(root, sid, events)
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        for summary in ("exact_repeat ×3 · bash “make build”", "exact_repeat ×3 · bash “pytest -q”",
                        "similar_calls ×3 · bash “grep -r foo”"):
            assert summary in text, text
        assert "Paused: this exact call (repeated)" in text  # the prose, under it
        header = next(line for line in text.splitlines() if line.startswith(" session "))
        assert "errors" in header and "status" in header


@pytest.mark.slow
async def test_the_side_bar_is_reachable_at_60_columns(root: Path) -> None:
    from supervisor.tui.screens.session import SessionScreen

    escalated_session(root)
    app = make_app(root)
    async with app.run_test(size=(60, 24)) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        await press(pilot, "d")  # a panel's key shows the side bar, on the whole width
        text = screen_text(app)
        assert "exact_repeat" in text and "Detections" in text
        await press(pilot, "w")  # and back to the history
        assert "tool_call" in screen_text(app)


# -- item 14: history rows in words, lone heartbeats folded too ---------------------------------

@pytest.mark.slow
async def test_history_reads_usage_and_start_in_words_and_folds_lone_heartbeats(root: Path
                                                                               ) -> None:
    from supervisor.tui.screens.session import SessionScreen

    events = [start(task=None)]
    for n in range(1, 4):
        events += [*call(n), {"type": "heartbeat"}]
    events += [{"type": "usage", "input_tokens": 1200, "output_tokens": 300, "cost_usd": 0.02}]
    write_events(root, "s1", events)
    app = make_app(root)
    async with app.run_test(size=(140, 30)) as pilot:
        await load(pilot, initial=True)
        app.open_session("s1")
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        text = screen_text(app)
        assert "agent demo-agent in /work" in text and "None" not in text
        assert "1200 in / 300 out tokens, $0.0200" in text and '"input_tokens"' not in text
        assert "heartbeat        " not in text  # each lone heartbeat between two steps: folded
        assert "3 heartbeats folded (h)" in text
        await press(pilot, "h")  # shown again on request
        assert "heartbeat        " in screen_text(app)


# -- item 17: analyze cuts nothing silently -----------------------------------------------------

@pytest.mark.slow
def test_analyze_keeps_detector_names_whole_and_messages_whole_in_a_pipe() -> None:
    from tests.conftest import REPO, run_cli

    out = run_cli("analyze", str(REPO / "sample_sessions"))  # captured: a pipe
    assert out.returncode == 0, out.stderr
    assert " recurring_error " in out.stdout and "recurring_erro " not in out.stdout
    rows = [line for line in out.stdout.splitlines() if " recurring_error " in line]
    assert any(len(line) > 200 and not line.endswith("…") for line in rows)
    loops = [line.split()[3:] for line in
             out.stdout.split("most common loops")[1].split("per run")[0].splitlines()[2:]
             if line.strip()]
    assert loops and all(words[0] in ("Loop:", "Blocked:", "Paused:") and
                         "(signature" in words for words in loops), loops  # words, not a hash


# -- item 15: every shipped theme reads at 4.5:1 -------------------------------------------------

def _all_statuses(root: Path) -> None:
    import subprocess

    from tui_support import FROZEN_NOW

    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = {"pid": os.getpid(), "host": THIS_HOST}
    write_events(root, "running", [start(**alive), *call(2)], t0=FROZEN_NOW - 20, step=1)
    write_events(root, "waiting", [start(**alive), *call(1), escalation()])
    write_events(root, "late", [start(**alive), escalation(deadline_ts=FROZEN_NOW - 5)])
    write_events(root, "calm", [start(**alive), escalation(deadline_ts=None)])
    write_events(root, "soon", [start(**alive), escalation(deadline_ts=FROZEN_NOW + 20)])
    write_events(root, "dead", [start(pid=gone.pid, host=THIS_HOST), escalation()])
    _paused_session(root, "paused")
    write_events(root, "idle", [start(**alive), *call(2)], t0=FROZEN_NOW - 4000)
    for status in ("completed", "aborted", "failed", "terminated"):
        write_events(root, status, [start(), *call(2), {"type": "session_end",
                                                        "status": status}])
    write_events(root, "limit", [start(), {"type": "limit", "name": "tool_calls", "value": 10,
                                           "limit": 10, "action": "stop"},
                                 {"type": "session_end", "status": "terminated"}])
    write_events(root, "broken", [*call(2)])
    (root / "sessions" / "empty").mkdir()
    transcript = root.parent / "unsupervised.jsonl"  # grew after the last hook event
    transcript.write_text("{}\n")
    os.utime(transcript, (FROZEN_NOW - 10, FROZEN_NOW - 10))
    write_events(root, "hooks-stopped", [start(**alive, transcript_path=str(transcript)),
                                         *call(2)], t0=FROZEN_NOW - 4000)


@pytest.mark.slow
@pytest.mark.parametrize("theme", sorted(p.stem for p in (REPO / "themes").glob("*.toml")))
async def test_every_shipped_theme_reads_at_4_5_to_1(root: Path, theme: str) -> None:
    """Every label the sessions screen draws (statuses, levels, deadlines, the queue, the stale
    group, the footer) as the terminal gets it: its colour on its background, at least 4.5:1."""
    from textual.color import Color

    from supervisor.tui.palette import contrast

    _all_statuses(root)
    app = make_app(root, theme=theme)
    async with app.run_test(size=(160, 50)) as pilot:
        await load(pilot, initial=True)
        assert app.theme == theme
        update = app.screen._compositor.render_update(
            full=True, screen_stack=list(app._background_screens))
        low: dict[str, float] = {}
        seen = set()
        for line in update.strips:
            for strip in line:
                for segment in strip:
                    text = "".join(c for c in segment.text if not c.isspace()
                                   and not "\u2500" <= c <= "\u259f")  # lines and blocks
                    style = segment.style
                    if not text or style is None or style.color is None or \
                            style.bgcolor is None:
                        continue
                    seen.add(text)
                    fg, bg = style.color.get_truecolor(), style.bgcolor.get_truecolor()
                    ratio = contrast(Color(*fg), Color(*bg))
                    if ratio < 4.5:
                        low[text] = round(ratio, 2)
        for label in ("completed", "aborted", "WAITING", "paused", "dead", "idle", "broken",
                      "unsupervised", "notrunning", "nodeadline", "abortin", "Answeroldest"):
            assert any(label in t for t in seen), (label, sorted(seen))
        assert not low, low


# -- item 18: install says what next and warns; doctor checks every installed hook -------------

@pytest.mark.slow
def test_doctor_checks_every_installed_hook_and_install_warns(tmp_path: Path) -> None:
    import json
    import sys as _sys

    from tests.conftest import run_cli

    home = tmp_path / "home"
    home.mkdir()
    homes = {"HOME": str(home), "CLAUDE_CONFIG_DIR": "", "CODEX_HOME": "", "GEMINI_CLI_HOME": ""}
    for target in ("claude-code", "codex", "gemini"):
        out = run_cli("install", target, "--user", **homes)
        assert out.returncode == 0, out.stderr
        assert "next: start" in out.stdout and "supervisor doctor" in out.stdout
        if _sys.prefix != _sys.base_prefix:  # these tests run in a virtual environment
            assert f"warning: every hook runs {_sys.prefix}" in out.stdout
    project = tmp_path / "project"
    project.mkdir()
    out = run_cli("doctor", "--project", str(project), **homes)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    for name, path, event in (("claude-code", ".claude/settings.json", "PreToolUse"),
                              ("codex", ".codex/hooks.json", "PreToolUse"),
                              ("gemini", ".gemini/settings.json", "BeforeTool")):
        # one line per agent: the events that work and what answered, not one per entry
        mine = [line for line in lines if line.startswith(f"{name}: ")]
        assert len(mine) == 1, out.stdout
        assert mine[0].startswith(f"{name}: {home / path}: ok, ") and event in mine[0]
        assert "hook(s) (" in mine[0] and "): supervisor " in mine[0]
    assert re.fullmatch(r"checked \d+ hook\(s\) in \d+\.\d s", lines[-1]), lines[-1]
    assert "BROKEN" not in out.stdout
    # the environment the hooks name is gone (a deleted venv)
    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for groups in data["hooks"].values():
        for group in groups:
            for hook in group["hooks"]:
                _program, rest = hook["command"].split(" ", 1)
                hook["command"] = f"/gone/venv/bin/supervisor-hook {rest}"
    settings.write_text(json.dumps(data))
    out = run_cli("doctor", "--project", str(project), **homes)
    assert out.returncode == 1
    assert "claude-code: " in out.stdout and "BROKEN: /gone/venv/bin/supervisor-hook does " \
        "not exist any more" in out.stdout
    assert "run `supervisor install TARGET` again" in out.stdout
    assert "codex: " in out.stdout and "gemini: " in out.stdout  # the others still checked
