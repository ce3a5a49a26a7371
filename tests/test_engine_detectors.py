"""Each detector on a positive case and on the traps it must stay quiet on."""

import random

import pytest

from supervisor.engine import Engine, Policy
from tests.data.devset import generate as gen
from tests.engine_helpers import SessionBuilder, alarms, detectors, replay

NOT_FOUND = "cat: missing.txt: No such file or directory"


def _work(b: SessionBuilder, n: int = 6) -> None:
    gen.normal_work(b, random.Random(n), n)


# --- exact repeat ---------------------------------------------------------------------------

def test_exact_repeat_of_a_failure_nudges_then_blocks_then_escalates() -> None:
    b = SessionBuilder()
    _work(b)
    steps = [b.call("Bash", {"command": "cat missing.txt"}, NOT_FOUND, ok=False) for _ in range(6)]
    report = replay(b.end())
    got = alarms(report)
    # the rubric's three occurrences: one retry of a failure is not a loop
    assert got[0] == (steps[2], "exact_repeat", "nudge")
    assert (steps[3], "exact_repeat", "block") in got
    assert report.first == {"nudge": steps[2], "block": steps[3], "escalate": steps[5],
                            "stop": None}
    # the first nudge is a recovery turn: the call, the error line it kept giving, the
    # unchanged workspace, and the advice for that error, cited as the model knows them (the
    # call and how often: never the supervisor's event numbers)
    message = report.findings[0].message
    assert message.startswith("Loop: step back. Your last 3 reads did not get you further.")
    assert 'cat missing.txt"} (3 times, the same call each time)' in message
    assert "#" not in message
    assert "each failed with “cat: missing.txt: No such file or directory”" in message
    assert "no file changed between them" in message
    assert "list the directory or search" in message


def test_exact_repeat_with_same_output_nudges_at_the_third() -> None:
    b = SessionBuilder()
    _work(b)
    steps = [b.call("Grep", {"pattern": "Config", "path": "."}, "a.py:1:class Config:")
             for _ in range(3)]
    report = replay(b.end())
    assert alarms(report) == [(steps[2], "exact_repeat", "nudge")]


def test_an_interleaved_call_does_not_hide_the_repeat() -> None:
    b = SessionBuilder()
    _work(b)
    first = []
    for k in range(4):
        first.append(b.call("Bash", {"command": "make"}, "make: *** [all] Error 1", ok=False))
        b.call("Bash", {"command": f"ls dir{k}"}, f"file{k}.c")
    report = replay(b.end())
    assert (first[2], "exact_repeat", "nudge") in alarms(report)
    assert (first[3], "exact_repeat", "block") in alarms(report)


def test_asking_again_after_waiting_is_polling_not_a_repeat() -> None:
    """A person's agent waits for a reviewer: `sleep 120`, then the same two queries, which
    answer `[]` until the review comes (a held-out Codex session was blocked doing this). The
    same queries without the waits are a repeat, and so is a failing command re-run after a
    wait that is not between its occurrences."""
    reactions = {"repo": "o/r", "pr_number": 676}
    b = SessionBuilder()
    _work(b)
    for _ in range(6):
        b.call("Bash", {"command": "sleep 120"}, "")
        b.call("mcp__github__get_pr_reactions", reactions, '{"reactions":[]}')
        b.call("mcp__github__list_review_threads", reactions, '{"review_threads":[]}')
    assert "exact_repeat" not in detectors(replay(b.end()))
    b = SessionBuilder()
    _work(b)
    b.call("Bash", {"command": "sleep 120"}, "")
    asked = [b.call("mcp__github__get_pr_reactions", reactions, '{"reactions":[]}')
             for _ in range(4)]
    report = replay(b.end())
    assert (asked[2], "exact_repeat", "nudge") in alarms(report)
    assert (asked[3], "exact_repeat", "block") in alarms(report)


def test_key_order_and_whitespace_do_not_make_a_call_new() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "ls   -la  /x", "description": "list"}, "a", ok=True)
    b.call("Bash", {"description": "look again", "command": "ls -la /x "}, "a", ok=True)
    b.call("Bash", {"command": "ls -la /x"}, "a", ok=True)
    assert detectors(replay(b.end())) == ["exact_repeat"]


