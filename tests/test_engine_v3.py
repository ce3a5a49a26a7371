"""Engine v3 mechanisms, each on a small synthetic step sequence shaped like the class of run
it is for (issue #23): error identity from the line that ends a traceback, a shell's line
counter, the exact-repeat / recurring-error hand-off, an identical edit re-applied onto its own
result, a syntax error behind varying edits, parallel batches, restore-and-reapply."""

import random

from supervisor.engine.failures import error_identity
from supervisor.engine.fingerprint import outcome_hash
from tests.data.devset import generate as gen
from tests.engine_helpers import SessionBuilder, alarms, detectors, replay

_TRAILER = ("[The command completed with exit code 1.]\n"
            "[Current working directory: /workspace/app]\n"
            "[Python interpreter: /usr/bin/python]\n"
            "[Command finished with exit code 1]")


def _traceback(*exceptions: str) -> str:
    """A (chained) Python traceback ending in the last of `exceptions`, then a harness trailer."""
    parts = []
    for exc in exceptions:
        parts.append("Traceback (most recent call last):\n"
                     '  File "manage.py", line 22, in <module>\n    main()\n'
                     '  File "/app/core/conf.py", line 80, in setup\n    raise Problem()\n'
                     + exc)
    chained = "\n\nDuring handling of the above exception, another exception occurred:\n\n"
    return chained.join(parts) + "\n" + _TRAILER


def _work(b: SessionBuilder, n: int = 5) -> None:
    gen.normal_work(b, random.Random(n), n)


# --- error identity -----------------------------------------------------------------------------

def test_error_identity_is_the_exception_that_ends_a_chained_traceback() -> None:
    out = _traceback("KeyError: 'x'",
                     "core.exceptions.ImproperlyConfigured: Requested setting APPS, but "
                     "settings are not configured.")
    ident = error_identity(False, "exit code 1", out, '{"command":"python manage.py check"}')
    assert ident.startswith("core.exceptions.ImproperlyConfigured: Requested setting APPS")
    assert "Traceback" not in ident


def test_different_exceptions_behind_a_harness_trailer_are_different_errors() -> None:
    args = '{"command":"python manage.py migrate"}'
    ids = {error_identity(False, "exit code 1", _traceback(exc), args) for exc in (
        "db.utils.OperationalError: no such table: app_user",
        "KeyError: 'DATABASES'",
        "core.exceptions.ImproperlyConfigured: SECRET_KEY must not be empty",
        "core.exceptions.ImproperlyConfigured: INSTALLED_APPS is not configured")}
    assert len(ids) == 4


def test_progress_behind_varying_tracebacks_is_not_a_recurring_error() -> None:
    """Four different exceptions, each behind an OpenHands trailer: the agent is making
    progress; before v3 all four were "Traceback (most recent call last):"."""
    b = SessionBuilder()
    _work(b)
    for k, exc in enumerate(("db.utils.OperationalError: no such table: app_user",
                             "KeyError: 'DATABASES'",
                             "core.exceptions.ImproperlyConfigured: SECRET_KEY must be set",
                             "core.exceptions.ImproperlyConfigured: APPS not ready")):
        b.call("execute_bash", {"command": f"cd /app && python manage.py check --tag t{k}"},
               _traceback(exc), ok=False, error="exit code 1")
        b.call("str_replace_editor", {"command": "view", "path": f"/app/core/m{k}.py"},
               f"{k}: code")
    assert "recurring_error" not in detectors(replay(b.end()))


def test_a_shells_line_counter_is_not_a_new_outcome() -> None:
    a = outcome_hash(False, "/bin/bash: line 11301: cd: build: No such file or directory")
    b = outcome_hash(False, "/bin/bash: line 11316: cd: build: No such file or directory")
    assert a == b


# --- the exact-repeat / recurring-error hand-off -----------------------------------------------

def test_identical_failing_calls_whose_output_carries_a_counter_are_a_loop() -> None:
    """Twenty identical calls failing the same way, each output with another counter the
    normaliser does not know: the same call with the same error identity is an exact repeat."""
    b = SessionBuilder()
    _work(b)
    steps = [b.call("execute_bash", {"command": "cd src/pkg && make"},
                    f"make: *** [Makefile:{40 + k}: all] Error 2 (job {9000 + 17 * k})",
                    ok=False, error="exit code 2") for k in range(6)]
    got = alarms(replay(b.end()))
    assert got[0] == (steps[2], "exact_repeat", "nudge")
    assert (steps[3], "exact_repeat", "block") in got


# --- an identical edit re-applied ------------------------------------------------------------

def _insert(b: SessionBuilder, size: int) -> int:
    """SWE-agent's `edit 1:1` of one block into the open file: it "changes" the file each time
    (the file grows by another copy)."""
    return b.call("edit", {"path": "/repo/src/conf.py", "start_line": 1, "end_line": 1,
                           "replacement_text": "import os\nimport sys\n"},
                  f"[File: /repo/src/conf.py ({size} lines total)]\n1:import os\n2:import sys\n"
                  "File updated. Please review the changes.")


