"""Sessions with a person in the loop (issue 35): what an interactive Claude Code or Codex
session does that is not a loop. Sub-agent fan-out answered by one acknowledgement, a user who
asks for the same check again."""

import json
from typing import Any

from supervisor.engine import Engine, Finding, Policy

ACK = ("Async agent launched successfully.\nagentId: a{:06x} (internal ID - do not mention to "
       "user.)\nThe agent is working in the background. You will be notified automatically "
       "when it completes.\nContinue with other tasks.\noutput_file: /tmp/claude/{:06x}.output")
PROMPT = ("Apply the specification in docs/spec.md to the document {}: keep its front matter, "
          "rewrite the sections that the specification lists, and report what you changed.")


def _run(engine: Engine, i: int, tool: str, args: dict[str, Any], output: str,
         ok: bool = True, now: float = 1.0) -> tuple[str, list[Finding]]:
    call = {"call_id": f"c{i}", "tool": tool, "args": args}
    check = engine.check(call, now)
    found = engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": ok,
                            "output": output, "seq": 2 * i + 2}, now)
    return check.action, [*check.findings, *found]


def test_a_fan_out_of_sub_agents_answered_alike_is_no_loop() -> None:
    engine = Engine()
    for i in range(18):
        args = {"description": f"doc {i}", "subagent_type": "general-purpose",
                "prompt": PROMPT.format(f"docs/part-{i}.md"), "run_in_background": True}
        action, found = _run(engine, i, "Task", args, ACK.format(i * 7919, i))
        assert (action, found) == ("allow", []), i
    assert engine.level == 0


def test_the_same_launch_again_and_again_is_still_a_repeat() -> None:
    engine = Engine()
    args = {"subagent_type": "general-purpose", "prompt": PROMPT.format("docs/a.md"),
            "run_in_background": True}
    seen = [f.detector for i in range(5) for f in _run(engine, i, "Task", args,
                                                       ACK.format(i, i))[1]]
    assert "exact_repeat" in seen


def test_polls_of_a_sub_agent_still_at_work_are_polls() -> None:
    engine = Engine()
    for i in range(8):
        action, found = _run(engine, i, "TaskOutput", {"task_id": "a1b2c3"},
                             "<status>running</status>", now=1.0 + 30 * i)
        assert (action, found) == ("allow", []), i


def test_a_user_turn_is_a_new_task() -> None:
    engine = Engine(Policy.from_dict({"limits": {"actions_per_task": {"limit": 5,
                                                                      "action": "pause"}}}))
    fail = "FAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed"
    found = []
    for turn in range(4):  # the person asks for the same run again, four times
        engine.observe({"type": "message", "role": "user", "text": "run the tests again"},
                       10.0 * turn)
        for i in range(3):
            action, more = _run(engine, 3 * turn + i, "Bash", {"command": "pytest -q"} if i == 0
                                else {"command": f"cat src/{turn}_{i}.py"}, fail if i == 0
                                else f"print({turn}, {i})", ok=i != 0, now=10.0 * turn + i)
            assert action == "allow"
            found += more
    assert found == [] and engine.level == 0
    assert next(g.value for g in engine.gauges(40.0) if g.name == "actions_per_task") == 3


NOT_FOUND = ("<tool_use_error>String to replace not found in file.\nString: {}"
             "</tool_use_error>")


def _failed_edits(looks: list[tuple[str, dict[str, Any], str]]) -> list[str]:
    """Four failed edits of app.py, each with another anchor, a look at the file before each
    of the last three; the detectors that fired."""
    engine = Engine()
    engine.observe({"type": "message", "role": "user", "text": "fix the header"}, 0.0)
    _run(engine, 0, "Read", {"file_path": "/w/app.py"}, "1\tdef a():\n2\t\treturn 1\n")
    found: list[str] = []
    i = 1
    for n, anchor in enumerate(["def a():\n    return 1", "    return 1", "return 1",
                                "a():\n\t\treturn"]):
        if n:
            tool, args, output = looks[n - 1]
            found += [f.detector for f in _run(engine, i, tool, args, output)[1]]
            i += 1
        _, more = _run(engine, i, "Edit", {"file_path": "/w/app.py", "old_string": anchor,
                                           "new_string": "x"},
                            NOT_FOUND.format(anchor), ok=False)
        found += [f.detector for f in more]
        i += 1
    return found


