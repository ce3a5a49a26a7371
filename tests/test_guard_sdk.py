"""The SDK and the guard core in-process, on real files and real git: verdicts, the tool
wrapper, operator commands and every reason a decision is ignored, persistence across
processes, and exactly-once under parallel consumers."""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from supervisor.guard import GuardSettings, Session, SessionStopped, ToolRefused
from supervisor.guard.core import Guard
from supervisor.operator.send import send_decision
from tests.conftest import cli_env, run_cli
from tests.guard_helpers import events, of_type, wait_for


@pytest.fixture
def work(tmp_path: Path) -> Path:
    w = tmp_path / "work"
    w.mkdir()
    (w / "app.py").write_text("x = 1\n")
    return w


def session(root: Path, work: Path, **kw) -> Session:
    kw.setdefault("heartbeat_s", None)
    return Session("test-agent", task="the task", cwd=work, root=root, session_id="s1", **kw)


def fail_same_way(s: Session, n: int) -> list:
    verdicts = []
    for _ in range(n):
        v = s.before_call("bash", {"command": "pytest -q"})
        verdicts.append(v)
        if v.proceed:
            s.after_call(v, "1 failed", ok=False, error="exit 1", duration=0.2)
    return verdicts


def test_session_records_the_protocol(root: Path, work: Path) -> None:
    with session(root, work) as s:
        s.message("assistant", "running the tests")
        s.usage(1000, 200, cost_usd=0.01)
        v = s.before_call("bash", {"command": "pytest -q"})
        assert v.action == "allow" and v.proceed and v.call_id == "c1"
        s.after_call(v, "x" * 10_000, ok=True, duration=0.25)
        s.checkpoint("manual")
    evs = events(root, "s1")
    types = [e["type"] for e in evs]
    assert types[:3] == ["session_start", "task_start", "checkpoint"]
    start = evs[0]
    assert (start["agent"], start["cwd"], start["heartbeat_s"]) == ("test-agent", str(work), None)
    assert start["policy"]["profile"] == "default"
    result = of_type(evs, "tool_result")[0]
    assert (result["output_bytes"], len(result["output"]), result["duration_ms"]) == (
        10_000, 8192, 250.0)
    assert [c["label"] for c in of_type(evs, "checkpoint")] == ["session start", "manual"]
    assert of_type(evs, "task_end")[0]["status"] == "done"
    assert evs[-1]["type"] == "session_end" and evs[-1]["status"] == "completed"


def test_exception_ends_the_session_as_failed(root: Path, work: Path) -> None:
    with pytest.raises(RuntimeError), session(root, work):
        raise RuntimeError("model API down")
    end = of_type(events(root, "s1"), "session_end")
    assert end == [end[0]] and end[0]["status"] == "failed"
    assert end[0]["reason"] == "RuntimeError: model API down"
    assert of_type(events(root, "s1"), "task_end")[0]["status"] == "failed"


def test_repeated_failures_nudge_then_block(root: Path, work: Path) -> None:
    with session(root, work) as s:
        verdicts = fail_same_way(s, 2)
        assert s.last_hint is None  # one retry of a failure is legitimate
        verdicts += fail_same_way(s, 1)
        assert "pytest" in s.last_hint  # the third identical failure: a nudge to tell now
        verdicts += fail_same_way(s, 2)
    actions = [v.action for v in verdicts]
    assert actions[:3] == ["allow", "allow", "allow"] and actions[3] == "block"
    assert "pytest" in verdicts[3].message
    evs = events(root, "s1")
    assert of_type(evs, "detection")
    assert of_type(evs, "verdict")[3]["action"] == "block"


def test_tool_wrapper(root: Path, work: Path) -> None:
    with session(root, work) as s:

        @s.tool
        def read_file(path: str) -> str:
            return (work / path).read_text()

        @s.tool
        def explode(path: str) -> str:
            raise ValueError(f"cannot handle {path}")

        assert read_file("app.py") == "x = 1\n"
        # The same read with nothing changed: served from the guard's file cache.
        assert read_file(path="app.py") == "x = 1\n"
        with pytest.raises(ValueError):
            explode("app.py")
        failing = s.tool(lambda: 1 / 0, name="divide")
        for _ in range(2):
            with pytest.raises(ZeroDivisionError):
                failing()
        with pytest.raises(ToolRefused) as refused:
            for _ in range(4):
                with pytest.raises(ZeroDivisionError):
                    failing()
        assert refused.value.verdict.action == "block"
    evs = events(root, "s1")
    calls = of_type(evs, "tool_call")
    assert [c["tool"] for c in calls[:3]] == ["read_file", "read_file", "explode"]
    assert calls[0]["args"] == {"path": "app.py"}
    results = {r["call_id"]: r for r in of_type(evs, "tool_result")}
    assert results[calls[0]["call_id"]]["output"] == "x = 1\n"
    assert calls[1]["call_id"] not in results  # not run: the cached output was handed back
    assert results[calls[2]["call_id"]]["error"] == "ValueError: cannot handle app.py"