def test_repeat_after_a_workspace_change_is_not_a_loop() -> None:
    """The trap: re-running the same failing test after each real edit that changes what
    it says (the same output after every edit is an ineffective-edits loop instead)."""
    b = SessionBuilder()
    for k in range(6):
        b.call("Edit", {"file_path": "/r/a.py", "old_string": f"{k}", "new_string": f"{k + 1}"},
               "The file has been updated.")
        b.call("Bash", {"command": "pytest -q"}, f"FAILED test_a - assert {k} == 9\n1 failed",
               ok=False)
    assert detectors(replay(b.end())) == []


def test_output_noise_does_not_hide_a_repeat() -> None:
    b = SessionBuilder()
    for k in range(3):
        b.call("Bash", {"command": "pytest -q"},
               f"\x1b[31mFAILED\x1b[0m test_x at 2024-05-0{k + 1}T10:1{k}:00Z in {k}.{k}3s "
               f"pid {1000 + k} obj at 0x7f{k}a9c tmp /tmp/pytest-{k}/x", ok=False)
    assert "exact_repeat" in detectors(replay(b.end()))


# --- similar calls --------------------------------------------------------------------------

def test_near_identical_calls_with_the_same_output_are_a_loop() -> None:
    b = SessionBuilder()
    _work(b)
    steps = [b.call("Bash", {"command": f"curl -s -F 'file=@shell{k}.php' http://h/up.php"},
                    "Only images allowed") for k in range(8)]
    report = replay(b.end())
    found = [a for a in alarms(report) if a[1] == "similar_calls"]
    assert found[0] == (steps[4], "similar_calls", "nudge")
    # similarity is moderate evidence: it nudges, it never blocks or escalates
    assert all(a[2] == "nudge" for a in found) and len(found) > 1
    assert "(Evidence: moderate, " in report.findings[-1].message


def test_near_identical_calls_issued_in_one_turn_count_once() -> None:
    """Five status queries for five pull requests sent together (a real interactive session):
    none saw another's answer, so they are one decision, not five tries."""
    b = SessionBuilder()
    _work(b)
    for k in range(8):
        b.call("Bash", {"command": f"gh pr view {k} --json statusCheckRollup"},
               '{"statusCheckRollup":[]}', batch="turn-1")
    assert "similar_calls" not in detectors(replay(b.end()))


def test_similar_searches_for_different_names_are_not_a_loop() -> None:
    b = SessionBuilder()
    for k in range(10):
        b.call("Grep", {"pattern": f"def get_user_{k}"}, f"src/u{k}.py:3:def get_user_{k}():")
    assert detectors(replay(b.end())) == []


def test_similar_file_moves_are_not_a_loop() -> None:
    b = SessionBuilder()
    for k in range(10):
        b.call("Bash", {"command": f"mv src/a_{k}.py src/b_{k}.py"}, "")
    assert detectors(replay(b.end())) == []


# --- cycles ---------------------------------------------------------------------------------

@pytest.mark.parametrize("period", [2, 3, 5])
def test_cycles_of_several_calls_are_found(period: int) -> None:
    b = SessionBuilder()
    _work(b)
    steps = []
    for _ in range(4):
        for j in range(period):
            steps.append(b.call("Bash", {"command": f"step{j} --check"}, f"state {j}"))
    report = replay(b.end())
    found = [a for a in alarms(report) if a[1] == "cycle"]
    assert found, alarms(report)
    need = max(2 * period + 1, 5)  # the cycle's third occurrence has begun
    assert found[0][0] == steps[need - 1]
    assert found[0][2] == "nudge"
    # the next repetition is refused (period 2 is also an interleaved exact repeat)
    assert any(a[2] == "block" for a in alarms(report))


def test_alternating_edits_that_change_things_are_not_a_cycle() -> None:
    b = SessionBuilder()
    for k in range(6):
        b.call("Read", {"file_path": "/r/a.py"}, f"content {k}")
        b.call("Edit", {"file_path": "/r/a.py", "old_string": "x", "new_string": "y"},
               "The file has been updated.")
    assert detectors(replay(b.end())) == []


