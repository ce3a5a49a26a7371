"""`supervisor run --cmd` with the demo agent on the guard SDK, in real tmux: the session named
before the agent starts, its screen, typing to it, dead detection, stop, bad input."""

import os
import shutil
import signal
from pathlib import Path

import pytest

from supervisor.store.liveness import pid_alive
from tests.host_helpers import DEMO, Runs, runs, wait_for

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]
__all__ = ["runs"]


def start_demo(runs: Runs, name: str, scenario: str = "loop", *extra: str) -> None:
    out = runs.ok("run", "--name", name, *extra, "--cmd",
                  f"{DEMO} --scenario {scenario} --pace 0.05")
    assert f"started {name}" in out


def test_the_sdk_agent_records_into_the_named_session_and_its_screen_is_shown(
        runs: Runs) -> None:
    start_demo(runs, "d1", "healthy")
    events = wait_for(lambda: [e for e in runs.events("d1") if e["type"] == "session_end"]
                      and runs.events("d1"), what="the demo to finish")
    start = events[0]
    assert start["type"] == "session_start" and start["agent"] == "demo-healthy"
    assert [e["status"] for e in events if e["type"] == "session_end"] == ["completed"]
    screen = runs.ok("screen", "d1")
    assert "[d1] task: fix add() in calc.py" in screen  # the pane outlives its agent
    assert "the agent exited with status 0" in screen
    assert runs.status("d1") == "completed"
    assert "\x1b" not in screen


def test_send_types_a_line_to_the_agent_and_records_it_as_the_operators(runs: Runs) -> None:
    start_demo(runs, "d2")
    wait_for(lambda: runs.status("d2") == "waiting", what="the loop's escalation")
    assert runs.ok("send", "d2", "use the right edit now", "--operator", "ana").strip() == (
        "typed into the terminal of d2 (then Enter): use the right edit now")
    wait_for(lambda: "use the right edit now" in runs.ok("screen", "d2"), what="the echo")
    said = [e for e in runs.events("d2") if e["type"] == "message" and e.get("via")]
    assert [(e["role"], e["text"], e["by"], e["via"], "seal" in e) for e in said] == [
        ("user", "use the right edit now", "ana", "send-keys", True)]  # a new cycle: sealed
    assert runs.refused("send", "d2", "two\nlines").endswith(
        "the text must be one line with no control characters")


def test_a_killed_agent_shows_dead_and_stop_ends_everything(runs: Runs) -> None:
    start_demo(runs, "d3")
    wait_for(lambda: runs.status("d3") == "waiting", what="the loop's escalation")
    pane = runs.record("d3")["pid"]
    agent = runs.events("d3")[0]["pid"]
    assert agent != pane and pane > 0
    assert runs.status("d3") == "waiting"
    os.kill(agent, signal.SIGKILL)
    wait_for(lambda: runs.status("d3") == "dead", what="dead")
    wait_for(lambda: runs.server.pane_dead("d3"), what="the pane's process to exit")
    assert "the agent exited with status 137" in runs.ok("screen", "d3")  # sh: 128 + 9
    assert runs.ok("stop", "d3").strip() == "cleaned up d3"
    assert not runs.server.has_session("d3")
    assert runs.host_files() == []
    assert runs.status("d3") == "terminated"


def test_stop_ends_a_running_agent(runs: Runs) -> None:
    start_demo(runs, "d4")
    wait_for(lambda: runs.events("d4"), what="the session")
    pane = runs.record("d4")["pid"]
    assert runs.ok("stop", "d4", "--operator", "ana").strip() == "stopped d4"
    assert not runs.server.has_session("d4")
    assert not pid_alive(pane)  # gone (or a zombie tmux has yet to reap)
    end = [e for e in runs.events("d4") if e["type"] == "session_end"]
    assert len(end) == 1 and end[0]["status"] == "terminated"
    assert runs.host_files() == []
    assert runs.refused("screen", "d4").endswith(
        "d4 is not a session started by `supervisor run` (or its run is over)")


