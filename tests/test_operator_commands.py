"""Operator commands follow through (issue 15, items 5, 6 and 9; and item 10 on the CLI).

The dashboard's `P` `G` `B` `R` `X` report applied / ignored / ended-before-reading / not picked
up, and refuse what cannot apply (a reset while an escalation waits) before writing; the reset
confirmation says what a reset clears, in the engine's words. On the command line, `supervisor
pause|resume|guide|abort` drive a real demo agent, with the same follow-up as `answer`.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tui_support import (
    FROZEN_NOW,
    control_lines,
    escalation,
    load,
    make_app,
    opened,
    press,
    screen_text,
    start,
    write_events,
)

from supervisor.engine.decisions import reset_description
from supervisor.engine.policy import Policy
from supervisor.guard import GuardSettings
from supervisor.guard.core import Guard
from supervisor.operator.send import send_decision
from supervisor.store.liveness import THIS_HOST
from supervisor.store.open import open_store
from supervisor.tui.followup import RESPONSE_WAIT_S
from supervisor.tui.screens.modals import ConfirmScreen
from tests.conftest import cli_env, run_cli
from tests.guard_helpers import events, of_type, wait_for
from tests.redis_helpers import relay_process
from tests.redis_helpers import wait_for as poll

SIZE = (120, 40)


def live(root: Path, sid: str = "s1", *extra: dict) -> None:
    write_events(root, sid, [start(pid=os.getpid(), host=THIS_HOST), *extra],
                 t0=FROZEN_NOW - 10)


def messages(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- the dashboard (Pilot) ---------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_command_is_followed_until_applied_or_ignored(root: Path) -> None:
    live(root)
    now = [FROZEN_NOW]
    app = make_app(root)
    app.clock = lambda: now[0]
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "P")
        await pilot.pause()
        (pause,) = control_lines(root, "s1")
        assert any("pause sent to s1: the agent holds at its next tool call, until you resume "
                   "it (a) or decide: no deadline" in m for m in messages(app))
        now[0] += RESPONSE_WAIT_S + 1
        app.refresh_screens()
        await pilot.pause()
        assert any("s1: not picked up yet: pause not applied after 11 s; the agent applies it "
                   "at its next tool call (its last event was 19 s ago)" in m
                   for m in messages(app))
        write_events(root, "s1", [{"type": "decision_applied", "escalation_id": None,
                                   "decision_id": pause["decision_id"], "action": "pause",
                                   "outcome": "agent paused at its next tool call"}])
        await load(pilot)
        assert "s1: applied: agent paused at its next tool call" in messages(app)
        assert app.commands == {}
        # an ignored one says why
        await press(pilot, "G", *"slow down", "ctrl+s")
        await pilot.pause()
        guidance = control_lines(root, "s1")[-1]
        write_events(root, "s1", [{"type": "decision_ignored",
                                   "decision_id": guidance["decision_id"],
                                   "reason": "late: the session has ended (completed)"}])
        await load(pilot)
        assert "s1: ignored: late: the session has ended (completed)" in messages(app)


@pytest.mark.slow
@pytest.mark.anyio
async def test_a_session_that_ends_before_reading_the_command_is_said_so(root: Path) -> None:
    live(root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await load(pilot, initial=True)
        await press(pilot, "X", "y")
        await pilot.pause()
        assert [line["action"] for line in control_lines(root, "s1")] == ["abort"]
        write_events(root, "s1", [{"type": "session_end", "status": "completed"}])
        await load(pilot)
        assert ("s1: the session ended (completed) before the agent read your abort"
                in messages(app))


@pytest.mark.slow
@pytest.mark.anyio
async def test_reset_and_pause_are_refused_while_an_escalation_waits(root: Path) -> None:
    live(root, "s1", escalation("esc-1"))
    async with opened(root, "R", SIZE) as (app, pilot):
        assert not isinstance(app.screen, ConfirmScreen)
        assert any("reset: esc-1 is pending: answer it first" in m for m in messages(app))
        await press(pilot, "P")
        await pilot.pause()
        assert any("pause: esc-1 already waits for an answer" in m for m in messages(app))
    assert control_lines(root, "s1") == []


@pytest.mark.slow
@pytest.mark.anyio
async def test_the_reset_confirmation_says_what_is_cleared_and_kept(root: Path) -> None:
    policy = {"limits": {"iterations_per_session": {"limit": 12, "action": "stop"},
                         "resets_per_conversation": {"limit": 2, "action": "stop"}}}
    write_events(root, "s1", [start(pid=os.getpid(), host=THIS_HOST, policy=policy)],
                 t0=FROZEN_NOW - 10)
    async with opened(root, "R", (140, 40)) as (app, pilot):
        assert isinstance(app.screen, ConfirmScreen)
        expected = reset_description(Policy.from_dict(policy))
        assert "Still counted: iterations_per_session" in expected
        assert expected in app.screen.question.plain
        shown = " ".join(screen_text(app).split())
        assert "Reset clears the loop detectors' memory" in shown
        assert "At most 2 reset(s) per conversation" in shown
        await press(pilot, "y")
        await pilot.pause()
    assert [line["action"] for line in control_lines(root, "s1")] == ["reset"]


# -- the guard keeps session-wide limits through a reset (item 9) ------------------------------


def test_a_reset_keeps_the_session_wide_hard_limit(root: Path, tmp_path: Path) -> None:
    policy = {"limits": {"iterations_per_session": {"limit": 12, "action": "stop"}}}
    with Guard.open(root, "s1", cwd=tmp_path, policy=policy,
                    settings=GuardSettings(checkpoints=False)) as guard:
        guard.start("agent", "t")
        actions = []
        for n in range(30):
            if n == 8:
                send_decision(root, "s1", "reset", operator="ana")
            verdict = guard.pre_call("write", {"path": f"f{n}.txt"})
            actions.append(verdict.action)
            if verdict.action == "stop":
                break
            guard.post_call(verdict.call_id or "", "ok")
    evs = events(root, "s1")
    assert [d["action"] for d in of_type(evs, "decision_applied")] == ["reset"]
    assert actions.count("stop") == 1 and len(of_type(evs, "tool_call")) <= 13
    assert of_type(evs, "session_end")[0]["status"] == "terminated"


@pytest.mark.slow
def test_reset_from_the_cli_says_what_it_clears_and_keeps(root: Path, tmp_path: Path) -> None:
    policy = {"limits": {"iterations_per_session": {"limit": 12, "action": "stop"},
                         "resets_per_conversation": {"limit": 2, "action": "stop"}}}
    with Guard.open(root, "s1", cwd=tmp_path, policy=policy,
                    settings=GuardSettings(checkpoints=False)) as guard:
        guard.start("agent", "t")
        out = run_cli("reset", "s1", "--root", str(root), "--no-wait")
    assert out.returncode == 0, out.stderr
    said = reset_description(Policy.from_dict(policy))
    assert "Still counted: iterations_per_session" in said and "At most 2 reset(s)" in said
    assert out.stdout.splitlines()[0] == said
    assert out.stdout.splitlines()[1].startswith("decision d-")


def test_reset_from_the_cli_is_refused_while_an_escalation_waits(root: Path,
                                                                tmp_path: Path) -> None:
    with Guard.open(root, "s1", cwd=tmp_path,
                    settings=GuardSettings(checkpoints=False)) as guard:
        guard.start("hook-agent")
        guard.pause("paused by ana")
    out = run_cli("reset", "s1", "--root", str(root))
    assert out.returncode == 2
    assert out.stderr == ("supervisor: error: session 's1': esc-1 is pending: answer it first "
                          "(a reset cannot apply while the agent waits); nothing was written\n")
    assert not (root / "sessions" / "s1" / "control.jsonl").exists()


@pytest.mark.slow
def test_sessions_on_a_mistyped_root_says_it_does_not_exist(tmp_path: Path) -> None:
    typo = tmp_path / "typo"
    out = run_cli("sessions", "--root", str(typo))  # a typo in a script fails (issue 25)
    assert out.returncode == 2 and out.stdout == "", out
    assert out.stderr.startswith("supervisor: error: root ") and "typo does not exist" in \
        out.stderr and len(out.stderr.splitlines()) == 1, out
    assert not typo.exists()
    typo.mkdir()
    out = run_cli("sessions", "--root", str(typo))
    assert "does not exist" not in out.stdout and "no sessions in root" in out.stdout


@pytest.mark.slow
def test_a_root_that_is_a_file_or_missing_is_said_so_not_a_missing_session(tmp_path: Path
                                                                           ) -> None:
    """`--root events.jsonl` (a file) was told as "cannot read the sessions folder (Not a
    directory): .../events.jsonl/sessions" by `sessions`, and as "no session 's1' under
    .../events.jsonl/sessions" by `tail`, `stats`, `answer`: as if the session were missing."""
    a_file = tmp_path / "events.jsonl"
    a_file.write_text("{}\n")
    said = f"the root {a_file} is a file, not a store root (a folder)"
    out = run_cli("sessions", "--root", str(a_file))
    assert (out.returncode, out.stderr) == (2, f"supervisor: error: {said}\n"), out
    for command in (("tail", "s1"), ("stats", "s1"), ("answer", "s1", "--approve")):
        out = run_cli(*command, "--root", str(a_file))
        assert (out.returncode, out.stderr) == (2, f"supervisor: error: no session 's1': "
                                                   f"{said}\n"), (command, out)
    out = run_cli("tail", "s1", "--root", str(tmp_path / "typo"))
    assert out.returncode == 2 and out.stderr.startswith(
        f"supervisor: error: no session 's1': the root {tmp_path / 'typo'} does not exist"), out
    out = run_cli("tail", "s1", "--root", str(tmp_path))
    assert out.stderr == f"supervisor: error: no session 's1' under {tmp_path}/sessions\n"


