"""Task plans (issue 31, docs/plans.md): an operator's `split` answers an escalation (or a
running session) with sub-tasks the agent takes one by one. Real guard, real files, real
control channel; the SDK driven by a scripted agent loop; replays by `analyze` and `stats`;
bad plans refused in one line by the command line with nothing written."""

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from supervisor.analysis.replay import analyze_events
from supervisor.engine import Engine, Policy
from supervisor.guard import Session
from supervisor.guard.core import Guard
from supervisor.guard.inspect import replay_engine, session_usage
from supervisor.guard.settings import GuardSettings
from supervisor.guard.state import STATE_FILE
from supervisor.operator.send import DecisionError, send_decision
from supervisor.protocol.decisions import decision_problem
from supervisor.protocol.names import PLAN_MAX_TASKS, PLAN_TASK_MAX_CHARS
from supervisor.store.local import LocalStore
from tests.conftest import run_cli
from tests.guard_helpers import events, of_type
from tests.hook_helpers import events as hook_events
from tests.hook_helpers import payload, run_hook

STEPS = ["read foo.py", "fix the sign in add()", "run the check once"]


class Clock:
    def __init__(self) -> None:
        self.t = 1_000.0

    def __call__(self) -> float:
        return self.t

    def tick(self, s: float = 1.0) -> None:
        self.t += s


def _open(root: Path, work: Path, clock: Clock, policy: Any = None) -> Guard:
    return Guard.open(root, "s1", cwd=work, clock=clock, policy=policy,
                      settings=GuardSettings(escalation_deadline_s=60.0, checkpoints=False))


def _call(guard: Guard, clock: Clock, command: str, ok: bool = False) -> str:
    clock.tick()
    v = guard.pre_call("bash", {"command": command})
    if v.proceed:
        clock.tick()
        guard.post_call(v.call_id, "ok" if ok else "1 failed", ok=ok,
                        error=None if ok else "exit 1")
    return v.action


def _until_paused(guard: Guard, clock: Clock, command: str = "pytest -q") -> None:
    for _ in range(12):
        if _call(guard, clock, command) == "pause":
            return
    raise AssertionError("the loop never escalated")


def _split(root: Path, guard: Guard, clock: Clock, tasks: list[str]) -> Any:
    send_decision(root, "s1", "split", escalation_id=guard.pending["escalation_id"],
                  operator="ana", tasks=tasks)
    clock.tick()
    (verdict,) = guard.poll()
    return verdict


def test_a_split_answer_gives_step_one_with_why_then_each_next_step(root: Path,
                                                                    tmp_path: Path) -> None:
    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="make the tests pass")
    _until_paused(guard, clock)
    assert "split" in guard.pending["options"]
    verdict = _split(root, guard, clock, STEPS)
    # step 1 is the answer to the held call, with the evidence of the loop
    assert verdict.action == "block" and verdict.decision == "split"
    assert "split this task into 3 steps" in verdict.message
    assert "What the supervisor saw: Paused: this exact call" in verdict.message  # why
    assert "same error" in verdict.message
    assert "Step 1 of 3: read foo.py" in verdict.message
    assert guard.next_task() == ("Step 2 of 3: fix the sign in add()\nWhen this step is done, "
                                 "say so and end your turn; the next step will follow.")
    assert guard.next_task().startswith("Step 3 of 3: run the check once")
    assert guard.next_task() is None
    assert guard.next_task() is None  # done stays done
    assert [s["status"] for s in guard.plan["steps"]] == ["done", "done", "done"]
    guard.end()
    guard.close()
    evs = events(root, "s1")
    starts = of_type(evs, "task_start")
    assert [e["title"] for e in starts] == ["make the tests pass", *STEPS]
    assert [e.get("plan", {}).get("step") for e in starts] == [None, 1, 2, 3]
    ends = of_type(evs, "task_end")
    assert [(e["task_id"], e["status"]) for e in ends] == [
        ("t1", "skipped"), ("t2", "done"), ("t3", "done"), ("t4", "done")]
    assert ends[0]["reason"] == "split into 3 sub-tasks"
    (applied,) = of_type(evs, "decision_applied")
    assert applied["effect"]["kind"] == "split" and applied["effect"]["answers"] is True
    assert applied["tasks"] == STEPS and applied["level"] == 0