def test_heartbeats_while_open(root: Path, work: Path) -> None:
    s = session(root, work, heartbeat_s=0.1)
    try:
        wait_for(root, "s1", lambda e: len(of_type(e, "heartbeat")) >= 2, timeout=10)
    finally:
        s.close()
    count = len(events(root, "s1"))
    assert events(root, "s1")[-1]["type"] == "session_end"
    assert not any(t.name == "supervisor-heartbeat" for t in threading.enumerate())
    assert len(events(root, "s1")) == count


@pytest.mark.slow
def test_automatic_checkpoints_every_n_actions(root: Path, work: Path) -> None:
    with session(root, work, settings=GuardSettings(checkpoint_every=3)) as s:
        for i in range(7):
            v = s.before_call("write_file", {"path": f"f{i}.txt"})
            (work / f"f{i}.txt").write_text(str(i))
            s.after_call(v, "ok")
    labels = [c["label"] for c in of_type(events(root, "s1"), "checkpoint")]
    assert labels == ["session start", "auto: every 3 actions", "auto: every 3 actions"]
    listed = run_cli("checkpoints", "s1", "--root", str(root), "--json")
    rows = [json.loads(x) for x in listed.stdout.splitlines()]
    assert [r["added"] for r in rows] == [1, 2, 3]


def test_operator_commands_at_the_next_call(root: Path, work: Path) -> None:
    with session(root, work) as s:
        send_decision(root, "s1", "guidance", text="use the helper in utils", operator="ana")
        v = s.before_call("bash", {"command": "ls"})
        assert (v.action, v.decision) == ("nudge", "guidance")
        assert v.message == "Operator guidance: use the helper in utils"
        s.after_call(v, "app.py")

        (work / "app.py").write_text("x = 2\n")
        (work / "new.py").write_text("y\n")
        send_decision(root, "s1", "rollback", checkpoint_id="cp-1")
        v = s.before_call("bash", {"command": "cat app.py"})
        assert v.action == "block" and v.changed_files == ["app.py", "new.py"]
        assert (work / "app.py").read_text() == "x = 1\n" and not (work / "new.py").exists()

        send_decision(root, "s1", "skip")
        v = s.before_call("bash", {"command": "ls"})
        assert v.action == "skip" and "move on" in v.message

        send_decision(root, "s1", "abort", operator="bo")
        v = s.before_call("bash", {"command": "ls"})
        assert v.action == "stop"
        assert s.ended == "aborted"
        with pytest.raises(SessionStopped):
            s.tool(lambda: None, name="noop")()
    evs = events(root, "s1")
    assert [(v["action"], (v["message"] or "")[:18]) for v in of_type(evs, "verdict")] == [
        ("nudge", "Operator guidance:"), ("block", "The operator rolle"),
        ("skip", "The operator skipp")]
    assert [d["action"] for d in of_type(evs, "decision_applied")] == [
        "guidance", "rollback", "skip", "abort"]
    assert all(d["escalation_id"] is None for d in of_type(evs, "decision_applied"))
    assert of_type(evs, "session_end")[0]["reason"] == "aborted by bo"


def test_pause_command_waits_for_the_decision(root: Path, work: Path) -> None:
    with session(root, work) as s:
        send_decision(root, "s1", "pause", operator="ana")

        def approve_when_paused() -> None:
            evs = wait_for(root, "s1", lambda e: of_type(e, "escalation"), timeout=10)
            esc = of_type(evs, "escalation")[0]
            send_decision(root, "s1", "approve", escalation_id=esc["escalation_id"])

        helper = threading.Thread(target=approve_when_paused)
        helper.start()
        v = s.before_call("bash", {"command": "ls"})
        helper.join()
        assert (v.action, v.decision, v.escalation_id) == ("allow", "approve", "esc-1")
    esc = of_type(events(root, "s1"), "escalation")[0]
    assert esc["kind"] == "pause" and esc["reason"] == "paused by ana"