# -- supervisor pause | resume | guide | abort on a real agent (item 6) --------------------------

PACE = "2.0"
"""Seconds between the demo agent's calls: its `limit` scenario stops at its 12th call, and the
commands below must find it running; a loaded machine takes seconds to start each of them."""


@pytest.mark.slow
def test_cli_commands_drive_a_running_demo_agent(root: Path, tmp_path: Path) -> None:
    agent = subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         "demo", "--scenario", "limit", "--workdir", str(tmp_path / "w"), "--pace", PACE,
         "--deadline", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )
    try:
        wait_for(root, "demo", lambda e: of_type(e, "tool_call"), timeout=60)
        out = run_cli("resume", "demo", "--root", str(root))
        assert out.returncode == 2 and "nothing to resume: the session is not paused" \
            in out.stderr
        out = run_cli("pause", "demo", "--root", str(root))
        assert out.returncode == 0, out.stderr
        assert "applied: agent paused at its next tool call" in out.stdout
        time.sleep(1.5)  # three times the loop deadline: a pause holds
        summary = run_cli("sessions", "--root", str(root))
        assert "paused" in summary.stdout
        again = run_cli("pause", "demo", "--root", str(root))
        assert again.returncode == 2 and "already paused (esc-1)" in again.stderr
        out = run_cli("resume", "demo", "--root", str(root))
        assert out.returncode == 0, out
        assert "applied: approved: continue (esc-1 answered)" in out.stdout, out
        out = run_cli("guide", "demo", "write the notes faster", "--root", str(root))
        assert out.returncode == 0 and "applied: guidance delivered" in out.stdout, out
        written = run_cli("abort", "demo", "--root", str(root), "--no-wait")
        assert written.returncode == 0
        assert written.stdout.startswith("decision d-") and "applied" not in written.stdout
        assert agent.wait(timeout=60) == 2
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    evs = events(root, "demo")
    assert not [d for d in of_type(evs, "decision_applied") if d["decision_id"] == "fallback"]
    assert [d["action"] for d in of_type(evs, "decision_applied")] == [
        "pause", "approve", "guidance", "abort"]
    assert of_type(evs, "session_end")[0]["status"] == "aborted"
    late = run_cli("guide", "demo", "too late", "--root", str(root))
    assert late.returncode == 2 and "session ended: aborted" in late.stderr


