"""The hook in real processes: a replayed loop is denied at the right step, holds are answered
by the operator or by the fallback in time, parallel hooks lose nothing, failures are safe."""

import json
import time
from pathlib import Path

import pytest

from supervisor.hooks.budget import WAIT_MARGIN_S
from supervisor.hooks.targets import names
from supervisor.operator.send import send_decision
from tests.conftest import run_cli
from tests.hook_helpers import events as session_events
from tests.hook_helpers import payload, run_hook, start_hook

EDIT = {"file_path": "/w/parser.py", "old_string": "foo()", "new_string": "bar()"}
NOT_FOUND = "String to replace not found in file.\nString: foo()"


def events(root: Path, session: str = "loop-1") -> list[dict]:
    return session_events(root, session)


def _ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / "parser.py").write_text("def parse(text):\n    return text.split(',')\n")
    return workspace


def _verdicts(root: Path, session: str = "loop-1") -> dict[str, dict]:
    return {e["call_id"]: e for e in events(root, session) if e["type"] == "verdict"}


def _wait_for(root: Path, kind: str, session: str = "loop-1", timeout: float = 20) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = [e for e in events(root, session) if e["type"] == kind]
        if found:
            return found[-1]
        time.sleep(0.05)
    raise AssertionError(f"no {kind} event within {timeout} s")