# --- recurring error ------------------------------------------------------------------------

def test_the_same_error_with_varying_arguments_recurs() -> None:
    b = SessionBuilder()
    _work(b)
    olds = ["def parse(self):", "    return tokens", "class Parser:", "import os, sys"]
    steps = []
    for o in olds:
        steps.append(b.call("str_replace_editor", {"command": "str_replace", "path": "/r/p.py",
                                                    "old_str": o, "new_str": o + "#"},
                            f"No replacement was performed, old_str `{o}` did not appear "
                            "verbatim in /r/p.py.", ok=False))
        b.call("Bash", {"command": f"grep -n '{o[:5]}' /r/p.py"}, "")  # looks in between
    report = replay(b.end())
    found = [f for f in report.findings if f.detector == "recurring_error"]
    assert found[0].step == steps[2] and found[0].action == "nudge"
    assert found[0].message.startswith("Loop: step back. Your last 3 edits")
    assert "Tried: str_replace_editor /r/p.py (3 times, 3 different calls)" in (
        found[0].message)
    assert "each failed with “No replacement was performed, old_str <arg> did not appear" in (
        found[0].message)
    assert "re-read the exact lines" in found[0].message
    assert (steps[3], "recurring_error", "block") in alarms(report)


def test_different_missing_modules_are_different_errors() -> None:
    b = SessionBuilder()
    for name in ("asgiref", "pytz", "sqlparse", "pymysql"):
        b.call("Bash", {"command": f"pip install {name} -q"}, "", ok=True)
        b.call("Bash", {"command": "python test_issue.py"},
               f"Traceback (most recent call last):\nModuleNotFoundError: No module named "
               f"'{name}'", ok=False)
    assert "recurring_error" not in detectors(replay(b.end()))


def test_one_program_is_one_tool_and_a_success_of_it_ends_the_episode() -> None:
    b = SessionBuilder()
    err = "make: *** No rule to make target 'build/release'.  Stop."
    steps = [b.call("Bash", {"command": cmd}, err, ok=False)
             for cmd in ("make", "make clean && make", "rm -rf build && make")]
    report = replay(b.end())
    assert (steps[2], "recurring_error", "nudge") in alarms(report)
    b = SessionBuilder()
    b.call("Bash", {"command": "make"}, err, ok=False)
    b.call("Bash", {"command": "make -j2"}, err, ok=False)
    b.call("Bash", {"command": "make docs"}, "built docs", ok=True)  # make works again
    b.call("Bash", {"command": "make -k"}, err, ok=False)
    assert "recurring_error" not in detectors(replay(b.end()))


def test_new_scripts_reproducing_one_bug_are_investigation() -> None:
    """Each script the agent writes is a program of its own: reproducing one error with
    one new script after another is not a repetition of one attempt."""
    b = SessionBuilder()
    for k in range(4):
        b.call("Bash", {"command": f"python debug_{k}.py"},
               "Traceback (most recent call last):\nTypeError: argument of type 'property' "
               "is not iterable", ok=False)
    assert "recurring_error" not in detectors(replay(b.end()))


def test_a_time_out_the_harness_reports_is_the_shell_tools_own() -> None:
    b = SessionBuilder()
    steps = []
    for cmd in ("pip install numpy pandas", "pip install numpy", "conda install -y numpy"):
        steps.append(b.call("Bash", {"command": cmd}, "Collecting numpy\n", ok=False,
                            error=f"Command '['bash', '-c', '{cmd}']' timed out after 60 "
                                  "seconds"))
        b.call("Bash", {"command": "python -c 'import numpy'"}, "ModuleNotFoundError", ok=False)
    assert (steps[2], "recurring_error", "nudge") in alarms(replay(b.end()))


def test_a_batch_of_parallel_calls_counts_once() -> None:
    b = SessionBuilder()
    err = "Error: ENOENT: no such file or directory, open 'config.yml'"
    for k in range(3):  # one model turn, three parallel reads that fail alike
        b.call("Read", {"file_path": f"/r/config{k}.yml"}, err, ok=False, batch="turn-1")
    assert "recurring_error" not in detectors(replay(b.end()))


