"""Claude Code supervised end to end: the real CLI (pinned), the supervisor's hooks installed by
`supervisor install claude-code --project`, a scripted model. Each scenario asserts on what the
MODEL received (the fake API's logged requests) and on what the store recorded (issue 13).

Holds are kept short with a small `[guard] escalation_deadline_s` in the store's policy.
"""

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_cli.claude_runner import ClaudeCode, ClaudeRun
from tests.agent_cli.script import Script, Text, ToolCall, Turn, say, turn
from tests.hookd_helpers import stop_servers

FOO = "def add(a, b):\n    return a - b\n"
CHECK = 'python3 -c "from foo import add; assert add(2, 3) == 5, add(2, 3)"'
SUPERVISOR = "Agent Supervisor: "
QUICK_POLICY = "[guard]\ncheckpoints = false\nescalation_deadline_s = {hold}\nfallback = 'skip'\n"


@pytest.fixture(autouse=True)
def _no_servers_left(sandbox: Any) -> Iterator[None]:
    """Every scenario stops the resident hook server it started."""
    yield
    stop_servers(sandbox.store)


def _project(claude: ClaudeCode, hold: float = 30) -> Path:
    """foo.py with its bug, committed; a policy with short holds and no checkpoints."""
    foo = claude.sandbox.write("foo.py", FOO)
    claude.sandbox.commit("add foo")
    claude.sandbox.write_policy(QUICK_POLICY.format(hold=hold))
    return foo


def _events(claude: ClaudeCode, run: ClaudeRun | None = None, session: str | None = None,
            kind: str | None = None) -> list[dict[str, Any]]:
    sid = session or (run.session_id if run else None)
    assert sid, "no session id"
    found = claude.sandbox.events(sid)
    return [e for e in found if kind is None or e["type"] == kind]


