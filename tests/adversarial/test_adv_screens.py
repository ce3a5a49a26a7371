"""No hostile byte reaches the operator's terminal (issue 18, item 1): a session full of hostile
text and file names (real files in a real git work tree, so git's own output carries them),
rendered in every view of the dashboard, checked on the exact characters written to the
terminal (Pilot) and on a real terminal (tmux `capture-pane -e`); and the same through every
command of the CLI."""

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from tui_support import PERSON_READS_S, REPO, load, make_app, press

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.store.writer import LineWriter
from tests.adversarial.hostile import HOSTILE, HOSTILE_NAMES, unsafe_in
from tests.conftest import run_cli

SESSION = "hostile"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def hostile_root(root: Path, work: Path) -> None:
    """A session whose every field an agent controls is hostile, with real checkpoints of a
    work tree full of hostile file names."""
    work.mkdir()
    for name in HOSTILE_NAMES:
        (work / name).write_text(HOSTILE)
    settings = GuardSettings(checkpoint_every=0, escalation_deadline_s=3600)
    with Guard.open(root, SESSION, cwd=work, settings=settings) as guard:
        guard.start(HOSTILE, HOSTILE, extra={"host": HOSTILE})
        guard.task_start(HOSTILE)
        call = guard.pre_call(HOSTILE, {HOSTILE: HOSTILE, "path": HOSTILE_NAMES[0]})
        guard.post_call(call.call_id or "", HOSTILE, ok=False, error=HOSTILE)
        guard.message("assistant", HOSTILE)
        for name in HOSTILE_NAMES:
            (work / name).write_text("changed")
        (work / ("new" + HOSTILE_NAMES[1])).write_text("x")
        guard.checkpoint(HOSTILE)
        (work / HOSTILE_NAMES[2]).unlink()
        guard.pause(HOSTILE)
    events = root / "sessions" / SESSION / "events.jsonl"
    with LineWriter(events) as writer:
        writer.append_many([
            {"type": "detection", "detector": HOSTILE, "level": 2, "signature": HOSTILE,
             "evidence": [3], "message": HOSTILE},
            {"type": "limit", "name": HOSTILE, "value": 3, "limit": 5, "action": HOSTILE},
            {"type": "decision_ignored", "decision_id": HOSTILE, "reason": HOSTILE},
            {"type": "checkpoint", "checkpoint_id": "cp-99", "label": HOSTILE, "commit": HOSTILE,
             "at_seq": 1, "files": 1, "changed_files": HOSTILE_NAMES, "nested": [HOSTILE]},
            {"type": HOSTILE[:40].replace("\x00", ""), HOSTILE: HOSTILE},
            {"type": "session_start", "agent": HOSTILE, "cwd": str(work),
             "policy": {"limits": {HOSTILE: {"limit": 5, "action": HOSTILE}}, HOSTILE: HOSTILE}},
        ])
    with events.open("ab") as f:
        f.write(HOSTILE.encode() + b"\n")  # a bad line: its preview is shown
    control = root / "sessions" / SESSION / "control.jsonl"
    with control.open("ab") as f:
        f.write(json.dumps({"v": 1, "seq": 1, "ts": 1.0, "type": "decision",
                            "decision_id": HOSTILE, "action": "guidance", "text": HOSTILE,
                            "operator": HOSTILE}).encode() + b"\n")


@pytest.fixture
def hostile(root: Path, tmp_path: Path) -> Path:
    hostile_root(root, tmp_path / "work")
    return root


# -- the dashboard under Pilot: the exact characters written to the terminal ------------------

def _terminal_output(app) -> str:
    """What the app would write to the terminal for its whole screen now."""
    console = Console(color_system="truecolor", file=open(os.devnull, "w"),  # noqa: SIM115
                      width=app.size.width)
    update = app.screen._compositor.render_update(full=True)
    return update.render_segments(console)


@pytest.mark.slow
@pytest.mark.anyio
async def test_every_view_of_the_dashboard_is_terminal_safe(hostile: Path) -> None:
    from supervisor.tui.screens.escalation import EscalationScreen
    from supervisor.tui.screens.event import EventScreen
    from supervisor.tui.screens.modals import CheckpointPicker
    from supervisor.tui.screens.session import SessionScreen
    from supervisor.tui.widgets.history_view import HistoryView

    app = make_app(hostile)
    seen: dict[str, list[str]] = {}

    async def check(view: str) -> None:
        for _ in range(4):  # let workers (git diffs of checkpoints) post their results
            await pilot.pause(0.05)
        output = _terminal_output(app)
        seen[view] = unsafe_in(output)
        assert "evil" in output or "RTL" in output, f"{view}: nothing hostile was drawn"

    async with app.run_test(size=(160, 50)) as pilot:
        await load(pilot, initial=True)
        await check("sessions")
        app.open_session(SESSION)
        await pilot.pause()
        assert isinstance(app.screen, SessionScreen)
        await check("session")
        for key in ("o", "d", "c", "p"):  # each side panel
            await pilot.press(key)
            await check(f"panel {key}")
        app.screen.query_one(HistoryView).focus()
        for seq in (5, 6):
            app.screen.query_one(HistoryView).jump_to_seq(seq)
            await pilot.press("enter")
            await check(f"event #{seq}")
            assert isinstance(app.screen, EventScreen)
            await pilot.press("escape")
            await pilot.pause()
        await pilot.press("e")
        await check("escalation")
        assert isinstance(app.screen, EscalationScreen)
        await press(pilot, "r")  # a deliberate key: after a pause, as a person presses it
        for _ in range(50):
            await pilot.pause()
            if isinstance(app.screen, CheckpointPicker):
                break
        assert isinstance(app.screen, CheckpointPicker)
        await check("checkpoint picker")
        for _ in range(len(app.screen.checkpoints)):
            await pilot.press("down")
            await check("checkpoint picker, next")
        await pilot.press("escape", "escape", "escape")
        await pilot.press("question_mark")
        await check("help")
        await pilot.press("escape")
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"evil")
        await check("palette")
    leaks = {view: found for view, found in seen.items() if found}
    assert not leaks, leaks