def test_failures_outside_the_window_do_not_add_up() -> None:
    b = SessionBuilder()
    for k in range(3):
        b.call("Bash", {"command": f"npm run build -- --mode m{k}"}, "Error: Cannot find "
               "module 'webpack'", ok=False)
        _work(b, 25)  # a long stretch of other work in between
    assert "recurring_error" not in detectors(replay(b.end()))


def test_a_rerun_after_a_shell_command_deleted_files_is_not_refused() -> None:
    # held-out batch 6 (an OpenCode session): three `tsc` variants failed on one stale
    # generated file, then a fourth; `rm -rf .next` removed it, and the check that would have
    # passed was refused as "one more variation" that "gives the same result unchanged"
    err = ".next/dev/types/validator.ts(17,62): error TS1434: Unexpected keyword or identifier."
    b = SessionBuilder()
    for cmd in ("npx tsc -b", "npx tsc --noEmit", "npx tsc -b --noEmit"):
        b.call("Bash", {"command": cmd}, err, ok=False)
    b.call("Read", {"file_path": "/r/.next/dev/types/validator.ts"}, "17: { AppRoutes }")
    b.call("Bash", {"command": "rm -rf .next"}, "")
    rerun = b.call("Bash", {"command": "npx tsc --noEmit"}, "")
    got = alarms(replay(b.end()))
    assert (2, "recurring_error", "nudge") in got
    assert not [a for a in got if a[0] == rerun]
    # with nothing changed since the last failure the same rerun is refused, as before
    b = SessionBuilder()
    for cmd in ("npx tsc -b", "npx tsc --noEmit", "npx tsc -b --noEmit"):
        b.call("Bash", {"command": cmd}, err, ok=False)
    b.call("Read", {"file_path": "/r/.next/dev/types/validator.ts"}, "17: { AppRoutes }")
    rerun = b.call("Bash", {"command": "npx tsc --noEmit --skipLibCheck"}, err, ok=False)
    assert (rerun, "recurring_error", "block") in alarms(replay(b.end()))


def test_a_recurring_edit_error_blocks_the_next_edit_of_that_file_only() -> None:
    engine = Engine()
    for i, o in enumerate(["a = 1", "b = 2", "c = 3"]):
        engine.check({"call_id": f"e{i}", "tool": "Edit",
                      "args": {"file_path": "/r/x.py", "old_string": o}}, 1.0)
        engine.observe({"type": "tool_result", "call_id": f"e{i}", "ok": False, "seq": i + 1,
                        "output": "String to replace not found in file."}, 1.0)
    other = engine.check({"call_id": "o", "tool": "Edit",
                          "args": {"file_path": "/r/y.py", "old_string": "d = 4"}}, 1.0)
    assert other.action == "allow"
    blocked = engine.check({"call_id": "e9", "tool": "Edit",
                            "args": {"file_path": "/r/x.py", "old_string": "d = 4"}}, 1.0)
    assert blocked.action == "block" and "re-read" in (blocked.message or "")
    assert blocked.findings[0].detector == "recurring_error"


# --- error rate -----------------------------------------------------------------------------

def test_error_rate_over_a_window_when_enabled() -> None:
    b = SessionBuilder()
    _work(b)
    errs = ["No rule to make target", "could not find Cargo.toml", "npm ERR! missing",
            "not a Python project", "gradle: command not found", "go.mod file not found",
            "CMake Error: no CMakeLists", "tox config file not found", "poetry: no pyproject",
            "configure: No such file"]
    for k, e in enumerate(errs):
        b.call("Bash", {"command": f"build-tool-{k}"}, e, ok=False)
    events = b.end()
    assert "error_rate" not in detectors(replay(events))  # off by default (docs/engine.md)
    on = Policy.from_dict({"detectors": {"error_rate": {"enabled": True}}})
    assert "error_rate" in detectors(replay(events, on))


def test_a_few_failures_among_successes_are_fine() -> None:
    b = SessionBuilder()
    for k in range(12):
        b.call("Bash", {"command": f"python t{k}.py"}, f"out {k}", ok=k % 3 != 0)
    assert detectors(replay(b.end())) == []