def test_each_sub_task_has_the_per_task_limits_of_its_own(root: Path, tmp_path: Path) -> None:
    clock = Clock()
    policy = {"limits": {"actions_per_task": {"limit": 4, "action": "pause"}}}
    guard = _open(root, tmp_path, clock, policy=policy)
    guard.start("test-agent", task="big task")
    actions = [_call(guard, clock, f"echo {i}", ok=True) for i in range(5)]
    assert actions[-1] == "pause"  # the whole task used its 4 actions
    _split(root, guard, clock, STEPS)
    # step 1: four fresh actions, all allowed
    assert [_call(guard, clock, f"ls {i}", ok=True) for i in range(3)] == ["allow"] * 3
    guard.next_task()
    # step 2 counts from zero again: it escalates on its own at its 5th action
    step_two = [_call(guard, clock, f"cat {i}", ok=True) for i in range(5)]
    assert step_two == ["allow"] * 4 + ["pause"], step_two
    esc = of_type(events(root, "s1"), "escalation")[-1]
    assert "actions_per_task" in esc["reason"]
    guard.close()


def test_the_plan_survives_a_new_process_and_replays_exactly(root: Path,
                                                             tmp_path: Path) -> None:
    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="make the tests pass")
    _until_paused(guard, clock)
    _split(root, guard, clock, STEPS)
    _call(guard, clock, "ls", ok=True)
    guard.close()  # the process ends (a hook call, a restarted hook server)
    again = _open(root, tmp_path, clock)
    assert again.plan["steps"][0]["status"] == "current"
    assert again.next_task().startswith("Step 2 of 3")
    _until_paused(again, clock, "make test")
    again.close()
    third = _open(root, tmp_path, clock)
    assert third.pending is not None
    skipped = _split(root, third, clock, ["only this"])  # a plan replaces a plan
    assert "Step 1 of 1: only this" in skipped.message
    assert third.next_task() is None
    live = third.engine.snapshot()["state"]
    third.end()
    third.close()
    evs = events(root, "s1")
    # the replaced plan's waiting step never started; its current one ended as skipped
    assert [e["title"] for e in of_type(evs, "task_start")][-1] == "only this"
    analyzed = Engine(Policy.from_dict(evs[0]["policy"]))
    analyze_events(evs, analyzed.policy, session="s1", source="test", engine=analyzed)
    assert analyzed.snapshot()["state"] == live
    (root / "sessions" / "s1" / STATE_FILE).unlink()
    assert session_usage(LocalStore(root), "s1").source == "replay"
    assert replay_engine(LocalStore(root).read_all("s1").events).snapshot()["state"] == live


def test_a_skip_during_a_plan_moves_to_the_next_step(root: Path, tmp_path: Path) -> None:
    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="make the tests pass")
    _until_paused(guard, clock)
    _split(root, guard, clock, STEPS)
    send_decision(root, "s1", "skip", operator="ana")
    clock.tick()
    verdict = guard.pre_call("bash", {"command": "ls"})
    assert verdict.action == "skip"
    assert "skipped this step of the plan" in verdict.message
    assert "Step 2 of 3: fix the sign in add()" in verdict.message
    assert [s["status"] for s in guard.plan["steps"]] == ["skipped", "current", "waiting"]
    guard.close()


def test_a_skip_names_the_step_skipped_and_the_step_that_starts(root: Path,
                                                               tmp_path: Path) -> None:
    """The operator's line (`decision_applied`'s outcome) names both steps, not only a task."""
    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="make the tests pass")
    _until_paused(guard, clock)
    _split(root, guard, clock, STEPS)
    send_decision(root, "s1", "skip", operator="ana")
    clock.tick()
    guard.pre_call("bash", {"command": "ls"})
    skipped, started = guard.plan["steps"][0]["task_id"], guard.plan["steps"][1]["task_id"]
    applied = of_type(events(root, "s1"), "decision_applied")[-1]
    assert applied["outcome"] == (f"step 1 of 3 skipped (task {skipped}); "
                                  f"step 2 of 3 starts (task {started})")
    send_decision(root, "s1", "skip", operator="ana")
    send_decision(root, "s1", "skip", operator="ana")
    clock.tick()
    guard.pre_call("bash", {"command": "ls"})
    last = of_type(events(root, "s1"), "decision_applied")[-1]
    assert last["outcome"].endswith("; the plan is finished")
    assert [s["status"] for s in guard.plan["steps"]] == ["skipped", "skipped", "skipped"]
    guard.close()