# -- the dashboard in a real terminal ---------------------------------------------------------

@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[str]:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    server = f"sv-adv-{os.getpid()}-{time.monotonic_ns()}"
    yield server
    subprocess.run(["tmux", "-L", server, "kill-server"], capture_output=True)


@pytest.mark.slow
def test_the_dashboard_in_a_real_terminal_shows_no_hostile_byte(hostile: Path, tmp_path: Path,
                                                               tmux: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), TERM="xterm-256color",
               SUPERVISOR_CONFIG=str(tmp_path / "config"))
    for size in ("COLUMNS", "LINES"):  # set by pytest-xdist's workers: the tmux window decides
        env.pop(size, None)
    command = (f"cd {tmp_path} && env PYTHONPATH={REPO} TERM=xterm-256color "
               f"SUPERVISOR_CONFIG={tmp_path / 'config'} {sys.executable} -m supervisor "
               f"dashboard --root {hostile}; sleep 30")
    subprocess.run(["tmux", "-L", tmux, "new-session", "-d", "-s", "t", "-x", "160", "-y", "50",
                    command], check=True, env=env)

    def capture() -> str:
        return subprocess.run(["tmux", "-L", tmux, "capture-pane", "-p", "-e", "-t", "t"],
                              capture_output=True, text=True, check=True, env=env).stdout

    def keys(*names: str) -> None:
        for name in names:
            subprocess.run(["tmux", "-L", tmux, "send-keys", "-t", "t", name], check=True,
                           env=env)
            time.sleep(0.4)

    def wait_for(text: str, timeout: float = 30) -> str:
        end = time.monotonic() + timeout
        while True:
            screen = capture()
            if text in screen:
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"no {text!r} on screen:\n{screen}")
            time.sleep(0.3)

    screens = {"sessions": wait_for(SESSION)}
    keys("Enter")
    screens["session"] = wait_for("Overview")
    for key in ("d", "c", "p", "o"):
        keys(key)
        screens[f"panel {key}"] = capture()
    keys("e")
    screens["escalation"] = wait_for("esc-1  session")  # "Escalation" or "Paused" (kind pause)
    time.sleep(PERSON_READS_S)  # `r` decides: a person reads the screen before pressing it
    keys("r")
    screens["picker"] = wait_for("Roll back")
    keys("Escape", "Escape", "Escape", "question")
    screens["help"] = capture()
    leaks = {view: unsafe_in(screen) for view, screen in screens.items()}
    assert not {view: found for view, found in leaks.items() if found}, leaks
    assert any("evil" in screen for screen in screens.values())


# -- the command line --------------------------------------------------------------------------

CLI_COMMANDS = [
    ["sessions"], ["sessions", "--json"], ["tail", SESSION], ["tail", SESSION, "-n", "5"],
    ["checkpoints", SESSION], ["checkpoints", SESSION, "--json"],
    ["checkpoints", SESSION, "--diff", "cp-1"], ["checkpoints", SESSION, "--diff", "cp-2"],
    ["stats", SESSION], ["stats", SESSION, "--json"],
    ["answer", SESSION, "--guidance", "go on", "--wait", "0"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", CLI_COMMANDS, ids=lambda c: " ".join(c))
def test_every_command_is_terminal_safe(hostile: Path, command: list[str]) -> None:
    done = run_cli(*command, "--root", str(hostile))
    assert "Traceback" not in done.stderr, done.stderr
    leaks = unsafe_in(done.stdout) + unsafe_in(done.stderr)
    assert not leaks, (leaks, done.stdout[-2000:], done.stderr[-2000:])


@pytest.mark.slow
def test_analyze_and_validate_are_terminal_safe(hostile: Path, tmp_path: Path) -> None:
    events = hostile / "sessions" / SESSION / "events.jsonl"
    runs = tmp_path / "runs"
    runs.mkdir()
    named = runs / (HOSTILE_NAMES[1] + HOSTILE_NAMES[3].removesuffix(".md") + ".jsonl")
    shutil.copy(events, named)  # the run's name and source are its file's: hostile
    for command in (["analyze", str(events)], ["analyze", str(runs)],
                    ["analyze", str(runs), "--json"], ["validate", str(named)],
                    ["validate", str(events.parent / "control.jsonl")]):
        done = run_cli(*command)
        assert "Traceback" not in done.stderr, done.stderr
        assert not unsafe_in(done.stdout) + unsafe_in(done.stderr), (command, done.stdout[-1500:])
    done = run_cli("analyze", str(runs), "--json")
    report = json.loads(done.stdout.splitlines()[0])
    assert "yp.exe" in report["session"] and not unsafe_in(report["session"] + report["source"])