# --- no progress ----------------------------------------------------------------------------

def test_no_progress_when_nothing_new_comes_back() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "cat a.py"}, "same content")
    for k in range(12):
        b.call("Bash", {"command": f"cat ./a.py # look {k}"}, "same content")
    assert "no_progress" in detectors(replay(b.end()))


def test_a_batch_without_progress_is_one_step() -> None:
    """Fifteen task updates sent in one turn, each answered "Task not found" (a real
    interactive session), are one step without progress, not fifteen."""
    b = SessionBuilder()
    b.call("Bash", {"command": "cat a.py"}, "same content")
    for k in range(15):
        b.call("TaskUpdate", {"taskId": str(k), "status": "completed"}, "Task not found",
               ok=False, batch="turn-1")
    assert "no_progress" not in detectors(replay(b.end()))


def test_exploring_new_files_is_progress() -> None:
    b = SessionBuilder()
    for k in range(30):
        b.call("Read", {"file_path": f"/r/m{k}.py"}, f"module {k}")
    assert detectors(replay(b.end())) == []


# --- repeated text --------------------------------------------------------------------------

def test_repeated_assistant_messages() -> None:
    b = SessionBuilder()
    _work(b)
    text = ("I will fix the failing test by changing the rate in billing.py and then run the "
            "tests again to confirm it works.")
    for k in range(3):
        b.say(text + f"\n```python\nprint({k})\n```")
    report = replay(b.end())
    assert detectors(report) == ["repeated_text"]


def test_a_degenerate_message_repeating_one_sentence() -> None:
    b = SessionBuilder()
    b.say("I am checking the file now. " * 12)
    assert detectors(replay(b.end())) == ["repeated_text"]


def test_a_list_of_version_ranges_is_not_one_sentence_repeated() -> None:
    # held-out batch 6 (an OpenCode session): the agent's summary of an upgrade listed each
    # package as "- `pkg`: ^1.1.0 → ^1.2.0"; with every digit masked, the 16 version halves
    # were one chunk said 16 times. Figures alone are data: their digits stay.
    b = SessionBuilder()
    _work(b)
    lines = [f"- `pkg-{chr(97 + k)}`: ^{k}.{k + 1}.0 → ^{k}.{k + 2}.{k}" for k in range(16)]
    b.say("The following packages were updated:\n" + "\n".join(lines))
    assert detectors(replay(b.end())) == []
    # the same figures said again and again still are a degenerate message
    b = SessionBuilder()
    b.say("\n".join(["^1.1.0 → ^1.2.0 → ^1.3.0"] * 12))
    assert detectors(replay(b.end())) == ["repeated_text"]


def test_empty_replies_in_a_row() -> None:
    b = SessionBuilder()
    _work(b)
    for _ in range(3):
        b.say("  ")
    assert detectors(replay(b.end())) == ["repeated_text"]
    b = SessionBuilder()
    for k in range(5):  # empty texts around tool calls are normal (tool-only turns)
        b.say("")
        b.call("Read", {"file_path": f"/r/{k}.py"}, f"content {k}")
    assert detectors(replay(b.end())) == []


def test_short_repeated_thoughts_between_real_work_are_fine() -> None:
    b = SessionBuilder()
    for k in range(8):
        b.say("Let me check the next file.")
        b.call("Read", {"file_path": f"/r/m{k}.py"}, f"module {k}")
    assert detectors(replay(b.end())) == []


def test_the_same_thought_while_scrolling_through_a_file_is_fine() -> None:
    b = SessionBuilder()
    for k in range(6):
        b.say("Let's scroll down to see more of the file and find the parse function.")
        b.call("scroll_down", {}, f"[File: a.py]\n{k * 100}: code {k}")
    assert detectors(replay(b.end())) == []


def test_same_code_block_with_different_prose_is_fine() -> None:
    b = SessionBuilder()
    for k in range(4):
        b.say(f"Attempt {k}: now looking at part {'abcd'[k]} of the module, which handles "
              f"{['parsing', 'io', 'caching', 'errors'][k]}.\n```python\ndef f(): pass\n```")
    assert detectors(replay(b.end())) == []