def test_the_same_line_range_edit_applied_again_and_again_is_a_loop() -> None:
    b = SessionBuilder()
    _work(b)
    steps = [_insert(b, 40 + 2 * k) for k in range(5)]
    got = alarms(replay(b.end()))
    assert got[0] == (steps[2], "exact_repeat", "nudge")
    assert (steps[3], "exact_repeat", "block") in got


def test_the_same_edit_after_a_restore_is_not_a_repeat() -> None:
    """Restore the file, re-apply the one wanted edit: each application comes after another
    call changed the file (the restore), so it is not applied onto its own result."""
    b = SessionBuilder()
    _work(b)
    for k in range(3):
        _insert(b, 42)
        b.call("bash", {"command": "git checkout -- src/conf.py"}, "")
        b.call("bash", {"command": f"python -m pytest tests/test_conf.py -q -k case{k}"},
               f"{k + 3} passed")
    assert "exact_repeat" not in detectors(replay(b.end()))


def test_different_content_at_one_line_range_is_not_a_repeat() -> None:
    b = SessionBuilder()
    _work(b)
    for k in range(5):
        b.call("edit", {"path": "/repo/src/conf.py", "start_line": 1, "end_line": 1,
                        "replacement_text": f"import os  # {k}\n"}, f"File updated ({k}).")
    assert "exact_repeat" not in detectors(replay(b.end()))


# --- one syntax error behind varying edits ---------------------------------------------------

def test_the_same_syntax_error_after_different_inserts_recurs() -> None:
    """Three different `sed` inserts, each followed by the same run failing with the same
    IndentationError (at lines that move): the inserts keep breaking the file the same way."""
    b = SessionBuilder(agent="mini-swe-agent")
    _work(b)
    runs = []
    for k, text in enumerate(("print(a)", "print(b)", "print(a, b)")):
        b.call("bash", {"command": f"sed -i '/def walk/a \\ {text}' src/lint.py"}, "")
        runs.append(b.call("bash", {"command": "python reproduce.py"},
                           'Traceback (most recent call last):\n  File "reproduce.py", '
                           f'line 3, in <module>\n  File "src/lint.py", line {90 + k}\n'
                           f"    {text}\nIndentationError: unexpected indent", ok=False,
                           error="exit code 1"))
        b.call("bash", {"command": "sed -i '/print(/d' src/lint.py"}, "")
    found = [f for f in replay(b.end()).findings if f.detector == "recurring_error"]
    assert found and found[0].step == runs[2] and found[0].action == "nudge"


def test_the_same_test_failure_after_real_edits_is_repair_not_a_recurring_error() -> None:
    b = SessionBuilder()
    _work(b)
    for k in range(4):
        b.call("Edit", {"file_path": "/r/io.py", "old_string": f"+ {k}",
                        "new_string": f"+ {k + 1}"}, "The file has been updated.")
        b.call("Bash", {"command": "python -m pytest tests/test_io.py -x -q"},
               f"E   ValueError: bad header at byte {k * 13}\n1 failed", ok=False,
               error="exit code 1")
    assert "recurring_error" not in detectors(replay(b.end()))


# --- parallel batches ----------------------------------------------------------------------------

def test_errors_of_one_parallel_batch_are_not_recurrences() -> None:
    """Distinct downloads issued together, each failing with the same quota message: one
    decision, not three."""
    b = SessionBuilder()
    _work(b)
    for k in range(4):
        b.call("Bash", {"command": f"curl -fsS https://data.example/set{k}.csv -o set{k}.csv"},
               "curl: (22) The requested URL returned error: 429 quota exceeded", ok=False,
               error="exit code 22", batch="turn-7")
    b.call("Bash", {"command": "ls"}, "a\nb")
    assert detectors(replay(b.end())) == []


# --- revert: restore and reapply --------------------------------------------------------------

def test_restore_and_reapply_is_not_a_revert_loop() -> None:
    """Edit a file in three steps, restore it from git, re-apply the same three edits: each
    version comes back once (three returns, none to one content three times)."""
    b = SessionBuilder()
    _work(b)
    edits = [("alpha", "ALPHA"), ("beta", "BETA"), ("gamma", "GAMMA")]
    b.call("Write", {"file_path": "/r/mod.py", "content": "alpha\nbeta\ngamma\n"}, "written")
    for k in range(2):
        if k:
            b.call("Write", {"file_path": "/r/mod.py", "content": "alpha\nbeta\ngamma\n"},
                   "written")
        for old, new in edits:
            b.call("Edit", {"file_path": "/r/mod.py", "old_string": old, "new_string": new},
                   "The file has been updated.")
    assert "revert" not in detectors(replay(b.end()))