def test_why_decisions_are_ignored(root: Path, work: Path) -> None:
    with session(root, work) as s:
        control = root / "sessions" / "s1" / "control.jsonl"
        with control.open("ab") as f:
            f.write(b'{"broken json\n')
        send_decision(root, "s1", "approve")                       # nothing pending
        send_decision(root, "s1", "skip", escalation_id="esc-9")   # unknown escalation
        send_decision(root, "s1", "guidance", text="a", decision_id="same")
        send_decision(root, "s1", "guidance", text="b", decision_id="same")  # duplicate
        s.before_call("bash", {"command": "ls"})
        s.guard.pause("test")
        send_decision(root, "s1", "pause")                         # already paused
        send_decision(root, "s1", "approve", escalation_id="esc-1")
        send_decision(root, "s1", "skip", escalation_id="esc-1")   # late
        assert s.before_call("bash", {"command": "ls"}).decision == "approve"
    # The cursor is persisted at the end of the control file: nothing is ever read twice.
    state = json.loads((root / "sessions" / "s1" / "state.json").read_text())
    assert state["control_offset"] == control.stat().st_size
    reasons = [d["reason"] for d in of_type(events(root, "s1"), "decision_ignored")]
    assert reasons[0].startswith("malformed: invalid JSON")
    assert reasons[1:] == [
        "no pending escalation to approve",
        "unknown escalation: esc-9",
        "duplicate: this decision id was already handled",
        "already paused (esc-1): resume it or decide",
        f"late: esc-1 was already decided ({_decision_id(root, 'approve')})",
    ]


@pytest.mark.slow
def test_reset_is_bounded(root: Path, work: Path) -> None:
    with session(root, work) as s:
        for _ in range(3):
            out = run_cli("reset", "s1", "--root", str(root), "--wait", "0")
            assert out.returncode == 0, out.stderr
            s.before_call("bash", {"command": "ls"})
        out = run_cli("reset", "s1", "--root", str(root), "--wait", "0")
        assert out.returncode == 2 and "limit (resets_per_conversation) is 3" in out.stderr
        stats = run_cli("stats", "s1", "--root", str(root))
        assert "resets_per_conversation" in stats.stdout
        assert "iterations_per_session" in stats.stdout
    applied = of_type(events(root, "s1"), "decision_applied")
    assert [a["outcome"] for a in applied] == [f"counters reset ({i} of 3)" for i in (1, 2, 3)]


def test_one_step_per_process_continues_where_it_left(root: Path, work: Path) -> None:
    """The hook's way: a fresh Guard per step (state loaded, one step, saved)."""
    actions = []
    for i in range(5):
        with Guard.open(root, "s1", cwd=work) as g:
            if not g.started:
                g.start("hook-agent")
            v = g.pre_call("bash", {"command": "pytest -q"}, call_id=f"t{i}")
            actions.append(v.action)
        if v.proceed:
            with Guard.open(root, "s1") as g:
                g.post_call(f"t{i}", "1 failed", ok=False, error="exit 1")
    assert actions[:4] == ["allow", "allow", "allow", "block"]
    state = json.loads((root / "sessions" / "s1" / "state.json").read_text())
    assert state["actions"] == 5 and state["engine"]["v"] >= 1


@pytest.mark.slow
def test_parallel_consumers_apply_a_decision_exactly_once(root: Path, work: Path) -> None:
    with Guard.open(root, "s1", cwd=work) as g:
        g.start("hook-agent")
        g.pause("test")
    send_decision(root, "s1", "guidance", escalation_id="esc-1", text="one", operator="a")
    send_decision(root, "s1", "skip", escalation_id="esc-1", operator="b")
    code = (
        "import sys; from pathlib import Path; from supervisor.guard.core import Guard\n"
        "g = Guard.open(Path(sys.argv[1]), 's1'); g.poll(); g.close()\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root)], env=cli_env())
             for _ in range(6)]
    assert [p.wait(timeout=60) for p in procs] == [0] * 6
    evs = events(root, "s1")
    assert len(of_type(evs, "decision_applied")) == 1
    assert len(of_type(evs, "decision_ignored")) == 1