# --- polling --------------------------------------------------------------------------------

def test_polling_with_changing_output_is_waiting() -> None:
    b = SessionBuilder()
    for k in range(25):
        b.call("BashOutput", {"bash_id": "b1"}, f"step {k * 10}/250")
    for k in range(6):
        b.call("Bash", {"command": "sleep 10 && tail -n 5 build.log"}, f"compiling {k}")
    assert detectors(replay(b.end())) == []


def test_polling_the_same_output_too_long_is_stuck() -> None:
    b = SessionBuilder()
    steps = [b.call("BashOutput", {"bash_id": "b1"}, "waiting for changes...") for _ in range(18)]
    report = replay(b.end())
    got = [a for a in alarms(report) if a[1] == "polling"]
    assert got[0] == (steps[11], "polling", "nudge")  # 12 polls with the same output
    assert (steps[15], "polling", "block") in got


def test_a_short_wait_with_the_same_output_is_fine() -> None:
    b = SessionBuilder()
    for _ in range(5):
        b.call("BashOutput", {"bash_id": "b1"}, "starting...")
    b.call("BashOutput", {"bash_id": "b1"}, "ready")
    assert detectors(replay(b.end())) == []


# --- stale reads ----------------------------------------------------------------------------

def test_rereading_an_unchanged_file_is_skipped_with_the_cached_content() -> None:
    engine = Engine()
    call = {"call_id": "r1", "tool": "Read", "args": {"file_path": "/r/a.py"}}
    assert engine.check(call, 1.0).action == "allow"
    engine.observe({"type": "tool_result", "call_id": "r1", "ok": True, "output": "A = 1",
                    "seq": 3}, 1.0)
    engine.check({"call_id": "x", "tool": "Bash", "args": {"command": "ls"}}, 2.0)
    engine.observe({"type": "tool_result", "call_id": "x", "ok": True, "output": "a.py"}, 2.0)
    again = engine.check({**call, "call_id": "r2"}, 3.0)
    assert again.action == "skip"
    assert again.message == ("SKIP: File '/r/a.py' was already opened in this session and has "
                             "not changed since you last read it. Use the content you already "
                             "have.")
    assert again.cached_output == "A = 1"
    assert again.findings[0].detector == "stale_read"


def test_rereading_after_an_edit_is_allowed() -> None:
    engine = Engine()
    read = {"call_id": "r1", "tool": "Read", "args": {"file_path": "/r/a.py"}}
    engine.check(read, 1.0)
    engine.observe({"type": "tool_result", "call_id": "r1", "ok": True, "output": "A = 1"}, 1.0)
    engine.check({"call_id": "e", "tool": "Edit", "args": {"file_path": "/r/a.py"}}, 2.0)
    engine.observe({"type": "tool_result", "call_id": "e", "ok": True, "output": "ok"}, 2.0)
    assert engine.check({**read, "call_id": "r2"}, 3.0).action == "allow"


def test_rereading_after_a_shell_command_that_may_write_is_allowed() -> None:
    engine = Engine()
    read = {"call_id": "r1", "tool": "Read", "args": {"file_path": "/r/a.py"}}
    engine.check(read, 1.0)
    engine.observe({"type": "tool_result", "call_id": "r1", "ok": True, "output": "A = 1"}, 1.0)
    engine.check({"call_id": "s", "tool": "Bash", "args": {"command": "python fix.py"}}, 2.0)
    engine.observe({"type": "tool_result", "call_id": "s", "ok": True, "output": ""}, 2.0)
    assert engine.check({**read, "call_id": "r2"}, 3.0).action == "allow"


def test_a_different_range_of_the_same_file_is_not_stale() -> None:
    engine = Engine()
    engine.check({"call_id": "r1", "tool": "Read", "args": {"file_path": "/a", "offset": 1}}, 1.0)
    engine.observe({"type": "tool_result", "call_id": "r1", "ok": True, "output": "x"}, 1.0)
    got = engine.check({"call_id": "r2", "tool": "Read",
                        "args": {"file_path": "/a", "offset": 200}}, 2.0)
    assert got.action == "allow"