@pytest.mark.slow
def test_a_skip_read_at_the_agents_stop_starts_one_step_not_two(tmp_path: Path) -> None:
    """An agent CLI between turns: the skip is applied by its Stop hook. The agent is told the
    next step (once), and that step stays current; the one after it waits."""
    root, ws = tmp_path / "store", tmp_path / "ws"
    root.mkdir()
    ws.mkdir()
    assert run_hook(payload("SessionStart", cwd=ws, source="startup"), root).returncode == 0
    assert run_hook(payload("UserPromptSubmit", cwd=ws, prompt="make the tests pass"),
                    root).returncode == 0
    send_decision(root, "loop-1", "split", operator="ana", tasks=STEPS)
    pre = run_hook(payload("PreToolUse", cwd=ws, tool_name="Bash",
                           tool_input={"command": "ls"}, tool_use_id="toolu_1"), root)
    assert "Step 1 of 3: read foo.py" in pre.stdout
    send_decision(root, "loop-1", "skip", operator="ana")
    stop = run_hook(payload("Stop", cwd=ws, stop_hook_active=False,
                            last_assistant_message="Reading it now."), root)
    assert stop.returncode == 0, stop.stderr
    assert "Step 2 of 3: fix the sign in add()" in stop.stdout
    assert "Step 3 of 3" not in stop.stdout
    plan = json.loads((root / "sessions" / "loop-1" / STATE_FILE).read_text())["plan"]
    assert [s["status"] for s in plan["steps"]] == ["skipped", "current", "waiting"]
    (applied,) = [e for e in hook_events(root, "loop-1")
                  if e["type"] == "decision_applied" and e["action"] == "skip"]
    assert applied["outcome"].startswith("step 1 of 3 skipped")
    assert "step 2 of 3 starts" in applied["outcome"]


def test_a_split_without_an_escalation_applies_at_the_next_call(root: Path,
                                                                tmp_path: Path) -> None:
    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="a task")
    _call(guard, clock, "ls", ok=True)
    send_decision(root, "s1", "split", operator="ana", tasks=STEPS[:2])
    clock.tick()
    verdict = guard.pre_call("bash", {"command": "pytest"})
    assert verdict.action == "block" and "Step 1 of 2: read foo.py" in verdict.message
    assert "What the supervisor saw" not in verdict.message  # no escalation: no evidence to cite
    (applied,) = of_type(events(root, "s1"), "decision_applied")
    assert applied["escalation_id"] is None and applied["effect"]["kind"] == "split"
    guard.close()


def test_the_sdk_agent_loop_takes_next_task_until_the_plan_is_done(root: Path,
                                                                   tmp_path: Path) -> None:
    """A scripted agent loop: it loops on a failing call until the operator (another thread,
    through the control channel) splits the task; then works each step and asks for the
    next."""
    told: list[str] = []
    worked: list[str] = []

    def operator() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pending = LocalStore(root).summary(session.session_id).pending
            if pending:
                send_decision(root, session.session_id, "split", operator="ana",
                              escalation_id=next(iter(pending)), tasks=STEPS)
                return
            time.sleep(0.05)

    with Session("scripted", task="make the check pass", cwd=tmp_path, root=root,
                 settings=GuardSettings(checkpoints=False), heartbeat_s=None) as session:
        helper = threading.Thread(target=operator)
        helper.start()
        for _ in range(12):
            verdict = session.before_call("bash", {"command": "pytest -q"})
            if verdict.proceed:
                session.after_call(verdict, "1 failed", ok=False, error="exit 1")
            if verdict.decision == "split":
                told.append(verdict.message or "")
                break
        helper.join()
        instruction: str | None = told[0]
        while instruction is not None:
            worked.append(instruction)
            v = session.before_call("bash", {"command": f"echo step {len(worked)}"})
            session.after_call(v, "ok")
            instruction = session.next_task()
    assert len(worked) == 3
    for n, (step, text) in enumerate(zip(STEPS, worked, strict=True), 1):
        assert f"Step {n} of 3: {step}" in text, text
    evs = events(root, session.session_id)
    assert of_type(evs, "session_end")[0]["status"] == "completed"
    assert [e["status"] for e in of_type(evs, "task_end")] == ["skipped", "done", "done", "done"]


