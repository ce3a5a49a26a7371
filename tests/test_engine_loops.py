"""The loops real agents make: ineffective edits, reverts, batches, calls without results,
stuck polling by time, cycles at their third occurrence, and replays of runs without an
operator (each detector on its loop and on the trap beside it)."""

from supervisor.engine import Engine
from tests.engine_helpers import SessionBuilder, alarms, detectors, replay

FAIL = ("Traceback (most recent call last):\n  File \"reproduce.py\", line 2, in <module>\n"
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'")


def _round(b: SessionBuilder, k: int, output: str = FAIL, path: str = "/r/app/core.py",
           ok: bool = False) -> int:
    b.call("Edit", {"file_path": path, "old_string": f"v{k}", "new_string": f"v{k + 1}"},
           "The file has been updated.")
    return b.call("Bash", {"command": "python reproduce.py"}, output, ok=ok)


def test_edits_that_never_change_the_probes_output() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "python reproduce.py"}, FAIL, ok=False)
    runs = [_round(b, k) for k in range(6)]
    report = replay(b.end())
    found = [a for a in alarms(report) if a[1] == "ineffective_edits"]
    assert found[0] == (runs[2], "ineffective_edits", "nudge")  # the 3rd round
    assert (runs[3], "ineffective_edits", "block") in found
    message = next(f.message for f in report.findings if f.detector == "ineffective_edits")
    assert "app/core.py" in message and "may not be the code that runs" in message


def test_edits_of_the_probe_itself_and_changing_outputs_are_not_rounds() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "python reproduce.py"}, FAIL, ok=False)
    for k in range(5):  # only the script is edited: not the code under test
        _round(b, k, path="/r/reproduce.py")
    assert "ineffective_edits" not in detectors(replay(b.end()))
    b = SessionBuilder()
    b.call("Bash", {"command": "python reproduce.py"}, FAIL, ok=False)
    for k in range(5):  # every edit changes what the script says
        _round(b, k, output=FAIL.replace("'str'", f"'str{k}'"))
    assert "ineffective_edits" not in detectors(replay(b.end()))


def test_a_check_that_keeps_passing_after_each_edit_is_no_round() -> None:
    """A person refactoring checks the build after each part: the same `Finished` (or
    `12 passed`) after every edit is what they want to see, not edits without effect. A run
    that succeeds with the same output and no verdict (a script still printing the wrong
    value) still counts."""
    build = ("   Compiling tij v0.1.0 (/r)\n    Finished `dev` profile [unoptimized + debuginfo] "
             "target(s) in 12.08s")
    for command, output in (("cargo build 2>&1 | tail -20", build),
                            ("python -m pytest -q", "........\n12 passed in 0.31s")):
        b = SessionBuilder()
        b.call("Bash", {"command": command}, output)
        for k in range(6):
            b.call("Edit", {"file_path": "/r/src/lib.rs", "old_string": f"v{k}",
                            "new_string": f"v{k + 1}"}, "The file has been updated.")
            b.call("Bash", {"command": command}, output.replace("12.08", f"1{k}.5"))
        assert "ineffective_edits" not in detectors(replay(b.end())), command
    b = SessionBuilder()
    b.call("Bash", {"command": "python reproduce.py"}, "total: 3")
    for k in range(4):  # exits 0, prints the wrong total every time
        _round(b, k, output="total: 3", ok=True)
    assert "ineffective_edits" in detectors(replay(b.end()))


def test_the_same_edits_changing_another_probe_are_effective() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "python reproduce.py"}, FAIL, ok=False)
    for k in range(5):
        _round(b, k)
        b.call("Bash", {"command": "python -m pytest tests/test_core.py -q"},
               f"{k} passed, {5 - k} failed", ok=False)
    assert "ineffective_edits" not in detectors(replay(b.end()))