@pytest.mark.slow
def test_cli_says_when_the_session_ends_before_the_agent_reads_it(root: Path,
                                                                  tmp_path: Path) -> None:
    with Guard.open(root, "s1", cwd=tmp_path,
                    settings=GuardSettings(checkpoints=False)) as guard:
        guard.start("hook-agent")
    waiting = subprocess.Popen(
        [sys.executable, "-m", "supervisor", "pause", "s1", "--root", str(root), "--wait", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env(),
    )
    try:
        control = root / "sessions" / "s1" / "control.jsonl"
        end = time.monotonic() + 30
        while not control.exists() and time.monotonic() < end:
            time.sleep(0.05)
        with Guard.open(root, "s1") as guard:
            guard.end("completed")
        out, err = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 1, err
    assert "the session ended (completed) before the agent read it" in out


@pytest.mark.slow
def test_cli_commands_drive_an_agent_on_another_host_through_a_redis_store(
        tmp_path: Path, redis_server) -> None:
    """`--store URL` (the helper `answer` uses): the decision goes through a real redis-server,
    the relay carries it to the agent's host, the agent applies it, and its outcome comes back."""
    root, url = tmp_path / "h1", redis_server.url()
    agent = subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         "demo", "--scenario", "limit", "--workdir", str(tmp_path / "w"), "--pace", PACE,
         "--deadline", "0.5"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=cli_env())
    relay = relay_process(root, url, "h1", log=tmp_path / "relay.log")
    store = open_store(url)
    try:
        poll(lambda: store.exists("h1/demo") and store.summary("h1/demo").started_ts, 90,
             "the session on the store")
        out = run_cli("pause", "h1/demo", "--store", url, "--wait", "60")
        assert out.returncode == 0, out.stderr
        assert "applied: agent paused at its next tool call" in out.stdout
        poll(lambda: store.summary("h1/demo").pending, 30, "the pause on the store")
        again = run_cli("pause", "h1/demo", "--store", url)
        assert again.returncode == 2 and "already paused (esc-1)" in again.stderr
        out = run_cli("resume", "h1/demo", "--store", url, "--wait", "60")
        assert out.returncode == 0, out
        assert "applied: approved: continue (esc-1 answered)" in out.stdout, out
        out = run_cli("abort", "h1/demo", "--store", url, "--wait", "60")
        assert out.returncode == 0 and "applied:" in out.stdout, out
        assert agent.wait(timeout=60) == 2
    finally:
        store.close()
        for proc in (agent, relay):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    evs = events(root, "demo")
    assert [d["action"] for d in of_type(evs, "decision_applied")] == ["pause", "approve",
                                                                        "abort"]