@pytest.mark.slow
def test_answer_errors(root: Path, work: Path) -> None:
    out = run_cli("answer", "nope", "--root", str(root), "--approve")
    assert out.returncode == 2 and "no session 'nope'" in out.stderr
    with session(root, work):
        out = run_cli("answer", "s1", "--root", str(root), "--skip")
        assert out.returncode == 2 and "has no pending escalation" in out.stderr
        out = run_cli("answer", "s1", "--root", str(root), "--approve", "--escalation", "esc-4")
        assert out.returncode == 2 and "'esc-4' is not pending" in out.stderr
    assert not (root / "sessions" / "s1" / "control.jsonl").exists()


@pytest.mark.slow
def test_checkpoints_cli_diff(root: Path, work: Path) -> None:
    with session(root, work):
        (work / "app.py").write_text("x = 3\n")
        (work / "b.txt").write_text("b\n")
    out = run_cli("checkpoints", "s1", "--root", str(root), "--diff", "cp-1")
    assert out.stdout.splitlines() == ["A b.txt", "M app.py"]
    out = run_cli("rollback", "s1", "1", "--root", str(root))
    assert out.returncode == 0, out.stderr
    assert (work / "app.py").read_text() == "x = 1\n"
    out = run_cli("checkpoints", "s1", "--root", str(root), "--diff", "cp-9")
    assert out.returncode == 2 and "no checkpoint 'cp-9' (it has 2, cp-1 to cp-2)" in out.stderr
    # a mistyped id says what there is and where they are listed, and restores nothing
    out = run_cli("rollback", "s1", "cp-9", "--root", str(root))
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == ("supervisor: error: no checkpoint 'cp-9' (it has 2, cp-1 to "
                                  "cp-2); `supervisor checkpoints s1` lists them")


@pytest.mark.slow
def test_checkpoints_diff_on_a_terminal_says_what_the_letters_are(root: Path, work: Path
                                                                  ) -> None:
    """On a terminal `--diff CP` printed bare `A b.txt` / `M app.py`: a line before them says
    they are what a rollback to CP throws away, and what A, M and D are (a pipe still gets
    the lines alone, as above)."""
    from tests.conftest import run_cli_in_terminal

    with session(root, work):
        (work / "b.txt").write_text("b\n")
    out = run_cli_in_terminal("checkpoints", "s1", "--root", str(root), "--diff", "cp-1",
                              columns=100)
    assert out.splitlines() == [
        "the work tree since cp-1 (what a rollback to it throws away; A added, M modified, "
        "D deleted):", "A b.txt"]


def _decision_id(root: Path, action: str) -> str:
    lines = (root / "sessions" / "s1" / "control.jsonl").read_text().splitlines()[1:]
    return next(json.loads(x)["decision_id"] for x in lines
                if json.loads(x)["action"] == action and json.loads(x)["escalation_id"])


def test_every_waiter_gets_the_decision(root: Path, work: Path) -> None:
    """Parallel hook processes waiting on one escalation all get the operator's verdict."""
    with Guard.open(root, "s1", cwd=work) as g:
        g.start("hook-agent")
        g.pause("test")
    results: list = []

    def waiter() -> None:
        with Guard.open(root, "s1") as guard:
            results.append(guard.wait(timeout=20, escalation_id="esc-1"))

    threads = [threading.Thread(target=waiter) for _ in range(3)]
    for t in threads:
        t.start()
    send_decision(root, "s1", "guidance", escalation_id="esc-1", text="try the other file")
    for t in threads:
        t.join()
    assert [(v.action, v.message) for v in results] == [
        ("block", "Operator guidance: try the other file")] * 3
    assert len(of_type(events(root, "s1"), "decision_applied")) == 1


@pytest.mark.slow
def test_answer_refuses_an_unknown_checkpoint(root: Path, work: Path) -> None:
    with Guard.open(root, "s1", cwd=work) as g:
        g.start("hook-agent")
        g.pause("test")
    out = run_cli("answer", "s1", "--root", str(root), "--rollback", "cp-7")
    assert out.returncode == 2 and "no checkpoint 'cp-7' (it has " in out.stderr
    assert "`supervisor checkpoints s1` lists them" in out.stderr
    assert not (root / "sessions" / "s1" / "control.jsonl").exists()