def test_the_probes_rerun_is_refused_before_it_runs() -> None:
    engine = Engine()

    def step(i: int, tool: str, args: dict, output: str, ok: bool) -> str:
        check = engine.check({"call_id": f"c{i}", "tool": tool, "args": args, "seq": i}, 1.0)
        engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": ok, "output": output,
                        "seq": i}, 1.0)
        return check.action

    probe = {"command": "python reproduce.py"}
    i = 0
    step(i, "Bash", probe, FAIL, False)
    actions = []
    for k in range(5):
        i += 2
        step(i, "Edit", {"file_path": "/r/core.py", "old_string": f"v{k}",
                         "new_string": f"v{k + 1}"}, "The file has been updated.", True)
        actions.append(step(i + 1, "Bash", probe, FAIL, False))
    assert actions[:3] == ["allow", "allow", "allow"] and actions[3] == "block"
    assert engine.level == 2


def _restore_round(b: SessionBuilder, k: int) -> int:
    b.call("Bash", {"command": f"cat > fix{k}.py << 'EOF'\nsrc = open('pkg/mod.py').read()\n"
                               f"open('pkg/mod.py', 'w').write(src.replace('a', 'b{k}'))\n"
                               f"EOF\npython fix{k}.py"}, f"patched {k}")
    b.call("Bash", {"command": "python -c 'import pkg.mod'"},
           f"IndentationError: unexpected indent (line {k})", ok=False)
    return b.call("Bash", {"command": "cp pkg/mod.py.backup pkg/mod.py"}, "")


def test_restoring_a_backup_again_and_again_is_a_revert_loop() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    restores = [_restore_round(b, k) for k in range(4)]
    report = replay(b.end())
    found = [a for a in alarms(report) if a[1] == "revert"]
    assert found[0] == (restores[2], "revert", "nudge")  # the third return
    assert found[1][2] == "block" and found[1][0] == restores[2] + 1  # the next rewrite
    first = next(f for f in report.findings if f.detector == "revert")
    assert "pkg/mod.py went back to earlier content 3 times" in first.message


def test_one_restore_and_retry_and_iterative_repair_are_not_loops() -> None:
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    for k in range(2):  # A→B→A→B: one restore and one re-apply
        _restore_round(b, k)
    assert "revert" not in detectors(replay(b.end()))
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    for k in range(5):  # each attempt makes the working test say something new
        _restore_round(b, k)
        b.call("Bash", {"command": "python test_issue.py"}, f"result {k}.0", ok=True)
    assert "revert" not in detectors(replay(b.end()))


def _rewrite(b: SessionBuilder, k: int, look: bool = True) -> int:
    """One attempt at pkg/mod.py by a new fix script, then (with `look`) a look at the file."""
    at = b.call("Bash", {"command": f"cat > fix{k}.py << 'EOF'\nsrc = open('pkg/mod.py').read()\n"
                                    f"open('pkg/mod.py', 'w').write(src.replace('a', 'c{k}'))\n"
                                    f"EOF\npython fix{k}.py"}, "Fix applied!")
    if look:
        b.call("Bash", {"command": "sed -n '10,20p' pkg/mod.py"}, f"    x = c{k}")
    return at


def _restore(b: SessionBuilder) -> int:
    return b.call("Bash", {"command": "cp pkg/mod.py.backup pkg/mod.py"}, "")


def test_two_restores_that_throw_away_three_attempts_are_a_revert_loop() -> None:
    """Restore, attempt, look, attempt, look, restore: the file came back only twice, but the
    restores threw away three attempts, each looked at and found wrong (astroid-1196's shape)."""
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    attempts = [_rewrite(b, 0)]
    first = _restore(b)
    attempts += [_rewrite(b, 1), _rewrite(b, 2)]
    second = _restore(b)
    after = _rewrite(b, 3)
    report = replay(b.end())
    found = [a for a in alarms(report) if a[1] == "revert"]
    assert found[:2] == [(second, "revert", "nudge"), (after, "revert", "block")]
    nudge = next(f for f in report.findings if f.detector == "revert")
    assert len(nudge.evidence) == len(attempts) + len([first, second])  # each one cited
    assert nudge.basis == "2 returns to earlier content of one file, 3 attempts thrown away"


