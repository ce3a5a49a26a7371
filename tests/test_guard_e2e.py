"""End to end with real processes: the demo agent in a subprocess, decisions written with
`supervisor answer`, and each decision's effect asserted on the files it leaves."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from supervisor.store.reading import read_file
from tests.conftest import cli_env, run_cli
from tests.guard_helpers import escalated, events, of_type, start_demo, wait_for

pytestmark = pytest.mark.slow


def finish(proc: subprocess.Popen, timeout: float = 30) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


HANG_S = 300.0
"""Only a hang guard for what happens at the machine's pace: past it a test fails (nothing
goes on early because of it)."""


@contextlib.contextmanager
def _at_first_escalation(tmp_path: Path, deadline: float):
    root, work = tmp_path / "store", tmp_path / "work"
    proc = start_demo(root, "s1", "loop", work, deadline=deadline)
    try:  # it gets there at its own pace (slowly under load), unless it ends first
        evs = wait_for(root, "s1", lambda e: escalated(1)(e) or proc.poll() is not None,
                       timeout=HANG_S)
        assert escalated(1)(evs), finish(proc)
        yield root, work, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def loop_agent(tmp_path: Path):
    """A demo agent playing the seeds' loop, stopped at its first escalation (60 s deadline)."""
    with _at_first_escalation(tmp_path, deadline=60.0) as agent:
        yield agent


@pytest.fixture
def undecided_loop_agent(tmp_path: Path):
    """The same, but its escalation has no deadline: only an operator's answer decides it (a
    test that counts operators' answers cannot let the wall clock apply the fallback)."""
    with _at_first_escalation(tmp_path, deadline=0) as agent:
        yield agent


def answer(root: Path, *args: str):
    return run_cli("answer", "s1", "--root", str(root), "--wait", "10", *args)


def applied(evs, esc="esc-1"):
    return [e for e in of_type(evs, "decision_applied") if e["escalation_id"] == esc]


def test_escalation_event_checkpoint_and_heartbeats(loop_agent) -> None:
    root, _, proc = loop_agent
    evs = events(root, "s1")
    esc = of_type(evs, "escalation")[0]
    assert esc["kind"] == "detection" and esc["level"] == 3
    assert esc["fallback"] == "skip" and esc["deadline_ts"] > esc["ts"]
    assert set(esc["options"]) == {"approve", "guidance", "rollback", "skip", "abort", "split"}
    assert esc["evidence"] and esc["reason"]
    checkpoints = of_type(evs, "checkpoint")
    assert checkpoints[0]["label"] == "session start"
    assert checkpoints[-1]["label"].startswith("before escalation")
    assert checkpoints[-1]["seq"] < esc["seq"]
    # While it waits, it writes heartbeats.
    wait_for(root, "s1", lambda e: len([x for x in e if x["seq"] > esc["seq"]
                                        and x["type"] == "heartbeat"]) >= 2, timeout=10)
    out = run_cli("answer", "s1", "--root", str(root), "--abort", "--wait", "10")
    assert out.returncode == 0, out.stderr
    assert finish(proc)[0] == 2


def test_guidance_changes_the_agents_approach(loop_agent) -> None:
    root, work, proc = loop_agent
    out = answer(root, "--guidance", "Read calc.py and edit the line that is there now",
                 "--operator", "ana")
    assert out.returncode == 0, out.stderr
    assert "applied: guidance delivered" in out.stdout
    code, log = finish(proc)
    assert code == 0, log
    evs = events(root, "s1")
    (dec,) = applied(evs)
    assert (dec["action"], dec["operator"]) == ("guidance", "ana")
    verdict = next(e for e in evs if e["type"] == "verdict" and e.get("escalation_id") == "esc-1")
    assert verdict["message"] == (
        "Operator guidance: Read calc.py and edit the line that is there now")
    assert "return a + b" in (work / "calc.py").read_text()
    assert [e["status"] for e in of_type(evs, "task_end")] == ["done", "done"]
    assert of_type(evs, "session_end")[0]["status"] == "completed"