def test_failed_edits_with_new_looks_at_the_file_between_them_are_investigation() -> None:
    looks = [("Bash", {"command": "cat -A /w/app.py"}, "def a():$\n^I^Ireturn 1$\n"),
             ("Bash", {"command": "xxd /w/app.py"}, "00000000: 6465 6620 6128 293a  def a():"),
             ("Read", {"file_path": "/w/app.py", "offset": 2}, "2\t\treturn 1\n")]
    assert _failed_edits(looks) == []


def test_failed_edits_with_the_same_look_between_them_still_recur() -> None:
    same = ("Read", {"file_path": "/w/app.py"}, "1\tdef a():\n2\t\treturn 1\n")
    assert "recurring_error" in _failed_edits([same, same, same])


def test_a_tool_re_exposed_by_zeds_agent_client_protocol_is_the_agents_own() -> None:
    """`mcp__acp__Bash` is Claude Code's Bash; its `Timed out. New output:` is a failure: a
    commit that hangs on a prompt five times, phrased five ways, recurs."""
    engine = Engine()
    found: list[str] = []
    for i, how in enumerate(["git commit -m a", "git commit -m b", "git commit -m 'a b'",
                             "echo n | git commit -m a", "GIT_EDITOR=true git commit -m a"]):
        action, more = _run(engine, i, "mcp__acp__Bash", {"command": how},
                            "Timed out. New output:\n\nLink this commit to the session? [Y/n]")
        found += [f"{f.detector}:{f.action}" for f in more]
        assert action == ("block" if i == 4 else "allow"), i
    assert found == ["recurring_error:nudge", "recurring_error:block"]
    assert engine.facts("mcp__acp__Read", {"file_path": "/w/a.py"}).read_path == "/w/a.py"


TSC = ".next/dev/types/validator.ts(17,62): error TS1434: Unexpected keyword or identifier."


def test_runs_the_person_asked_for_are_not_the_agents_variations() -> None:
    """Held-out batch 6 (an OpenCode session): the person asked for three `tsc` variants "for
    good measure"; all three failed on one stale generated file. Asked for, they are not the
    agent varying one failing command: no nudge, and the agent's own next variant is not
    refused as the fourth."""
    engine = Engine()
    engine.observe({"type": "message", "role": "user", "seq": 1, "text": (
        "Now run `bun tsc -b`, `bun tsc --noEmit`, and `bun tsc -b --noEmit`. You know, why "
        "not run them all for good measure :P")}, 1.0)
    seen = []
    for i, cmd in enumerate(("bun tsc -b", "bun tsc --noEmit", "bun tsc -b --noEmit",
                             "bun tsc --noEmit --skipLibCheck")):
        action, found = _run(engine, i, "bash", {"command": cmd}, TSC, ok=False)
        seen += [action, *(f.detector for f in found)]
    assert seen == ["allow"] * 4
    # each line is asked for once: the agent's own reruns of them count as before
    found = [_run(engine, i, "bash", {"command": cmd}, TSC, ok=False)[1]
             for i, cmd in enumerate(("bun tsc -b", "bun tsc --noEmit"), start=4)]
    assert found[0] == [] and "recurring_error" in [f.detector for f in found[1]]


def test_without_the_persons_request_the_same_variants_are_a_recurring_error() -> None:
    engine = Engine()
    engine.observe({"type": "message", "role": "user", "seq": 1,
                    "text": "The build is broken after the upgrade; please make it pass."}, 1.0)
    seen = []
    for i, cmd in enumerate(("bun tsc -b", "bun tsc --noEmit", "bun tsc -b --noEmit",
                             "bun tsc --noEmit --skipLibCheck")):
        action, found = _run(engine, i, "bash", {"command": cmd}, TSC, ok=False)
        seen.append((action, [f.detector for f in found]))
    assert seen[2] == ("allow", ["recurring_error"]) and seen[3][0] == "block"


def _patch(path: str, lines: list[str]) -> dict[str, Any]:
    body = "\n".join(f"-{line}\n+{line.strip()}" for line in lines)
    return {"patchText": f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}\n*** End Patch"}