def test_restores_that_throw_away_fewer_than_three_attempts_are_not_loops() -> None:
    """Try, restore, try, restore, try (the third try may work: django-13710's iterative
    repair); two rewrites with no look at the file between are one attempt; one restore ends one
    episode of attempts however many it throws away."""
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    for k in range(2):
        _rewrite(b, k)
        _restore(b)
    _rewrite(b, 2)
    assert "revert" not in detectors(replay(b.end()))
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    for k in range(0, 4, 2):  # each attempt is two rewrites, looked at once
        _rewrite(b, k, look=False)
        _rewrite(b, k + 1)
        _restore(b)
    assert "revert" not in detectors(replay(b.end()))
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    for k in range(0, 4, 2):  # a look at another file between two rewrites does not split them
        _rewrite(b, k, look=False)
        b.call("Bash", {"command": "cat pkg/util.py"}, "def helper(): ...")
        _rewrite(b, k + 1)
        _restore(b)
    assert "revert" not in detectors(replay(b.end()))
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    for k in range(4):
        _rewrite(b, k)
    _restore(b)
    assert "revert" not in detectors(replay(b.end()))


def test_an_attempt_restored_before_anything_looked_at_it_was_not_tried() -> None:
    """pvlib-1154's shape: a first attempt looked at and found wrong, a second that the
    reproduction passes, a third written and dropped for a simpler plan before anything ran or
    showed it; the backup restored and the working fix applied again. Two tried attempts were
    thrown away, not three: neither the restore nor the re-apply is a loop. The third looked
    at, or run against the reproduction, makes it a tried attempt, and the loop is found."""
    for judge, loop in ((None, False), ("sed -n '10,20p' pkg/mod.py", True),
                        ("python reproduce.py", True)):
        b = SessionBuilder()
        b.call("Bash", {"command": "python reproduce.py"}, "Result: nan")
        b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
        _rewrite(b, 0)
        _restore(b)
        _rewrite(b, 1, look=False)
        b.call("Bash", {"command": "python reproduce.py 2>&1 | grep -v Warning"}, "Result: 0.0")
        _rewrite(b, 2, look=False)
        if judge is not None:
            b.call("Bash", {"command": judge}, "Result: nan")
        restore = _restore(b)
        reapply = _rewrite(b, 3)
        found = [a for a in alarms(replay(b.end())) if a[1] == "revert"]
        assert found[:2] == ([(restore, "revert", "nudge"), (reapply, "revert", "block")]
                             if loop else []), judge


def test_a_check_that_crashes_behind_a_filter_is_no_progress_between_restores() -> None:
    """sqlfluff-1517's shape (mini-swe-agent corpus, 56-72): restore the backup, patch, run
    the check through `| tail -20`, which crashes on the patch (exit status 0, the traceback's
    header cut off), three times. The crash is a failure, not the check now succeeding with a
    new output, so it does not restart the count: the third restore is the loop."""
    lint = "echo 'select 1;;' | sqlfluff lint - 2>&1 | tail -20"
    crash = ('  File "/r/pkg/__init__.py", line 4, in <module>\n'
             "    from pkg.mod import lint  # noqa: F401\n"
             "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
             '  File "/r/pkg/mod.py", line 186\n    else:\n    ^\n'
             "IndentationError: expected an indented block after 'else' statement on line 186")
    b = SessionBuilder()
    b.call("Bash", {"command": lint}, "== [stdin] FAIL\nL:   1 | P:  10 |  PRS | unparsable ';'")
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    _rewrite(b, 0)
    restores = [_restore(b)]
    for k in (1, 2):
        _rewrite(b, k, look=False)
        b.call("Bash", {"command": lint}, crash)  # the harness saw exit status 0
        restores.append(_restore(b))
    found = [a for a in alarms(replay(b.end())) if a[1] == "revert"]
    assert found[:1] == [(restores[2], "revert", "nudge")]