@pytest.mark.slow
def test_a_replayed_failing_edit_loop_is_denied_at_the_fourth_attempt(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    outputs = []
    for step in range(4):
        pre = run_hook(payload("PreToolUse", cwd=ws, tool_name="Edit", tool_input=EDIT,
                               tool_use_id=f"toolu_{step}"), root)
        assert pre.returncode == 0 and pre.stderr == ""
        outputs.append(pre.stdout)
        if pre.stdout:
            break
        post = run_hook(payload("PostToolUseFailure", cwd=ws, tool_name="Edit", tool_input=EDIT,
                                tool_use_id=f"toolu_{step}", error=NOT_FOUND), root)
        assert post.returncode == 0
        hint = json.loads(post.stdout)["hookSpecificOutput"]
        assert hint["hookEventName"] == "PostToolUseFailure"
        # every failed edit gets a hint (here: the file lies outside the session's work
        # tree, so the supervisor does not read it)
        assert ("The edit of /w/parser.py failed, and the supervisor could not read the file "
                "(outside the session's work tree)") in hint["additionalContext"]
        # what follows a result speaks in the supervisor's name, as a refusal does
        assert hint["additionalContext"].startswith("Agent Supervisor: ")
        if step == 2:  # the third identical failure: the agent is nudged right away
            assert "Loop:" in hint["additionalContext"]
        else:
            assert "Loop:" not in hint["additionalContext"]
    assert outputs[:3] == ["", "", ""]
    deny = json.loads(outputs[3])["hookSpecificOutput"]
    assert deny["permissionDecision"] == "deny"
    verdict = _verdicts(root)["toolu_3"]
    assert verdict["action"] == "block" and verdict["reason"] == "exact_repeat"
    assert deny["permissionDecisionReason"] == f"Agent Supervisor: {verdict['message']}"
    assert "Edit" in verdict["message"] and "/w/parser.py" in verdict["message"]
    assert [v["action"] for v in _verdicts(root).values()] == ["allow", "allow", "allow",
                                                               "block"]


@pytest.mark.slow
def test_rerunning_tests_after_a_real_edit_is_not_a_loop(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    bash = {"command": "python -m pytest -q", "description": "run the tests"}
    for step in range(4):
        i = f"toolu_{step}"
        assert run_hook(payload("PreToolUse", cwd=ws, tool_name="Bash", tool_input=bash,
                                tool_use_id=i), root).stdout == ""
        assert run_hook(payload("PostToolUseFailure", cwd=ws, tool_name="Bash", tool_input=bash,
                                tool_use_id=i, error=f"Exit code 1\n{4 - step} failed"),
                        root).returncode == 0
        edit = {"file_path": str(ws / "parser.py"), "old_string": f"v{step}",
                "new_string": f"v{step + 1}"}
        e = f"toolu_e{step}"
        assert run_hook(payload("PreToolUse", cwd=ws, tool_name="Edit", tool_input=edit,
                                tool_use_id=e), root).stdout == ""
        run_hook(payload("PostToolUse", cwd=ws, tool_name="Edit", tool_input=edit,
                         tool_use_id=e, tool_response={"filePath": edit["file_path"]}), root)
    assert {v["action"] for v in _verdicts(root).values()} == {"allow"}


def _hold(root: Path, ws: Path, *extra: str):
    """Ask for a pause like an operator would, then start a tool call: it is held."""
    assert run_hook(payload("SessionStart", cwd=ws, source="startup"), root).returncode == 0
    send_decision(root, "loop-1", "pause", operator="ana")
    proc = start_hook(payload("PreToolUse", cwd=ws, tool_name="Bash",
                              tool_input={"command": "make deploy"}, tool_use_id="toolu_h"),
                      root, *extra)
    escalation = _wait_for(root, "escalation")
    assert proc.poll() is None  # still holding the call
    return proc, escalation


@pytest.mark.slow
def test_a_held_call_waits_for_the_operator_and_takes_the_guidance(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    proc, escalation = _hold(root, ws, "--timeout", "120")
    assert escalation["kind"] == "pause" and "guidance" in escalation["options"]
    time.sleep(0.5)
    assert proc.poll() is None
    sent = time.monotonic()
    answered = run_cli("answer", "loop-1", "--guidance", "Deploy only after the tests pass.",
                       "--operator", "ana", SUPERVISOR_HOME=str(root))
    assert answered.returncode == 0, answered.stderr
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 10
    assert proc.returncode == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert "Deploy only after the tests pass." in answer["permissionDecisionReason"]
    applied = _wait_for(root, "decision_applied")
    assert applied["escalation_id"] == escalation["escalation_id"]
    assert applied["action"] == "guidance"


@pytest.mark.slow
def test_an_approved_hold_lets_the_call_run(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    proc, escalation = _hold(root, ws, "--timeout", "120")
    answered = run_cli("answer", "loop-1", "--approve", "--escalation",
                       escalation["escalation_id"], SUPERVISOR_HOME=str(root))
    assert answered.returncode == 0, answered.stderr
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    answer = json.loads(out)["hookSpecificOutput"]
    assert "permissionDecision" not in answer  # Claude Code's own permission rules still apply
    assert "approved" in answer["additionalContext"]


@pytest.mark.slow
def test_the_persons_next_prompt_after_a_skipped_task_is_the_new_task(tmp_path: Path) -> None:
    """An interactive session whose task (its first prompt) was skipped: the person's next
    prompt is new work, its task (the operator saw the skipped prompt as the session's task,
    and a skip at the next escalation had no task to drop)."""
    root, ws = tmp_path / "store", _ws(tmp_path)
    assert run_hook(payload("SessionStart", cwd=ws, source="startup"), root).returncode == 0
    assert run_hook(payload("UserPromptSubmit", cwd=ws, prompt="run the tests"),
                    root).returncode == 0
    send_decision(root, "loop-1", "pause", operator="ana")
    proc = start_hook(payload("PreToolUse", cwd=ws, tool_name="Bash",
                              tool_input={"command": "pytest"}, tool_use_id="toolu_h"),
                      root, "--timeout", "120")
    _wait_for(root, "escalation")
    answered = run_cli("answer", "loop-1", "--skip", "--operator", "ana",
                       SUPERVISOR_HOME=str(root))
    assert answered.returncode == 0, answered.stderr
    proc.communicate(timeout=30)
    assert run_hook(payload("UserPromptSubmit", cwd=ws, prompt="now   fix the build"),
                    root).returncode == 0
    tasks = [(e["type"], e.get("title") or e.get("status")) for e in events(root)
             if e["type"] in ("task_start", "task_end")]
    assert tasks == [("task_start", "run the tests"), ("task_end", "skipped"),
                     ("task_start", "now fix the build")]
    listed = run_cli("sessions", SUPERVISOR_HOME=str(root))
    assert "now fix the build" in listed.stdout, listed.stdout


@pytest.mark.slow
def test_the_policy_fallback_answers_when_the_hold_time_passes(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\npause_deadline_s = 2\nfallback = 'skip'\n")
    started = time.monotonic()
    proc, escalation = _hold(root, ws, "--timeout", "120")
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - started
    assert proc.returncode == 0, err
    assert 1.5 < took < 10
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    applied = _wait_for(root, "decision_applied")
    assert applied["decision_id"] == "fallback" and applied["action"] == "skip"
    assert applied["outcome"].startswith("deadline passed")
    assert escalation["fallback"] == "skip"


@pytest.mark.slow
def test_a_hold_answers_before_the_hook_timeout_even_if_the_policy_waits_longer(
    tmp_path: Path,
) -> None:
    """Claude Code gives up on a hook `--timeout` seconds after it started the hook's process:
    a held call answers by itself before that, with the margin every wait of the hook path
    keeps (`WAIT_MARGIN_S`), however long the policy would wait for the operator. Measured
    from the held call's own process start (not from the session's start before it, which a
    loaded machine makes seconds longer and the agent does not count)."""
    root, ws = tmp_path / "store", _ws(tmp_path)
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\npause_deadline_s = 600\n")
    timeout = 13
    assert run_hook(payload("SessionStart", cwd=ws, source="startup"), root).returncode == 0
    send_decision(root, "loop-1", "pause", operator="ana")
    spawned = time.monotonic()
    proc = start_hook(payload("PreToolUse", cwd=ws, tool_name="Bash",
                              tool_input={"command": "make deploy"}, tool_use_id="toolu_h"),
                      root, "--timeout", str(timeout))
    _wait_for(root, "escalation")
    assert proc.poll() is None  # held
    out, err = proc.communicate(timeout=30)
    took = time.monotonic() - spawned
    assert proc.returncode == 0, err
    assert took < timeout - WAIT_MARGIN_S, "the hook must answer before Claude Code's timeout"
    answer = json.loads(out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "on hold" in answer[
        "permissionDecisionReason"]
    # 13 s leave no operator time to answer: the policy's deadline stands (no fallback decides
    # within the call), and the pause waits across calls for the operator
    assert not [e for e in events(root) if e["type"] == "decision_applied"
                and e["decision_id"] == "fallback"]


@pytest.mark.slow
def test_parallel_hooks_of_one_session_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    n = 8
    procs = [
        start_hook(payload("PreToolUse", cwd=ws, tool_name="Read",
                           tool_input={"file_path": f"/w/f{i}.py"}, tool_use_id=f"toolu_{i}"),
                   root)
        for i in range(n)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0 and out == b"", err
    procs = [
        start_hook(payload("PostToolUse", cwd=ws, tool_name="Read",
                           tool_input={"file_path": f"/w/f{i}.py"}, tool_use_id=f"toolu_{i}",
                           tool_response={"file": {"content": f"content {i}"}}), root)
        for i in range(n)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
    written = events(root)
    seqs = [e["seq"] for e in written]
    assert seqs == list(range(1, len(written) + 1))
    by_type: dict[str, list[str]] = {}
    for e in written:
        by_type.setdefault(e["type"], []).append(e.get("call_id", ""))
    assert len(by_type["session_start"]) == 1
    for kind in ("tool_call", "verdict", "tool_result"):
        assert sorted(by_type[kind]) == sorted(f"toolu_{i}" for i in range(n)), kind
    state = json.loads((root / "sessions" / "loop-1" / "state.json").read_text())
    assert state["actions"] == n  # every process's step reached the saved state


@pytest.mark.slow
def test_a_corrupt_state_is_kept_aside_reported_and_the_agent_goes_on(tmp_path: Path) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    call = payload("PreToolUse", cwd=ws, tool_name="Read", tool_input={"file_path": "/w/a"},
                   tool_use_id="toolu_1")
    assert run_hook(call, root).returncode == 0
    state = root / "sessions" / "loop-1" / "state.json"
    snapshot = json.loads(state.read_text())
    snapshot["engine"] = {"not": "an engine snapshot"}
    state.write_text(json.dumps(snapshot))

    done = run_hook({**call, "tool_use_id": "toolu_2"}, root)
    assert done.returncode == 0 and done.stdout == ""
    errors = [e for e in events(root) if e["type"] == "supervisor_error"]
    assert len(errors) == 1 and "state.json.corrupt-" in errors[0]["message"]
    assert list(state.parent.glob("state.json.corrupt-*"))
    assert _verdicts(root)["toolu_2"]["action"] == "allow"  # supervision goes on

    state.write_bytes(b"\x00garbage{")
    done = run_hook({**call, "tool_use_id": "toolu_3"}, root)
    assert done.returncode == 0 and done.stdout == ""
    errors = [e for e in events(root) if e["type"] == "supervisor_error"]
    assert len(errors) == 2 and "state.json.bad" in errors[1]["message"]


@pytest.mark.slow
def test_when_the_store_cannot_be_written_the_hook_says_so_and_lets_the_call_go(
    tmp_path: Path,
) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    call = payload("PreToolUse", cwd=ws, tool_name="Read", tool_input={"file_path": "/w/a"},
                   tool_use_id="toolu_1")
    (root / "sessions" / "loop-1" / "events.jsonl").mkdir(parents=True)  # cannot be appended
    done = run_hook(call, root)
    assert done.returncode == 0 and done.stdout == ""
    assert "supervisor failed" in done.stderr and "unsupervised" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("argv", "status"),
    [(["claude-code", "--timeout", "x"], 1), (["cursor"], 1), ([], 1),
     (["claude-code", "--bogus"], 1), (["claude-code", "--timeout", "1e10"], 1),
     (["claude-code", "--timeout", "inf"], 1)],
)
def test_a_wrong_command_line_is_a_non_blocking_error(
    tmp_path: Path, argv: list[str], status: int
) -> None:
    import subprocess
    import sys

    from tests.conftest import cli_env

    done = subprocess.run([sys.executable, "-m", "supervisor", "hook", *argv], input=b"{}",
                          capture_output=True, env=cli_env(SUPERVISOR_HOME=str(tmp_path)))
    assert done.returncode == status  # never 2: that would block the agent's call
    usage = f"usage: supervisor hook {{{','.join(names())}}}"
    assert usage.encode() in done.stderr
    assert b"Traceback" not in done.stderr
    if "1e10" in argv:  # no clock waits that long: said so, not an OverflowError
        assert b"--timeout must be at most 86400 seconds" in done.stderr


@pytest.mark.slow
def test_no_checkpoints_of_a_home_directory(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.conftest import cli_env

    home = _ws(tmp_path)
    root = tmp_path / "store"
    done = subprocess.run(
        [sys.executable, "-m", "supervisor", "hook", "claude-code"],
        input=json.dumps(payload("SessionStart", cwd=home, source="startup")).encode(),
        capture_output=True, env=cli_env(SUPERVISOR_HOME=str(root), HOME=str(home)),
    )
    assert done.returncode == 0, done.stderr
    kinds = [e["type"] for e in events(root)]
    assert kinds == ["session_start", "message"]  # and no checkpoint, and the reason
    assert "checkpoints are off for this session" in events(root)[1]["text"]
    assert not (root / "sessions" / "loop-1" / "checkpoints.git").exists()
    run_hook(payload("SessionStart", session="loop-2", cwd=home, source="startup"), root)
    assert "checkpoint" in [e["type"] for e in events(root, "loop-2")]  # elsewhere, as usual


@pytest.mark.slow
def test_a_fallback_reached_while_the_agent_stops_does_not_keep_it_working(
    tmp_path: Path,
) -> None:
    root, ws = tmp_path / "store", _ws(tmp_path)
    root.mkdir()
    (root / "policy.toml").write_text("[guard]\npause_deadline_s = 1\n")
    proc, _escalation = _hold(root, ws, "--timeout", "120")
    proc.kill()  # the user interrupted the held call in Claude Code
    proc.wait(timeout=10)
    time.sleep(1.2)
    stop = run_hook(payload("Stop", cwd=ws, stop_hook_active=False,
                            last_assistant_message="Done for now."), root)
    assert stop.returncode == 0 and stop.stdout == ""
    applied = _wait_for(root, "decision_applied")
    assert applied["decision_id"] == "fallback"