def test_policy_from_a_toml_file(root: Path, work: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('profile = "seed-strict"\n[limits.iterations_per_session]\nlimit = 2\n')
    with session(root, work, policy=policy) as s:
        for _ in range(3):
            v = s.before_call("bash", {"command": f"echo {_}"})
            if v.proceed:
                s.after_call(v, "ok")
    assert v.action == "stop"
    start = of_type(events(root, "s1"), "session_start")[0]
    assert start["policy"]["profile"] == "seed-strict"
    assert of_type(events(root, "s1"), "session_end")[0]["status"] == "terminated"


def test_abort_as_the_fallback(root: Path, work: Path) -> None:
    settings = GuardSettings(pause_deadline_s=0.2, fallback="abort")
    with session(root, work, settings=settings) as s:
        s.guard.pause("test")
        v = s.before_call("bash", {"command": "ls"})
        assert (v.action, v.decision) == ("stop", "abort")
        assert v.message.startswith("No operator answered before the deadline")
    evs = events(root, "s1")
    (dec,) = of_type(evs, "decision_applied")
    assert (dec["decision_id"], dec["outcome"]) == ("fallback", "deadline passed: session aborted")
    end = of_type(evs, "session_end")[0]
    assert (end["status"], end["reason"]) == ("aborted", "no operator decision before the deadline")


def test_settings_validation() -> None:
    assert GuardSettings.from_dict({"checkpoint_every": 5}).checkpoint_every == 5
    with pytest.raises(ValueError, match="unknown guard setting 'colour'"):
        GuardSettings.from_dict({"colour": 1})
    with pytest.raises(ValueError, match="'fallback' must be one of skip, abort"):
        GuardSettings.from_dict({"fallback": "approve"})
    with pytest.raises(ValueError, match="'checkpoints' must be a boolean"):
        GuardSettings.from_dict({"checkpoints": "yes"})
    with pytest.raises(ValueError, match="'escalation_deadline_s' must be a non-negative"):
        GuardSettings.from_dict({"escalation_deadline_s": -1})


def test_verdicts_report_every_limit_gauge(root: Path, work: Path) -> None:
    with session(root, work) as s:
        s.usage(1000, 200, cost_usd=0.01)
        for n in range(3):
            v = s.before_call("bash", {"command": f"echo {n}"})
            s.after_call(v, str(n), ok=n != 1, error=None if n != 1 else "exit 1", duration=0.1)
    verdicts = of_type(events(root, "s1"), "verdict")
    last = verdicts[-1]["gauges"]
    assert last["iterations_per_session"] == 3
    assert last["errors_per_session"] == 1
    assert last["tokens"] == 1200
    assert verdicts[0]["gauges"]["iterations_per_session"] == 1


@pytest.mark.slow
def test_checkpoint_events_say_what_changed_since_the_previous_one(root: Path,
                                                                   work: Path) -> None:
    """The guard records `changed_files` and a `diffstat`: live sessions need no git to list
    what a checkpoint changed, and "changed" means since the previous checkpoint."""
    (work / "old.txt").write_text("one\ntwo\n")
    with session(root, work) as s:
        (work / "app.py").write_text("x = 2\ny = 3\n")
        (work / "new.py").write_text("n = 1\n")
        (work / "old.txt").unlink()
        s.checkpoint("after edits")
        s.checkpoint("nothing new")
    first, second, third = of_type(events(root, "s1"), "checkpoint")
    assert first["diffstat"]["since"] is None and first["diffstat"]["added"] == 2
    assert first["diffstat"]["insertions"] is None  # the first one counts no lines
    assert second["changed_files"] == ["app.py", "new.py", "old.txt"]
    assert second["diffstat"] == {"since": "cp-1", "files": 3, "added": 1, "modified": 1,
                                  "deleted": 1, "insertions": 3, "deletions": 3}
    assert third["changed_files"] == [] and third["diffstat"]["files"] == 0
    listed = run_cli("checkpoints", "s1", "--root", str(root))
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("cp-2"))
    assert "+1 ~1 -1 since cp-1" in row and "+3 -3" in row
    assert "CHANGED SINCE PREVIOUS" in listed.stdout
    rows = [json.loads(x) for x in run_cli("checkpoints", "s1", "--root", str(root),
                                           "--json").stdout.splitlines()]
    assert rows[1]["since"] == "cp-1" and rows[1]["insertions"] == 3