# -- bad input --------------------------------------------------------------------------------


@pytest.mark.parametrize(("tasks", "problem"), [
    (None, "split needs 'tasks'"),
    ([], "split needs 'tasks'"),
    (["ok", "  "], "sub-task 2 must be a non-empty text"),
    (["ok", 3], "sub-task 2 must be a non-empty text"),
    (["x" * (PLAN_TASK_MAX_CHARS + 1)], f"at most {PLAN_TASK_MAX_CHARS}"),
    (["a"] * (PLAN_MAX_TASKS + 1), f"at most {PLAN_MAX_TASKS}"),
])
def test_the_protocol_refuses_a_bad_plan(tasks: Any, problem: str) -> None:
    line = {"type": "decision", "v": 1, "seq": 1, "ts": 1.0, "decision_id": "d1",
            "action": "split", "operator": "ana", "tasks": tasks}
    assert problem in (decision_problem(line) or "")
    with pytest.raises(DecisionError, match=r"sub-task|split"):
        send_decision(Path("/nonexistent"), "s1", "split", tasks=tasks)


def _running(root: Path, tmp_path: Path) -> Guard:
    guard = Guard.open(root, "s1", cwd=tmp_path, settings=GuardSettings(checkpoints=False))
    guard.start("test-agent", task="a task", pid=__import__("os").getpid())
    return guard


@pytest.mark.slow
@pytest.mark.parametrize("case", ["empty", "too long", "unreadable file", "ended"])
def test_the_command_line_refuses_a_bad_split_in_one_line_writing_nothing(
        root: Path, tmp_path: Path, case: str) -> None:
    guard = _running(root, tmp_path)
    if case == "ended":
        guard.end("completed")
    guard.close()
    control = root / "sessions" / "s1" / "control.jsonl"
    before = control.read_bytes() if control.exists() else b""
    args = {"empty": [], "too long": ["x" * (PLAN_TASK_MAX_CHARS + 1)],
            "unreadable file": ["--file", str(tmp_path / "missing.txt")],
            "ended": ["step one"]}[case]
    done = run_cli("split", "s1", *args, "--no-wait", "--root", str(root))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    expected = {"empty": "the plan is empty", "too long": "sub-task 1 has",
                "unreadable file": "cannot read the plan file",
                "ended": "session ended: completed"}[case]
    assert expected in lines[0] and "nothing was written" in lines[0], lines[0]
    after = control.read_bytes() if control.exists() else b""
    assert after == before


@pytest.mark.slow
def test_the_command_line_splits_from_a_file_and_answers_the_pending_escalation(
        root: Path, tmp_path: Path) -> None:
    guard = _running(root, tmp_path)
    for _ in range(12):
        v = guard.pre_call("bash", {"command": "pytest"})
        if v.action == "pause":
            break
        guard.post_call(v.call_id, "1 failed", ok=False, error="exit 1")
    plan = tmp_path / "plan.md"
    plan.write_text("# the plan\n1. read foo.py\n\n- fix the sign in add()\n")
    done = run_cli("split", "s1", "--file", str(plan), "--no-wait", "--root", str(root))
    assert done.returncode == 0, done.stderr
    (line,) = [e for e in LocalStore(root).read_all("s1", "control").events]
    assert line.action == "split" and line.escalation_id == "esc-1"
    assert line.tasks == ["read foo.py", "fix the sign in add()"]
    verdict = guard.wait(timeout=5)
    assert "Step 1 of 2: read foo.py" in (verdict.message or "")
    guard.close()