def test_a_patch_tool_names_its_file_so_a_new_look_at_it_is_investigation() -> None:
    """Held-out batch 6 (an OpenCode run): `apply_patch` (the patch in `patchText`) failed on
    one file, the agent re-read the file, two narrower patches failed, the fourth applied and
    was refused. Read as an edit of that file, its failures follow the rule every editor's
    follow: the re-read between them is a new look, and the count starts again."""
    engine = Engine()
    assert engine.facts("apply_patch", _patch("/w/src/view.ts", ["a"])).path == "/w/src/view.ts"
    found: list[str] = []
    err = ("apply_patch verification failed: Error: Failed to find expected lines in "
           "/w/src/view.ts:\n{}")
    steps = [("apply_patch", _patch("/w/src/view.ts", ["\t\t\tswitch (m) {", "\t\t\tcase 1:"]),
              err.format("\t\t\tswitch (m) {"), False),
             ("read", {"file_path": "/w/src/view.ts", "offset": 108}, "119: \t\tswitch (m) {",
              True),
             ("apply_patch", _patch("/w/src/view.ts", ["\t\t\tcase 1:", "\t\t\t\tgo();"]),
              err.format("\t\t\tcase 1:"), False),
             ("apply_patch", _patch("/w/src/view.ts", ["\t\t\t\tgo();"]),
              err.format("\t\t\t\tgo();"), False),
             ("apply_patch", _patch("/w/src/view.ts", ["\t\tswitch (m) {", "\t\tcase 1:"]),
              "Success. Updated the following files:\nM src/view.ts", True)]
    for i, (tool, args, output, ok) in enumerate(steps):
        action, more = _run(engine, i, tool, args, output, ok=ok)
        found += [action, *(f.detector for f in more)]
    assert found == ["allow"] * 5
    # without the look, the same three failures recur, and the fourth patch is refused
    engine = Engine()
    found = []
    for i, (tool, args, output, ok) in enumerate(steps[:1] + steps[2:]):
        action, more = _run(engine, i, tool, args, output, ok=ok)
        found += [action, *(f.detector for f in more)]
    assert found[-4:] == ["allow", "recurring_error", "block", "recurring_error"]


def test_the_persons_request_survives_a_snapshot_between_hook_calls() -> None:
    """A hook target restores the engine, applies one event and saves it: the prompt arrives
    in one process, the runs it asked for in others."""
    engine = Engine()
    engine.observe({"type": "message", "role": "user", "seq": 1,
                    "text": "Run `bun tsc -b`, `bun tsc --noEmit` and `bun tsc -b --noEmit`."}, 1.0)
    seen = []
    for i, cmd in enumerate(("bun tsc -b", "bun tsc --noEmit", "bun tsc -b --noEmit",
                             "bun tsc --noEmit --skipLibCheck")):
        engine = Engine.restore(json.loads(json.dumps(engine.snapshot())))
        action, found = _run(engine, i, "bash", {"command": cmd}, TSC, ok=False)
        seen += [action, *(f.detector for f in found)]
    assert seen == ["allow"] * 4


def _codex_policy(cycle: int) -> Policy:
    import supervisor.importers.codex  # noqa: F401  (contributes Codex's tool names)

    return Policy.from_dict({"limits": {"iterations_per_cycle": {"limit": cycle,
                                                                  "action": "pause"}}})


def test_codex_write_stdin_without_input_is_a_poll_and_with_input_an_action() -> None:
    from supervisor.engine.categories import classify

    policy = _codex_policy(400)
    assert classify("write_stdin", {"session_id": 7, "chars": "", "yield_time_ms": 30000},
                    policy) == "poll"
    assert classify("write_stdin", {"session_id": 7, "chars": "y\n"}, policy) == "run"


def test_waiting_on_a_running_command_is_not_an_iteration_of_the_cycle() -> None:
    """A PR routine after one prompt: start the checks, poll them while they run (each poll
    shows more output), fix, start again. Ten actions fit a cycle of ten; the sixty polls
    between them are waits, not iterations, so the cycle is not paused for them."""
    engine = Engine(_codex_policy(10))
    engine.observe({"type": "message", "role": "user", "text": "push it and watch CI"}, 0.0)
    i = 0
    for round_ in range(5):
        action, found = _run(engine, i, "exec_command", {"cmd": f"cargo xci --round {round_}"},
                             "Process running with session ID 7", now=float(i))
        i += 1
        assert action == "allow" and found == [], (round_, found)
        for poll in range(12):
            action, found = _run(engine, i, "write_stdin",
                                 {"session_id": 7, "chars": "", "yield_time_ms": 30000},
                                 f"test t{round_}_{poll} ... ok", now=float(i))
            i += 1
            assert action == "allow" and found == [], (round_, poll, found)
        action, found = _run(engine, i, "apply_patch",
                             {"input": f"*** Begin Patch\n*** Update File: a{round_}.rs\n"
                                       f"@@\n-x\n+y{round_}\n*** End Patch"},
                             "Success. Updated the following files:\nM a.rs", now=float(i))
        i += 1
        assert action == "allow" and found == [], (round_, found)
    # the eleventh action of the cycle is one too many, as before
    check = engine.check({"call_id": "last", "tool": "exec_command",
                          "args": {"cmd": "git push"}}, float(i))
    assert check.action == "pause" and "iterations_per_cycle" in check.reason