def test_attempts_before_a_persons_prompt_are_not_thrown_away_by_restores_after_it() -> None:
    """The person spoke between: what the agent tried before is not part of a loop after it
    (the rubric: edits undone and redone at the person's request are no loop)."""
    b = SessionBuilder()
    b.call("Bash", {"command": "cp pkg/mod.py pkg/mod.py.backup"}, "")
    _rewrite(b, 0)
    _rewrite(b, 1)
    b.say("undo that and try it with a regex instead", role="user")
    _restore(b)
    _rewrite(b, 2)
    _restore(b)
    assert "revert" not in detectors(replay(b.end()))


def test_a_batch_of_identical_parallel_calls_is_one_decision() -> None:
    b = SessionBuilder()
    for _ in range(3):
        b.call("Grep", {"pattern": "Config"}, "a.py:1:class Config:", batch="turn-1")
    assert detectors(replay(b.end())) == []
    last = [b.call("Grep", {"pattern": "Config"}, "a.py:1:class Config:", batch=f"turn-{k}")
            for k in (2, 3)]
    assert (last[1], "exact_repeat", "nudge") in alarms(replay(b.end()))


def test_calls_whose_result_never_came_count_as_attempts() -> None:
    engine = Engine()
    call = {"tool": "Bash", "args": {"command": "curl -s http://svc/api"}}
    for i in range(3):  # the harness never reported these
        engine.check({**call, "call_id": f"c{i}", "seq": i + 1}, 1.0)
    check = engine.check({**call, "call_id": "c3", "seq": 4}, 1.0)
    assert check.action == "block" and check.findings[0].detector == "exact_repeat"
    assert [s["outcome"] for s in engine.st.hist] == ["no-result"] * 3


def test_polling_the_same_output_for_a_long_time_is_stuck_before_twelve_polls() -> None:
    engine = Engine()
    found = []
    for i in range(5):
        now = 1000.0 + i * 300.0  # a poll every 5 minutes, the same output for 20 minutes
        engine.check({"call_id": f"p{i}", "tool": "BashOutput", "args": {"bash_id": "b1"}},
                     now)
        found += engine.observe({"type": "tool_result", "call_id": f"p{i}", "ok": True,
                                 "output": "still waiting", "seq": i + 1}, now)
    assert [f.detector for f in found] == ["polling"] and "900 s" in found[0].message


def test_a_cycle_is_reported_when_its_third_occurrence_begins() -> None:
    b = SessionBuilder()
    steps = []
    for _ in range(3):
        steps.append(b.call("browser_click", {"index": 1232}, "Clicked element 1232"))
        steps.append(b.call("browser_get_state", {}, '{"url": "http://x/files", "elements": '
                            f'[{{"index": {len(steps) * 97}, "text": "Files"}}]}}'))
    found = [a for a in alarms(replay(b.end())) if a[1] == "cycle"]
    assert found[0] == (steps[4], "cycle", "nudge")  # click, state, click, state, click


def test_a_replay_without_an_operator_goes_on_after_an_escalation() -> None:
    """A run recorded by another framework has no operator: each escalation is taken as
    answered, so a second loop later in the run is still found."""
    b = SessionBuilder()
    for _ in range(6):
        b.call("Bash", {"command": "make"}, "make: *** [all] Error 1", ok=False)
    for k in range(3):
        b.call("Bash", {"command": f"ls d{k}"}, f"f{k}")
    later = [b.call("Bash", {"command": "cat missing.txt"},
                    "cat: missing.txt: No such file or directory", ok=False) for _ in range(3)]
    report = replay(b.end())
    assert report.first["escalate"] is not None
    assert (later[2], "exact_repeat", "nudge") in alarms(report)