def test_rollback_restores_and_the_agent_continues_from_there(loop_agent) -> None:
    root, work, proc = loop_agent
    assert "return a * b" in (work / "calc.py").read_text()  # the wrong edit
    listed = run_cli("checkpoints", "s1", "--root", str(root))
    assert listed.returncode == 0 and "cp-1" in listed.stdout and "session start" in listed.stdout
    out = answer(root, "--rollback", "cp-1")
    assert out.returncode == 0, out.stderr
    assert "applied: restored 1 file(s)" in out.stdout and "calc.py" in out.stdout
    code, log = finish(proc)
    assert code == 0, log
    evs = events(root, "s1")
    (rb,) = of_type(evs, "rollback")
    assert rb["checkpoint_id"] == "cp-1" and rb["files"] == ["calc.py"]
    assert rb["safety_checkpoint_id"] in {c["checkpoint_id"] for c in of_type(evs, "checkpoint")}
    verdict = next(e for e in evs if e["type"] == "verdict" and e.get("escalation_id") == "esc-1")
    assert "Files changed: calc.py" in verdict["message"]
    # It continued from the restored file: the original line was there to edit.
    assert "return a + b" in (work / "calc.py").read_text()
    assert of_type(evs, "task_end")[0]["status"] == "done"


def test_skip_moves_to_the_next_task(loop_agent) -> None:
    root, work, proc = loop_agent
    assert answer(root, "--skip").returncode == 0
    code, log = finish(proc)
    assert code == 0, log
    evs = events(root, "s1")
    assert [(e["task_id"], e["status"]) for e in of_type(evs, "task_end")] == [
        ("t1", "skipped"), ("t2", "done")]
    assert (work / "README.md").exists()  # the next task ran


def test_abort_ends_the_session(loop_agent) -> None:
    root, _, proc = loop_agent
    out = answer(root, "--abort")
    assert "applied: session aborted" in out.stdout
    code, _ = finish(proc)
    assert code == 2
    evs = events(root, "s1")
    end = of_type(evs, "session_end")
    assert len(end) == 1 and end[0]["status"] == "aborted"
    assert of_type(evs, "tool_call")[-1]["seq"] < applied(evs)[0]["seq"]


def test_approve_allows_bounded_repeats_then_escalates_again(loop_agent) -> None:
    root, _, proc = loop_agent
    out = answer(root, "--approve")
    assert "applied: approved" in out.stdout
    evs = wait_for(root, "s1", escalated(2))
    first = applied(evs)[0]
    after = [e for e in evs if e["seq"] > first["seq"] and e["type"] == "verdict"]
    assert after[0]["action"] == "allow"  # the paused call may run now
    assert answer(root, "--abort", "--escalation", "esc-2").returncode == 0
    assert finish(proc)[0] == 2


def test_deadline_applies_the_fallback(tmp_path: Path) -> None:
    root = tmp_path / "store"
    proc = start_demo(root, "s1", "loop", tmp_path / "work", deadline=0.5)
    code, log = finish(proc)
    assert code == 0, log
    evs = events(root, "s1")
    (dec,) = applied(evs)
    assert dec["decision_id"] == "fallback" and dec["action"] == "skip"
    assert dec["outcome"].startswith("deadline passed: ")
    assert of_type(evs, "task_end")[0]["status"] == "skipped"
    # A late answer is refused by the CLI: nothing is pending any more.
    out = run_cli("answer", "s1", "--root", str(root), "--approve")
    assert out.returncode == 2 and "has ended" in out.stderr


def _operators_written(control: Path) -> list[str]:
    """The operators of the complete lines of the control file, in the file's order."""
    try:
        data = control.read_bytes()
    except FileNotFoundError:
        return []
    return [json.loads(raw)["operator"] for raw in data.split(b"\n")[:-1] if raw.strip()]