RUNNING = ('{\n  "success": true,\n  "status": "running",\n  "taskId": "job-{}",\n'
           '  "message": "Work in progress. Continue polling..."\n}')


def test_a_status_that_says_still_running_is_a_poll_not_a_repeat() -> None:
    """An asynchronous job started, then checked by its id until it is done: the same check
    with the same "still running" answer is waiting, not the agent repeating itself (the
    seventh and eighth checks were refused, and the eighth was the answer)."""
    engine = Engine()
    _run(engine, 0, "mcp__jobs__start", {"instructions": "survey the literature"},
         '{"success": true, "taskId": "job-7"}')
    for i in range(1, 9):
        action, found = _run(engine, i, "mcp__jobs__check", {"taskId": "job-7"},
                             RUNNING.replace("{}", "7"), now=9.0 * i)
        assert (action, found) == ("allow", []), i
    action, found = _run(engine, 9, "mcp__jobs__check", {"taskId": "job-7"},
                         '{"success": true, "status": "completed", "report": "..."}', now=90.0)
    assert (action, found) == ("allow", [])


def test_a_job_that_stays_running_is_judged_as_a_poll_that_sees_nothing_new() -> None:
    engine = Engine()
    seen = [f.detector for i in range(14) for f in _run(
        engine, i, "mcp__jobs__check", {"taskId": "job-7"}, RUNNING.replace("{}", "7"),
        now=5.0 * i)[1]]
    assert seen and set(seen) == {"polling"}


def test_the_same_finished_answer_again_is_still_a_repeat() -> None:
    engine = Engine()
    done = '{"success": true, "status": "completed", "report": "the same report"}'
    seen = [f.detector for i in range(4) for f in _run(
        engine, i, "mcp__jobs__check", {"taskId": "job-7"}, done, now=5.0 * i)[1]]
    assert "exact_repeat" in seen


WAIT_TIMED_OUT = '{"message":"Wait timed out.","timed_out":true}'


def test_a_codex_wait_agent_that_times_out_is_waiting_not_a_failure() -> None:
    """Batch 9's `codex exec` review: two reviewer sub-agents spawned, then `wait_agent`
    answered "Wait timed out" three times while they worked, read as three failures of one
    call: `recurring_error` refused the fourth wait, the one that completed. A wait whose time
    ran out saw the work still running (a poll); a wait that never ends is `polling`'s."""
    engine = Engine(_codex_policy(400))
    engine.observe({"type": "message", "role": "user", "text": "review the staged change"}, 0.0)
    steps = [("wait_agent", {"timeout_ms": 10000}, WAIT_TIMED_OUT),
             ("exec_command", {"cmd": "uv build --help | sed -n '1,90p'"}, "Usage: uv build"),
             ("wait_agent", {"timeout_ms": 20000}, WAIT_TIMED_OUT),
             ("list_agents", {}, '{"agents":[{"agent_name":"/root/review",'
                                 '"agent_status":"running"}]}'),
             ("wait_agent", {"timeout_ms": 30000}, WAIT_TIMED_OUT),
             ("exec_command", {"cmd": "rg -n 'sdist' README.md"}, "README.md:4: sdist"),
             ("wait_agent", {"timeout_ms": 30000}, '{"message":"Wait completed.",'
                                                   '"timed_out":false}')]
    for i, (tool, args, output) in enumerate(steps):
        action, found = _run(engine, i, tool, args, output, now=20.0 * i)
        assert (action, found) == ("allow", []), (i, found)
    assert engine.st.counters["errors"] == 0
    stuck = Engine(_codex_policy(400))
    detectors = set()
    for i in range(16):
        action, found = _run(stuck, i, "wait_agent", {"timeout_ms": 30000}, WAIT_TIMED_OUT,
                             now=30.0 * i)
        detectors |= {f.detector for f in found}
    assert detectors == {"polling"} and action == "block"


def test_a_time_out_is_still_a_failure_of_a_call_that_is_no_wait() -> None:
    """Only a poll's "timed out" is waiting: a command that timed out failed."""
    engine = Engine(_codex_policy(400))
    for i in range(3):
        _run(engine, i, "exec_command", {"cmd": f"pytest -q tests/t{i}.py"}, "Wait timed out.",
             now=float(i))
    assert engine.st.counters["errors"] == 3