@pytest.mark.slow
def test_checkpoints_cli_patch_is_what_a_rollback_throws_away(root: Path, work: Path,
                                                              tmp_path: Path) -> None:
    with session(root, work):
        (work / "app.py").write_text("x = 1\nz = 'after the checkpoint'\n")
        (work / "evil.txt").write_text("\x1b]0;title\x07line\n")
    patch = run_cli("checkpoints", "s1", "--root", str(root), "--patch", "cp-1")
    assert patch.returncode == 0, patch.stderr
    assert "+z = 'after the checkpoint'" in patch.stdout and "new file mode" in patch.stdout
    # through a pipe the patch is exact: it reverses the work since the checkpoint
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "app.py").write_text("x = 1\nz = 'after the checkpoint'\n")
    (copy / "evil.txt").write_text("\x1b]0;title\x07line\n")
    applied = subprocess.run(["git", "apply", "-R", "-"], input=patch.stdout, text=True,
                             cwd=copy, capture_output=True)
    assert applied.returncode == 0, applied.stderr
    assert (copy / "app.py").read_text() == "x = 1\n" and not (copy / "evil.txt").exists()
    none = run_cli("checkpoints", "s1", "--root", str(root), "--patch", "cp-2")
    assert none.returncode == 2 and "no checkpoint 'cp-2'" in none.stderr


@pytest.mark.slow
def test_the_tokens_limit_warns_once_at_80_percent(root: Path, work: Path,
                                                   tmp_path: Path) -> None:
    """A real deliverer and receiver: the usage that brings the session to 80 % of its
    `tokens` limit sends one warning; the usage after it sends none."""
    from tests.notify_helpers import Receiver, write_config

    policy = tmp_path / "policy.toml"
    policy.write_text("[limits.tokens]\nlimit = 1000\n")
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0)
        with session(root, work, policy=policy) as s:
            s.usage(500, 100)
            assert of_type(events(root, "s1"), "limit") == []  # 60 %
            s.usage(150, 50)
            s.usage(50, 0)
        evs = wait_for(root, "s1", lambda e: bool(of_type(e, "notification")))
        time.sleep(2.0)  # what a second deliverer would have needed to start and send
        assert len(rx.messages) == 1
    (warning,) = of_type(evs, "limit")
    assert (warning["name"], warning["value"], warning["action"]) == ("tokens", 800, "warn")
    assert rx.messages[0]["title"] == "warning: s1"
    assert rx.messages[0]["message"] == "this session's tokens limit at 80%: 800 of 1,000 tokens"
    assert of_type(evs, "notification")[0]["escalation_id"] == f"warn-{warning['seq']}"


def test_a_session_limit_warns_once_across_restarts_and_changes_no_level(
        root: Path, work: Path, tmp_path: Path) -> None:
    """The hook's way (a fresh Guard per step): the warning is written once, however many
    processes see the session above 80 %; it is a notice, not an engine step: the level and
    the verdicts stay what they were, and the dashboard's gauge goes on counting past it."""
    from supervisor.engine.policy_file import load_policy
    from supervisor.store.follower import Follower
    from supervisor.tui.model import DashboardModel

    policy = tmp_path / "policy.toml"
    policy.write_text("[limits.cost_usd]\nlimit = 1.0\n")

    for i in range(4):  # $0.3 a step: 80 % is crossed at the third
        with Guard.open(root, "s1", cwd=work, policy=load_policy(policy),
                        settings=GuardSettings(checkpoints=False)) as g:
            if not g.started:
                g.start("hook-agent")
            g.usage(100, 10, 0.3 if i < 3 else 0.05)
            v = g.pre_call("Read", {"file_path": f"f{i}.py"}, call_id=f"t{i}")
            assert (v.action, v.level) == ("allow", 0)
    (warning,) = [e for e in events(root, "s1") if e["type"] == "limit"]
    assert (warning["name"], warning["action"], warning["limit"]) == ("cost_usd", "warn", 1.0)
    assert warning["value"] == pytest.approx(0.9)
    model = DashboardModel(root)
    model.apply(Follower(root).scan())
    (gauge,) = [g for g in model.sessions["s1"].gauges() if g.name == "cost_usd"]
    assert gauge.value == pytest.approx(0.95) and gauge.action == "pause"