def _wait_for_event(claude: ClaudeCode, kind: str, timeout: float = 90) -> tuple[str, dict]:
    """(session, event) of the first `kind` event any session of the store records."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for session, events in claude.sandbox.all_events().items():
            for event in events:
                if event["type"] == kind:
                    return session, event
        time.sleep(0.1)
    raise AssertionError(f"no {kind} event within {timeout} s")


def _failing_bash(times: int, then: str = "Stopping here.") -> Script:
    return Script(main=[turn(Text(f"Try {i + 1}."), ToolCall("Bash", {
        "command": CHECK, "description": "check add"})) for i in range(times)] + [say(then)])


def _denied(result_text: str) -> bool:
    return result_text.startswith(f"PreToolUse:Bash hook error: {SUPERVISOR}") or (
        "hook error" in result_text and SUPERVISOR in result_text)


# -- a loop the hooks cannot see before it runs ---------------------------------------------------

def test_the_same_failing_edit_is_recorded_answered_and_stopped(claude: ClaudeCode) -> None:
    foo = _project(claude)
    edit = {"file_path": str(foo), "old_string": "return a + c", "new_string": "return a + b"}
    claude.server.script = Script(main=[turn(ToolCall("Read", {"file_path": str(foo)}))] + [
        turn(Text(f"Attempt {i + 1}."), ToolCall("Edit", edit)) for i in range(6)
    ] + [say("Giving up.")])

    run = claude.run("fix foo.py")

    assert run.returncode == 0, run.describe()
    # Claude Code refused every Edit before PreToolUse; PostToolBatch recorded each as a failure
    calls = [c for c in _events(claude, run, kind="tool_call") if c["tool"] == "Edit"]
    results = {r["call_id"]: r for r in _events(claude, run, kind="tool_result")}
    assert len(calls) >= 3
    for call in calls:
        outcome = results[call["call_id"]]
        assert outcome["ok"] is False
        assert outcome["error"].startswith("String to replace not found in file.")
        assert "<tool_use_error>" not in outcome["error"]
    assert len({c["call_id"] for c in calls}) == len(calls)  # never recorded twice
    # the supervisor's text reached the model before its 4th attempt ...
    attempts = [r for r in claude.server.tool_results() if "String to replace" in r.text]
    assert len(attempts) <= 3
    assert claude.server.received(f"PostToolBatch hook additional context: {SUPERVISOR}Loop")
    # ... and the third identical failure ended the turn (the run, with -p): a block
    verdicts = [v["action"] for v in _events(claude, run, kind="verdict")]
    assert verdicts[-1] == "block", verdicts
    assert run.result.get("terminal_reason") == "hook_stopped", run.describe()
    shown = [m["content"] for m in run.of_type("system", "informational")]
    assert any("supervisor: block: Blocked" in text for text in shown), shown


# -- a loop denied before it runs, then held for the operator ------------------------------------

ANSWERS = {
    # answer: (the `supervisor answer` options, what the model must receive)
    "guidance": (("--guidance", "Look at foo.py line 2: it subtracts."),
                 "Look at foo.py line 2: it subtracts."),
    "skip": (("--skip",), "The operator skipped this task"),
    "abort": (("--abort",), None),  # the session stops: the model gets no further turn
    "approve": (("--approve",), "AssertionError: -1"),  # it ran
}


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_a_failing_bash_loop_is_denied_then_held_and_answered(
    claude: ClaudeCode, answer: str
) -> None:
    _project(claude, hold=60)
    claude.server.script = _failing_bash(8)

    running = claude.start("make the check pass")
    try:
        session, escalation = _wait_for_event(claude, "escalation")
        options, expected = ANSWERS[answer]
        done = claude.sandbox.supervisor("answer", session, *options, "--operator", "ana")
        assert done.returncode == 0, done.stderr
        run = running.wait()
    finally:
        running.kill()

    results = claude.server.tool_results()
    # three real failures (one retry of a failure is legitimate: the rubric's three
    # occurrences), then denials from the 4th identical call on
    assert [r.is_error for r in results[:3]] == [True, True, True]
    assert "AssertionError: -1" in results[0].text
    assert not _denied(results[2].text), results[2].text
    assert all(_denied(r.text) for r in results[3:5]), [r.text[:120] for r in results]
    if expected is None:
        assert len(results) == 5
        assert run.result.get("terminal_reason") == "hook_stopped", run.describe()
        assert "operator aborted" in run.stdout, run.describe()
    else:  # the 6th call was held until the answer, which reached the model in its result
        assert expected in results[5].text, results[5].text
    applied = _events(claude, session=session, kind="decision_applied")
    assert applied and applied[0]["action"] == answer
    assert applied[0]["escalation_id"] == escalation["escalation_id"]
    if answer == "abort":
        assert _events(claude, session=session, kind="session_end")[0]["status"] == "aborted"
    if answer == "approve":
        assert claude.server.received(f"PreToolUse:Bash hook additional context: {SUPERVISOR}")


def test_an_unanswered_hold_gets_the_fallback_before_the_hook_timeout(
    claude: ClaudeCode,
) -> None:
    _project(claude, hold=3)
    claude.server.script = _failing_bash(6)

    run = claude.run("make the check pass")

    assert run.returncode == 0, run.describe()
    session = run.session_id
    [escalation] = _events(claude, session=session, kind="escalation")
    [applied] = _events(claude, session=session, kind="decision_applied")
    assert applied["decision_id"] == "fallback" and applied["action"] == "skip"
    waited = applied["ts"] - escalation["ts"]
    timeout = claude.settings()["hooks"]["PreToolUse"][0]["hooks"][0]["timeout"]
    assert 2.5 < waited < 10 < timeout
    results = claude.server.tool_results()
    assert len(results) == 6 and _denied(results[5].text)


# -- healthy work is left alone ----------------------------------------------------------------

def test_two_hundred_and_sixty_healthy_calls_in_one_prompt_are_never_held(
    claude: ClaudeCode,
) -> None:
    _project(claude)
    files = [claude.sandbox.write(f"pkg/mod_{i:03d}.py", f"VALUE_{i} = {i * 7}\n")
             for i in range(260)]
    claude.sandbox.commit("260 modules")
    turns: list[Turn] = []
    for start in range(0, 260, 5):
        batch = files[start:start + 5]
        turns.append(turn(Text(f"Reading modules {start} to {start + 4}."),
                          *(ToolCall("Read", {"file_path": str(f)}) for f in batch)))
    claude.server.script = Script(main=[*turns, say("Read all 260 modules.")])

    run = claude.run("read every module in pkg/", timeout=600)

    assert run.returncode == 0 and run.result.get("result") == "Read all 260 modules.", (
        run.describe())
    events = _events(claude, run)
    verdicts = [v for v in events if v["type"] == "verdict"]
    assert len(verdicts) == 260
    assert {v["action"] for v in verdicts} == {"allow"}
    assert not [e for e in events if e["type"] in ("escalation", "limit")]
    assert max(v["gauges"]["consecutive_tool_calls"] for v in verdicts) < 250
    results = claude.server.tool_results()
    assert len(results) == 260 and not any(r.is_error for r in results)


# -- the workspace and the engine ----------------------------------------------------------------

def test_a_file_changed_outside_the_agent_is_read_anew(claude: ClaudeCode) -> None:
    foo = _project(claude)
    claude.server.script = Script(main=[
        turn(Text("Reading."), ToolCall("Read", {"file_path": str(foo)})),
        turn(Text("Reading again."), ToolCall("Read", {"file_path": str(foo)})),
        say("Read it twice."),
    ])
    respond = claude.server.respond

    def edit_between_the_reads(request: Any) -> Any:
        body = request.body if isinstance(request.body, dict) else {}
        done = sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
        if body.get("tools") and done == 1 and "a - b" in foo.read_text():
            foo.write_text("def add(a, b):\n    return a + b  # fixed by the user\n")
        return respond(request)

    claude.server.respond = edit_between_the_reads  # type: ignore[method-assign]
    run = claude.run("read foo.py twice")

    assert run.returncode == 0, run.describe()
    results = claude.server.tool_results()
    assert "return a - b" in results[0].text
    assert "fixed by the user" in results[1].text, results[1].text
    verdicts = [v["action"] for v in _events(claude, run, kind="verdict")]
    assert verdicts == ["allow", "allow"]


def test_an_edit_undone_and_redone_is_detected(claude: ClaudeCode) -> None:
    foo = _project(claude)
    a_to_b = {"file_path": str(foo), "old_string": "return a - b", "new_string": "return b - a"}
    b_to_a = {"file_path": str(foo), "old_string": "return b - a", "new_string": "return a - b"}
    run_check = {"command": CHECK, "description": "check add"}
    turns = []
    for i in range(4):
        turns.append(turn(Text(f"Edit {2 * i + 1}."), ToolCall("Edit", a_to_b)))
        turns.append(turn(Text("Check."), ToolCall("Bash", run_check)))
        turns.append(turn(Text(f"Edit {2 * i + 2}."), ToolCall("Edit", b_to_a)))
        turns.append(turn(Text("Check."), ToolCall("Bash", run_check)))
    claude.server.script = Script(main=[turn(ToolCall("Read", {"file_path": str(foo)})),
                                        *turns, say("Stopping.")])

    run = claude.run("fix foo.py")

    events = _events(claude, run)
    edits = [e["seq"] for e in events if e["type"] == "tool_call" and e["tool"] == "Edit"]
    detections = [e for e in events if e["type"] == "detection" and e["level"] >= 1]
    assert detections and detections[0]["seq"] < edits[5] + 3, (edits, detections)


# -- subagents and parallel calls ----------------------------------------------------------------

def test_a_subagent_looping_is_detected_in_its_own_session(claude: ClaudeCode) -> None:
    _project(claude)
    task = "Check foo.add in a subagent"
    claude.server.script = Script(
        main=[turn(Text("Delegating."), ToolCall("Agent", {
                   "description": "check foo", "prompt": task,
                   "subagent_type": "general-purpose"})),
              say("The subagent is done.")],
        others={task: [turn(ToolCall("Bash", {"command": CHECK, "description": "check"}))
                       for _ in range(4)] + [say("Subagent: the check fails every time.")]},
    )

    run = claude.run("check foo.py with a subagent")

    assert run.returncode == 0, run.describe()
    parent = run.session_id
    assert parent
    children = [s for s in claude.sandbox.sessions() if s.startswith(f"{parent}.sub-")]
    assert len(children) == 1, claude.sandbox.sessions()
    child = _events(claude, session=children[0])
    assert child[0]["agent"].startswith("claude-code:") and child[0]["parent_session"] == parent
    assert [e for e in child if e["type"] == "detection"]
    assert any(v["action"] == "block" for v in child if v["type"] == "verdict")
    # the parent's own log holds the Agent call and the link, not the subagent's calls
    parent_events = _events(claude, session=parent)
    assert [c["tool"] for c in parent_events if c["type"] == "tool_call"] == ["Agent"]
    assert [e["session"] for e in parent_events if e["type"] == "subagent_start"] == children
    sub_results = claude.server.tool_results(task)
    assert any(_denied(r.text) for r in sub_results), [r.text[:100] for r in sub_results]


def test_parallel_calls_in_one_turn_are_each_recorded_once(claude: ClaudeCode) -> None:
    _project(claude)
    names = [claude.sandbox.write(f"m{i}.py", f"X = {i}\n") for i in range(6)]
    claude.sandbox.commit("modules")
    claude.server.script = Script(main=[
        turn(Text("All at once."), *(ToolCall("Read", {"file_path": str(n)}) for n in names),
             ToolCall("Bash", {"command": "ls", "description": "list"})),
        say("Read them all."),
    ])

    run = claude.run("read the modules")

    assert run.returncode == 0, run.describe()
    events = _events(claude, run)
    seqs = [e["seq"] for e in events]
    assert seqs == list(range(1, len(events) + 1))
    model_ids = sorted(r.tool_use_id for r in claude.server.tool_results())
    for kind in ("tool_call", "verdict", "tool_result"):
        assert sorted(e["call_id"] for e in events if e["type"] == kind) == model_ids, kind


def test_guidance_sent_while_the_agent_works_reaches_it_at_stop(claude: ClaudeCode) -> None:
    from supervisor.operator.send import send_decision

    _project(claude)
    claude.server.script = Script(main=[
        turn(Text("Running a slow check."), ToolCall("Bash", {
            "command": "sleep 3", "description": "wait"})),
        say("Done, I think."),
        say("Following the operator's guidance now."),
    ])
    running = claude.start("check things")
    try:
        session, _ = _wait_for_event(claude, "tool_call")
        send_decision(claude.sandbox.store, session, "guidance", operator="ana",
                      text="Also run the linter before you stop.")
        run = running.wait()
    finally:
        running.kill()

    assert run.returncode == 0, run.describe()
    # Stop answered with the guidance as added context: the model got another turn with it
    assert claude.server.received("Also run the linter before you stop.")
    assert run.result.get("result") == "Following the operator's guidance now.", run.describe()
    assert "blocking error" not in json.dumps([r.body for r in claude.server.conversation()])
    applied = _events(claude, session=session, kind="decision_applied")
    assert [a["action"] for a in applied] == ["guidance"]


# -- the HTTP transport ---------------------------------------------------------------------------

def test_over_http_a_failing_bash_loop_is_denied_held_and_answered(claude: ClaudeCode) -> None:
    claude.install_hooks("--transport", "http")
    _project(claude, hold=60)
    claude.server.script = _failing_bash(8)

    running = claude.start("make the check pass")
    try:
        session, _ = _wait_for_event(claude, "escalation")
        done = claude.sandbox.supervisor("answer", session, "--guidance", "Read foo.py first.")
        assert done.returncode == 0, done.stderr
        run = running.wait()
    finally:
        running.kill()

    assert run.returncode == 0, run.describe()
    results = claude.server.tool_results()
    assert all("AssertionError: -1" in r.text for r in results[:3])
    assert all(_denied(r.text) for r in results[3:5]), [r.text[:120] for r in results]
    assert "Read foo.py first." in results[5].text
    verdicts = [v["action"] for v in _events(claude, session=session, kind="verdict")]
    assert verdicts[:6] == ["allow", "allow", "allow", "block", "block", "pause"]
    log = (claude.sandbox.store / "run" / "hookd.log").read_text()
    assert "serving HTTP hooks on 127.0.0.1:" in log


def test_over_http_calls_made_while_the_server_is_unreachable_go_on_with_a_warning(
    claude: ClaudeCode,
) -> None:
    """What Claude Code 2.1.330 does when an HTTP hook's endpoint is down: the call runs
    unchecked and the user is warned; the model is told nothing (docs/claude-code.md)."""
    from supervisor.hooks.http_transport import ensure_config, load_config

    claude.install_hooks("--transport", "http")
    store = claude.sandbox.store
    installed = load_config(store)
    assert installed is not None
    ensure_config(store, port=installed.port + 1 if installed.port < 65535 else 1025)
    _project(claude)
    claude.server.script = Script(main=[
        turn(ToolCall("Bash", {"command": "echo ran > ran.txt", "description": "write"})),
        say("Wrote it."),
    ])

    run = claude.run("write ran.txt")

    assert run.returncode == 0, run.describe()
    assert (claude.sandbox.work / "ran.txt").exists()  # fail-open: the call ran
    warned = [m for m in run.of_type("system", "informational")
              if m.get("tag") == "hook_no_verdict"]
    assert warned and "didn't check this action" in warned[0]["content"]
    [result] = claude.server.tool_results()
    assert not result.is_error and "hook" not in result.text
    events = _events(claude, run)
    assert events[0]["type"] == "session_start"  # the command hooks still work
    assert not [e for e in events if e["type"] == "tool_call"]  # the call went unsupervised



def test_parallel_calls_of_one_answer_are_one_batch_never_two(claude: ClaudeCode) -> None:
    """Claude Code writes each call of an answer to its transcript as it streams in and runs
    their hooks meanwhile: a call whose line is there when its hook reads the transcript
    carries the answer's id as its batch, the others none (in quiet runs most hooks run before
    the line is written: 2 of 6 here, or none). So this holds whatever the timing: the calls of
    one answer never carry two batches, and a call of the next answer never carries theirs."""
    _project(claude)
    names = [claude.sandbox.write(f"m{i}.py", f"X = {i}\n") for i in range(6)]
    claude.sandbox.commit("modules")
    claude.server.script = Script(main=[
        turn(Text("All at once."), *(ToolCall("Read", {"file_path": str(n)}) for n in names)),
        turn(Text("One more."), ToolCall("Bash", {"command": "ls", "description": "list"})),
        say("Read them all."),
    ])

    run = claude.run("read the modules")

    assert run.returncode == 0, run.describe()
    calls = _events(claude, run, kind="tool_call")
    assert [c["tool"] for c in calls].count("Read") == 6, calls
    reads = {c.get("batch") for c in calls if c["tool"] == "Read"} - {None}
    assert len(reads) <= 1 and all(b.startswith("msg_") for b in reads), calls
    bash = [c.get("batch") for c in calls if c["tool"] == "Bash"]
    assert len(bash) == 1 and (bash[0] is None or bash[0] not in reads), calls