def test_going_round_the_same_versions_is_still_a_revert_loop() -> None:
    b = SessionBuilder()
    _work(b)
    b.call("Write", {"file_path": "/r/mod.py", "content": "v = 1\n"}, "written")
    for _ in range(3):
        b.call("Edit", {"file_path": "/r/mod.py", "old_string": "v = 1", "new_string": "v = 2"},
               "The file has been updated.")
        b.call("Edit", {"file_path": "/r/mod.py", "old_string": "v = 2", "new_string": "v = 1"},
               "The file has been updated.")
    assert "revert" in detectors(replay(b.end()))


# --- confidence -----------------------------------------------------------------------------

def test_findings_carry_their_confidence_and_only_strong_ones_refuse() -> None:
    from supervisor.engine import Engine

    engine = Engine()
    call = {"tool": "Bash", "args": {"command": "curl -s http://svc/api"}}
    actions = []
    for i in range(3):  # results never come: identical calls, outcome unknown
        actions.append(engine.check({**call, "call_id": f"c{i}", "seq": i + 1}, 1.0))
    third = actions[2]
    assert third.action == "allow"
    fourth = engine.check({**call, "call_id": "c3", "seq": 4}, 1.0)
    # the 4th attempt of an identical call is strong evidence even without outcomes
    assert fourth.action == "block" and fourth.findings[0].confidence == "strong"
    assert "outcome unknown" in fourth.findings[0].basis
    assert fourth.findings[0].to_event()["confidence"] == "strong"
    assert "(Evidence: strong, 4 identical calls, outcome unknown.)" in (fourth.message or "")


def test_a_weak_finding_never_escalates() -> None:
    """Repeated text is a trend, not one repeated thing: it nudges, it does not pause."""
    b = SessionBuilder()
    _work(b)
    for _ in range(7):
        b.say("I will now carefully re-check the configuration loader and then fix the bug.")
    found = [f for f in replay(b.end()).findings if f.detector == "repeated_text"]
    assert found and all(f.level == 1 for f in found)
    assert all("(Evidence: weak" in f.message for f in found)


def test_a_failing_tests_report_recurring_during_repair_is_not_a_recurring_error() -> None:
    """Different pytest selections of one failing test, the same `E ...` line each time, with
    edits in between: the bug under repair is expected to recur; only edits without any effect
    (ineffective_edits) or identical runs (exact_repeat) make it a loop."""
    b = SessionBuilder(agent="mini-swe-agent")
    _work(b)
    for k, selection in enumerate(("tests/test_ops.py", "tests/test_ops.py::test_add",
                                   "tests/test_ops.py -k add", "tests/test_ops.py -x")):
        b.call("bash", {"command": f"sed -i 's/v{k}/v{k + 1}/' src/ops.py"}, "")
        b.call("bash", {"command": f"python -m pytest {selection}"},
               "    def test_add():\n>       assert add(1, 'a') == 2\n"
               "E       TypeError: unsupported operand type(s) for +: 'int' and 'str'\n"
               f"FAILED tests/test_ops.py::test_add - TypeError\n1 failed in 0.{k}1s",
               ok=False, error="exit code 1")
    assert "recurring_error" not in detectors(replay(b.end()))


def test_silent_successes_late_in_a_long_session_are_not_no_progress() -> None:
    """A long healthy session: silent builds and checks (no output) between looks at output
    already seen. A call that says nothing is no evidence of a stall."""
    b = SessionBuilder()
    _work(b, 8)
    for k in range(14):
        if k % 3 == 0:
            b.call("Bash", {"command": f"git log --oneline -1 --format=%s # look {k}"},
                   "Fix the parser")
        else:
            b.call("Bash", {"command": f"make -s target{k}"}, "")
    assert "no_progress" not in detectors(replay(b.end()))


def test_terminal_escape_codes_are_not_part_of_an_error_identity() -> None:
    """OpenHands' shell prefixes some outputs with bracketed-paste codes; the same error with
    and without them is one error."""
    plain = error_identity(False, "exit 127", "bash: sudo: command not found",
                           '{"command":"sudo service x restart"}')
    coded = error_identity(False, "exit 127", "\x1b[?2004lbash: sudo: command not found",
                           '{"command":"sudo service y restart"}')
    assert plain == coded == "bash: sudo: command not found"


def test_a_test_count_moving_is_not_the_same_failure() -> None:
    """The same test command failing with fewer failures each time: its masked identity is
    one, but a test count moving is progress, not a repeat."""
    b = SessionBuilder()
    _work(b)
    for k in range(5):
        b.call("Bash", {"command": "python -m pytest -q"},
               f"FAILED tests/test_a.py::test_x - AssertionError\n{5 - k} failed, {k} passed",
               ok=False, error="exit code 1")
    assert "exact_repeat" not in detectors(replay(b.end()))