def test_two_operators_at_once_exactly_one_applied(undecided_loop_agent) -> None:
    root, _, proc = undecided_loop_agent
    control = root / "sessions" / "s1" / "control.jsonl"
    answers = {"ana": ["--guidance", "do it right"], "bo": ["--skip"]}
    # Hold the agent still until each operator's command has written its answer or refused
    # (as when two operators press a key in the same instant), then let it go. Not for a fixed
    # time: on a loaded machine the two commands take longer than that to start, and the agent
    # let go early reads the first answer before the second command has even looked, and the
    # escalation is no longer pending for it: one after the other, not at once.
    proc.send_signal(signal.SIGSTOP)
    try:
        procs = {
            name: subprocess.Popen(
                [sys.executable, "-m", "supervisor", "answer", "s1", "--root", str(root),
                 "--operator", name, "--wait", "60", *extra],  # (returns once it is applied)
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
            for name, extra in answers.items()
        }
        end = time.monotonic() + HANG_S
        while not all(p.poll() is not None or name in _operators_written(control)
                      for name, p in procs.items()):
            assert time.monotonic() < end, "the answer commands neither wrote nor refused"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGCONT)
    outs = {name: p.communicate(timeout=30) for name, p in procs.items()}
    finish(proc)
    evs = events(root, "s1")
    (dec,) = applied(evs)  # one answer applied: an operator's (there is no deadline)
    winner = dec["operator"]
    (loser,) = set(answers) - {winner}
    assert procs[winner].returncode == 0, outs[winner]
    assert "applied:" in outs[winner][0] and "applied:" not in outs[loser][0]
    written = _operators_written(control)
    ignored = of_type(evs, "decision_ignored")
    if written == [winner, loser]:  # both checked before either wrote: the file's order decides
        assert [i["reason"].split(" (")[0] for i in ignored] == [
            "late: esc-1 was already decided"]
        assert procs[loser].returncode == 1
        assert (f"too late: {winner} answered it first ({dec['action']}); the agent will "
                "ignore yours") in outs[loser][0]
    else:  # the second saw the first's answer on its way and refused before writing
        assert written == [winner] and ignored == []
        assert procs[loser].returncode == 2
        assert (f"already answered by {winner}: {dec['action']} (the agent has not applied it "
                "yet); nothing was written") in outs[loser][1]


def test_agent_killed_while_paused(loop_agent) -> None:
    root, work, proc = loop_agent
    esc = of_type(events(root, "s1"), "escalation")[0]
    wait_for(root, "s1", lambda e: any(x["type"] == "heartbeat" and x["seq"] > esc["seq"]
                                       for x in e), timeout=10)
    refused = run_cli("rollback", "s1", "cp-1", "--root", str(root))
    assert refused.returncode == 1 and "looks alive" in refused.stderr
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    count = len(events(root, "s1"))
    time.sleep(1.0)  # three heartbeat intervals
    assert len(events(root, "s1")) == count  # heartbeats stopped
    batch = read_file(root / "sessions" / "s1" / "events.jsonl")
    assert not batch.bad_lines and len(batch.events) == count
    state = json.loads((root / "sessions" / "s1" / "state.json").read_text())
    assert state["pending"]["escalation_id"] == "esc-1"
    assert not [p for p in os.listdir(root / "sessions" / "s1") if p.endswith(".tmp")]
    # Now it is dead: a manual rollback is allowed.
    out = run_cli("rollback", "s1", "cp-1", "--root", str(root))
    assert out.returncode == 0, out.stderr
    assert "calc.py" in out.stdout
    assert "return a - b" in (work / "calc.py").read_text()
    assert of_type(events(root, "s1"), "rollback")[-1]["checkpoint_id"] == "cp-1"


@pytest.mark.parametrize("scenario", ["healthy", "poll", "limit", "oscillate"])
def test_demo_scenarios(tmp_path: Path, scenario: str) -> None:
    root = tmp_path / "store"
    proc = start_demo(root, "s1", scenario, tmp_path / "work", deadline=0.5)
    code, log = finish(proc)
    evs = events(root, "s1")
    verdicts = [v["action"] for v in of_type(evs, "verdict")]
    end = of_type(evs, "session_end")[0]
    if scenario == "healthy":
        assert (code, end["status"]) == (0, "completed"), log
        assert set(verdicts) == {"allow"} and not of_type(evs, "escalation")
        assert [t["status"] for t in of_type(evs, "task_end")] == ["done"] * 3
    elif scenario == "poll":  # legitimate polling: the output changes, nothing is refused
        assert (code, end["status"]) == (0, "completed"), log
        assert sum(c["tool"] == "BashOutput" for c in of_type(evs, "tool_call")) == 6
        assert not {"block", "pause", "stop"} & set(verdicts)
    elif scenario == "limit":
        assert (code, end["status"]) == (2, "terminated"), log
        (hit,) = of_type(evs, "limit")
        assert (hit["name"], hit["action"]) == ("iterations_per_session", "stop")
        assert verdicts[-1] == "stop"
    else:  # oscillate: refused, escalated, and the deadline skipped the task
        assert (code, end["status"]) == (0, "completed"), log
        assert "block" in verdicts and of_type(evs, "escalation")
        assert applied(evs)[0]["decision_id"] == "fallback"
        assert [t["status"] for t in of_type(evs, "task_end")] == ["skipped", "done"]