def test_the_remaining_sub_tasks_can_be_replaced_or_dropped(root: Path, tmp_path: Path) -> None:
    from supervisor.store.plan_view import PlanView

    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="make the tests pass")
    _until_paused(guard, clock)
    _split(root, guard, clock, STEPS)
    send_decision(root, "s1", "replan", operator="ana", tasks=["fix b.py", "fix c.py"])
    clock.tick()
    verdict = guard.pre_call("bash", {"command": "ls"})
    assert verdict.action == "nudge" and verdict.decision == "replan"  # the call runs
    assert "2 step(s) follow the current one" in verdict.message
    guard.post_call(verdict.call_id, "ok")
    assert guard.next_task().startswith("Step 2 of 3: fix b.py")
    send_decision(root, "s1", "drop_plan", operator="ana")
    clock.tick()
    verdict = guard.pre_call("bash", {"command": "ls -a"})
    assert verdict.decision == "drop_plan" and "no further steps" in verdict.message
    guard.post_call(verdict.call_id, "ok")
    assert guard.next_task() is None  # the plan is over: the agent may stop
    send_decision(root, "s1", "drop_plan", operator="ana")  # nothing left to drop
    clock.tick()
    guard.pre_call("bash", {"command": "pwd"})
    live = guard.engine.snapshot()["state"]
    guard.end()
    guard.close()
    evs = events(root, "s1")
    assert of_type(evs, "decision_ignored")[-1]["reason"].startswith("there is no plan")
    assert [(e["action"], e["effect"]["kind"]) for e in of_type(evs, "decision_applied")] == [
        ("split", "split"), ("replan", "none"), ("drop_plan", "none")]
    view = PlanView()
    for event in LocalStore(root).read_all("s1").events:
        view.apply(event)
    assert [(s.title, s.status) for s in view.steps] == [
        ("read foo.py", "done"), ("fix b.py", "done"), ("fix c.py", "dropped")]
    analyzed = Engine(Policy.from_dict(evs[0]["policy"]))
    analyze_events(evs, analyzed.policy, session="s1", source="test", engine=analyzed)
    assert analyzed.snapshot()["state"] == live


@pytest.mark.slow
def test_the_command_line_changes_only_a_plan_that_has_steps_left(root: Path,
                                                                 tmp_path: Path) -> None:
    guard = _running(root, tmp_path)
    done = run_cli("split", "s1", "one more", "--remaining", "--no-wait", "--root", str(root))
    assert done.returncode != 0
    assert "there is no plan to change" in done.stderr and "nothing was written" in done.stderr
    assert not (root / "sessions" / "s1" / "control.jsonl").exists() or \
        LocalStore(root).read_all("s1", "control").events == []
    assert run_cli("split", "s1", "x", "--drop", "--root", str(root)).returncode != 0
    send_decision(root, "s1", "split", operator="ana", tasks=STEPS)
    guard.pre_call("bash", {"command": "ls"})
    guard.pause("held by the test")  # a pending escalation does not stop a plan's change
    done = run_cli("split", "s1", "fix b.py", "--remaining", "--no-wait", "--root", str(root))
    assert done.returncode == 0, done.stderr
    done = run_cli("split", "s1", "--drop", "--no-wait", "--root", str(root))
    assert done.returncode == 0, done.stderr
    actions = [(e.action, getattr(e, "tasks", None))
               for e in LocalStore(root).read_all("s1", "control").events]
    assert actions == [("split", STEPS), ("replan", ["fix b.py"]), ("drop_plan", None)]
    guard.close()


def test_no_step_starts_while_an_escalation_waits_and_a_pause_has_no_evidence(
        root: Path, tmp_path: Path) -> None:
    clock = Clock()
    guard = _open(root, tmp_path, clock)
    guard.start("test-agent", task="make the tests pass")
    send_decision(root, "s1", "split", operator="ana", tasks=STEPS)
    guard.pre_call("bash", {"command": "ls"})
    _until_paused(guard, clock)  # step 1 loops and escalates on its own
    assert guard.next_task() is None  # the agent stopped while held: the plan waits too
    assert [s["status"] for s in guard.plan["steps"]] == ["current", "waiting", "waiting"]
    send_decision(root, "s1", "approve", escalation_id=guard.pending["escalation_id"],
                  operator="ana")
    guard.poll()
    assert guard.next_task().startswith("Step 2 of 3")
    send_decision(root, "s1", "pause", operator="ana")
    guard.pre_call("bash", {"command": "ls -l"})
    assert guard.pending["kind"] == "pause"
    verdict = _split(root, guard, clock, ["only this"])
    assert "Step 1 of 1: only this" in verdict.message
    assert "What the supervisor saw" not in verdict.message  # an operator's pause: no loop
    guard.close()