def test_detectors_can_be_switched_off_per_tool() -> None:
    policy = Policy.from_dict({"tools": {"Bash": {"exact_repeat": {"enabled": False},
                                                  "recurring_error": {"enabled": False},
                                                  "error_rate": {"enabled": False},
                                                  "no_progress": {"enabled": False}}}})
    b = SessionBuilder()
    for _ in range(6):
        b.call("Bash", {"command": "cat missing.txt"}, NOT_FOUND, ok=False)
    events = b.end()
    assert detectors(replay(events, policy)) == []
    assert detectors(replay(events))  # and on by default


def test_per_tool_thresholds() -> None:
    policy = Policy.from_dict({"tools": {"Grep": {"exact_repeat": {"nudge": 5, "block": 7}}}})
    b = SessionBuilder()
    steps = [b.call("Grep", {"pattern": "x"}, "a:1:x") for _ in range(5)]
    assert alarms(replay(b.end(), policy))[0] == (steps[4], "exact_repeat", "nudge")


# --- more traps from real runs --------------------------------------------------------------

def test_one_retry_after_a_timeout_is_fine() -> None:
    b = SessionBuilder()
    _work(b)
    for _ in range(2):
        b.call("Bash", {"command": "pip install -r req.txt"}, "Command timed out after 120s",
               ok=False)
    b.call("Bash", {"command": "pip install -r req.txt --timeout 300"}, "Installed")
    assert detectors(replay(b.end())) == []


def test_searching_names_that_do_not_exist_is_exploring() -> None:
    b = SessionBuilder()
    for name in ("parse_header", "read_header", "HeaderParser", "header_bytes", "decode_hdr",
                 "HEADER_SIZE", "hdr_len", "get_hdr", "split_header", "HeaderError"):
        b.call("bash", {"command": f"grep -rn '{name}' src/ | head -20"}, "", ok=False,
               error="exit code 1")
    assert detectors(replay(b.end())) == []


def test_a_failed_edit_lets_the_file_be_re_read() -> None:
    engine = Engine()
    read = {"call_id": "r1", "tool": "Read", "args": {"file_path": "/r/a.py"}}
    engine.check(read, 1.0)
    engine.observe({"type": "tool_result", "call_id": "r1", "ok": True, "output": "A = 1"}, 1.0)
    engine.check({"call_id": "e", "tool": "Edit", "args": {"file_path": "/r/a.py"}}, 2.0)
    engine.observe({"type": "tool_result", "call_id": "e", "ok": False,
                    "output": "File has not been read yet. Read it first before writing to it."},
                   2.0)
    assert engine.check({**read, "call_id": "r2"}, 3.0).action == "allow"


def test_failures_across_mutating_tools_are_one_streak() -> None:
    b = SessionBuilder()
    _work(b)
    err = "<tool_use_error>File has not been read yet. Read it first.</tool_use_error>"
    b.call("Edit", {"file_path": "/r/t.ts", "old_string": "a"}, err, ok=False)
    b.call("MultiEdit", {"file_path": "/r/t.ts", "edits": [1]}, err, ok=False)
    s = b.call("Write", {"file_path": "/r/t.ts", "content": "x"}, err, ok=False)
    report = replay(b.end())
    found = [f for f in report.findings if f.detector == "recurring_error"]
    assert found and found[0].step == s and (
        "Tried: Edit /r/t.ts; MultiEdit /r/t.ts; Write /r/t.ts." in found[0].message)
    assert "read it with the read/open tool" in found[0].message


def test_the_same_edit_after_the_read_the_tool_asked_for_is_allowed() -> None:
    """Claude Code refuses an edit of a file not read yet; after the read the same edit works."""
    b = SessionBuilder()
    edit = {"file_path": "/r/page.tsx", "old_string": "a", "new_string": "b"}
    err = "File has not been read yet. Read it first before writing to it."
    b.call("Edit", edit, err, ok=False)
    b.call("Edit", edit, err, ok=False)
    b.call("Read", {"file_path": "/r/page.tsx"}, "a")
    last = b.call("Edit", edit, "The file has been updated.")
    report = replay(b.end())
    assert all(f.step != last for f in report.findings), alarms(report)