def test_the_agent_runs_in_the_callers_directory_with_the_callers_environment(
        runs: Runs, tmp_path: Path) -> None:
    here = tmp_path / "here"
    here.mkdir()
    runs.ok("run", "--name", "e1", "--cmd", 'echo "cwd=$(pwd) x=$MY_VAR s=$SUPERVISOR_RUN_SESSION"',
            cwd=here, MY_VAR="from-the-shell")
    wait_for(lambda: runs.server.pane_dead("e1"), what="the command to finish")
    assert f"cwd={here} x=from-the-shell s=e1" in runs.ok("screen", "e1")


def test_bad_input_gets_one_line_and_leaves_nothing(runs: Runs, tmp_path: Path) -> None:
    from supervisor.hooks.targets import TARGETS

    known = ", ".join([*TARGETS, "claude"])  # every hook target, and the alias
    assert f"unknown agent 'nope' (known: {known}; or --cmd COMMAND)" in runs.refused(
        "run", "nope")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    assert runs.refused("run", "claude", PATH=str(empty)).endswith(
        "Claude Code is not installed: no 'claude' on PATH")
    assert runs.refused("run", "--cmd", "true", PATH=str(empty)).endswith(
        "tmux is not installed (not on PATH): install it to use supervisor run")
    assert runs.refused("run", "--name", "../x", "--cmd", "true").startswith(
        "supervisor: error: invalid session id")
    assert runs.host_files() == []
    start_demo(runs, "busy")
    assert runs.refused("run", "--name", "busy", "--cmd", "true").endswith(
        "a run named busy is already running (supervisor stop busy)")
    runs.ok("run", "--name", "plain", "--cmd", "true")
    # a session `supervisor run` did not start
    (runs.root / "sessions" / "other").mkdir(parents=True)
    for command in (("send", "other", "hi"), ("stop", "other"), ("screen", "other"),
                    ("attach", "other")):
        assert runs.refused(*command).endswith(
            "other is not a session started by `supervisor run` (or its run is over)")
    assert runs.host_files() == ["busy.d", "busy.json", "plain.json"]


def test_store_must_be_a_local_root(runs: Runs) -> None:
    import subprocess
    import sys

    from tests.conftest import cli_env

    def sup(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "supervisor", *args], capture_output=True,
                              text=True, cwd=runs.tmp, env=cli_env(), timeout=60)

    refused = sup("run", "--store", "redis://localhost:1", "--cmd", "true")
    assert refused.returncode == 2 and refused.stderr.strip() == (
        "supervisor: error: run agents live on this machine: --store must be a local root (a "
        "path or file:///DIR), not redis://; ship their sessions with supervisor relay")
    done = sup("run", "--store", f"file://{runs.root}", "--name", "f1", "--cmd", "echo via-file")
    assert done.returncode == 0, done.stderr
    wait_for(lambda: "via-file" in runs.ok("screen", "f1"), what="the run in that root")


def test_a_command_that_records_nothing_is_a_session_from_its_start(runs: Runs) -> None:
    """`--cmd` without the SDK (a shell): the run itself is the session, running, then ended
    with the command's exit status."""
    runs.ok("run", "--name", "r1", "--cmd", "bash --norc")
    wait_for(lambda: runs.status("r1") == "running", what="r1 running")
    start = runs.events("r1")[0]
    assert start["type"] == "session_start" and start["agent"] == "cmd"
    assert start["pid"] == runs.record("r1")["pid"]  # the pane: dead once it is gone
    runs.ok("send", "r1", "exit 3")
    wait_for(lambda: runs.status("r1") == "failed", what="r1 ended")
    (end,) = [e for e in runs.events("r1") if e["type"] == "session_end"]
    assert end["reason"] == "the command exited with status 3"
    runs.ok("run", "--name", "r2", "--cmd", "true")
    wait_for(lambda: runs.status("r2") == "completed", what="r2 completed")
    runs.ok("run", "--name", "r3", "--cmd", "sleep 600")
    wait_for(lambda: runs.status("r3") == "running", what="r3 running")
    assert runs.ok("stop", "r3").strip() == "stopped r3"
    (end,) = [e for e in runs.events("r3") if e["type"] == "session_end"]
    assert end["status"] == "terminated"
