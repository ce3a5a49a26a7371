"""Failure from the output as well as the flag, the error identity, outcome normalisation."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from supervisor.engine import Engine
from supervisor.engine.failures import (
    _AT_THE_END,
    _at_the_end,
    error_identity,
    error_source,
    failure_line,
)
from supervisor.engine.fingerprint import normalise_output

TRACE = ("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
         "django.db.utils.IntegrityError: FOREIGN KEY constraint failed\n")
CUT = ('  File "/testbed/django/db/backends/sqlite3/base.py", line 422, in execute\n'
       "    return Database.Cursor.execute(self, query, params)\n"
       "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
       "django.db.utils.IntegrityError: FOREIGN KEY constraint failed\n")
"""The end of a traceback whose header `python t.py 2>&1 | tail -4` cut off (exit status 0)."""
SYNTAX = ('  File "/testbed/src/pkg/grammar.py", line 186\n    else:\n    ^\n'
          "IndentationError: expected an indented block after 'else' statement on line 186")
"""Python's report of a syntax error in the module it runs: a frame, no header."""


@pytest.mark.parametrize(("output", "line"), [
    (TRACE, "django.db.utils.IntegrityError: FOREIGN KEY constraint failed"),
    (CUT, "django.db.utils.IntegrityError: FOREIGN KEY constraint failed"),
    ("...\n" + SYNTAX + "\n[The command completed with exit code 0.]",
     "IndentationError: expected an indented block after 'else' statement on line 186"),
    ("Reading package lists...\nE: Unable to locate package foo", "E: Unable to locate "
     "package foo"),
    ("bash: foox: command not found", "bash: foox: command not found"),
    ("No replacement was performed, old_str `x` did not appear verbatim in /a.py.",
     "No replacement was performed, old_str `x` did not appear verbatim in /a.py."),
    ("<tool_use_error>File has not been read yet.</tool_use_error>",
     "<tool_use_error>File has not been read yet.</tool_use_error>"),
    ("make: *** [Makefile:12: build] Error 2", "make: *** [Makefile:12: build] Error 2"),
    ("compiling...\nCommand timed out after 60 seconds", "Command timed out after 60 seconds"),
    # a refusal anywhere, in any case, and in a case `str.lower` does not fold as `re.I` does
    ("Error: NO REPLACEMENT WAS PERFORMED\nok", "Error: NO REPLACEMENT WAS PERFORMED"),
    ("Parameter `path` Is Required.\nok", "Parameter `path` Is Required."),
    ("No replacement waſ performed: é\nok", "No replacement waſ performed: é"),
])
def test_the_output_says_the_call_failed(output: str, line: str) -> None:
    assert failure_line(output) == line


@pytest.mark.parametrize("output", [
    "all 12 tests passed",
    "WARNING: Retrying (Retry(total=4)) after ... Read timed out.\nSuccessfully installed x",
    TRACE + "\nrecovered, continuing\nstep 2 done\nall done",  # a traceback printed and survived
    CUT + "Test 2: product_id saved as 'bar'\nSUCCESS\ndone",  # its end, survived
    '  File "t.py", line 3, in <module>\n    main()\nmain() returned 0',  # frames, no exception
    "ValueError: bad input",  # an exception's name printed alone: data as much as a crash
    "Error saving order: FOREIGN KEY constraint failed",  # a caught exception's report
    "",
])
def test_output_that_says_nothing_keeps_the_flag(output: str) -> None:
    assert failure_line(output) is None


def test_an_engine_marks_a_piped_traceback_failed() -> None:
    engine = Engine()
    engine.check({"call_id": "c", "tool": "Bash",
                  "args": {"command": "python t.py 2>&1 | tail -5"}}, 1.0)
    engine.observe({"type": "tool_result", "call_id": "c", "ok": True, "output": TRACE}, 1.0)
    step = engine.st.hist[-1]
    assert step["ok"] is False
    assert step["error_id"] == "django.db.utils.IntegrityError: FOREIGN KEY constraint failed"


def test_an_engine_marks_a_traceback_cut_by_a_filter_failed() -> None:
    """`python t.py 2>&1 | tail -4` exits 0 and its output has lost the traceback's header:
    frames then an exception line are still Python's report of a crash."""
    engine = Engine()
    engine.check({"call_id": "c", "tool": "Bash",
                  "args": {"command": "python t.py 2>&1 | tail -4"}}, 1.0)
    engine.observe({"type": "tool_result", "call_id": "c", "ok": True, "output": CUT}, 1.0)
    step = engine.st.hist[-1]
    assert step["ok"] is False
    assert step["error_id"] == "django.db.utils.IntegrityError: FOREIGN KEY constraint failed"


def test_the_same_error_with_other_arguments_is_one_identity() -> None:
    def ident(old: str) -> str:
        args = json.dumps({"command": "str_replace", "old_str": old, "path": "/r/a.py"},
                          separators=(",", ":"))
        return error_identity(False, None, f"String to replace not found: {old}", args)

    assert ident("foo = 1") == ident("bar = 2") == "String to replace not found: <arg>"
    first = error_identity(False, "exit code 1", "ModuleNotFoundError: No module named 'pytz'",
                           '{"command":"python t.py"}')
    second = error_identity(False, "exit code 1", "ModuleNotFoundError: No module named "
                            "'asgiref'", '{"command":"python t.py"}')
    assert first != second  # two different missing modules are two errors
    assert error_identity(False, "exit code 1", "", "{}") == ""  # an exit status names nothing
    assert error_identity(True, None, "fine", "{}") == ""
    masked = error_identity(False, None, "Error at 0x7f3a2b1c in /tmp/tmpab12cd34/x.py:123",
                            "{}")
    assert masked == "Error at <hex> in <tmp>:#"


def test_a_time_out_named_only_by_the_harness() -> None:
    error = "Command '['bash', '-c', 'pip install numpy pandas']' timed out after 60 seconds"
    args = '{"command":"pip install numpy pandas"}'
    assert error_source(False, error, "Collecting numpy\n") == "harness"
    assert error_source(False, "exit code 1", TRACE) == "output"
    assert "<arg>" in error_identity(False, error, "Collecting numpy\n", args)


@pytest.mark.parametrize(("a", "b"), [
    ("<returncode>1</returncode>\n<output>boom</output>", "boom"),
    ("boom\n[The command completed with exit code 1]", "boom"),
    ("Downloading x (16.9 MB)\n   ━━━━━━━━━━ 1.2/16.9 MB 3.1 MB/s eta 0:00:05\nok",
     "Downloading x (16.9 MB)\nok"),
    ('  File "a.py", line 12, in f\nValueError', '  File "a.py", line 40, in f\nValueError'),
    ('{"url": "http://x/files", "elements": [{"index": 730, "text": "Files"}]}',
     '{"url": "http://x/files", "elements": [{"index": 2080, "text": "Files"}]}'),
    ("done\nreal\t0m1.234s\nuser\t0m0.9s\nsys\t0m0.1s", "done"),
])
def test_boilerplate_and_renumbering_are_normalised_away(a: str, b: str) -> None:
    assert normalise_output(a) == normalise_output(b)


def test_real_differences_in_a_browser_page_remain() -> None:
    a = '{"url": "http://x/files?dir=%2F", "elements": [{"index": 1, "text": "Files"}]}'
    b = '{"url": "http://x/files?dir=%2Fdocs", "elements": [{"index": 1, "text": "Files"}]}'
    assert normalise_output(a) != normalise_output(b)


BUN_CLOSE = 'error: script "{}" exited with code 1'


@pytest.mark.parametrize(("output", "command", "identity"), [
    ("✗ parses dates\nerror: expect(received).toBe(expected)\n 1 fail\n" + BUN_CLOSE.format(
        "test"), "bun run test", "error: expect(received).toBe(expected)"),
    ("src/a.ts\n  3:5  error  'x' is assigned a value but never used  no-unused-vars\n"
     + BUN_CLOSE.format("lint"), "bun run lint",
     "#:# error 'x' is assigned a value but never used no-unused-vars"),
    ("a.c:3:1: error: expected ';' before '}' token\nmake: *** [Makefile:2: a] Error 1",
     "make", "a.c:#:#: error: expected ';' before <arg> token"),
    ("error[E0308]: mismatched types\n --> src/main.rs:2:18\nerror: could not compile `foo` "
     "(bin \"foo\") due to 1 previous error", "cargo build", "error[E#]: mismatched types"),
    ("FAIL src/a.test.js\nTypeError: x is not a function\nnpm ERR! code ELIFECYCLE\n"
     "npm ERR! errno 1\nnpm ERR! Exit status 1", "npm test", "TypeError: x is not a function"),
    ("$ tsc\n" + BUN_CLOSE.format("check"), "bun run check", ""),  # names nothing but status
    # a binary run through bun (`bun tsc`): held-out batch 6 took bun's line for the error
    (".next/types/v.ts(17,62): error TS1434: Unexpected keyword or identifier.\n"
     'error: "tsc" exited with code 2', "bun tsc --noEmit",
     ".next/types/v.ts(#,#): error TS#: Unexpected keyword or identifier."),
])
def test_a_task_runners_closing_line_is_not_the_error(output: str, command: str,
                                                      identity: str) -> None:
    """bun, npm, make and cargo end a failed script with a line of their own; the error is
    the one named above it (three scripts failing three ways are three errors), or none."""
    args = json.dumps({"command": command})
    assert error_identity(False, "exit code 1", output, args) == identity


def test_scripts_failing_for_different_reasons_behind_one_runner_are_no_recurring_error(
) -> None:
    engine = Engine()
    outputs = [
        ("bun run test", "error: expect(received).toBe(expected)\n" + BUN_CLOSE.format("test")),
        ("bun run lint", "3:5 error 'x' is never used\n" + BUN_CLOSE.format("lint")),
        ("bun run lint:fix", "TypeError: cannot read 'x'\n" + BUN_CLOSE.format("lint:fix")),
        ("bun run build", "error TS2322: Type 'string' is not assignable\n"
         + BUN_CLOSE.format("build")),
    ]
    for i, (command, output) in enumerate(outputs):
        call = {"call_id": f"c{i}", "tool": "Bash", "args": {"command": command}}
        assert engine.check(call, 1.0).action == "allow"
        found = engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": False,
                                "output": output, "error": "exit code 1"}, 1.0)
        assert found == []


def _shell_report(output: str, code: int, error: str = "(none)") -> str:
    """A shell command's result as Gemini CLI and Qwen Code give it to the model."""
    return (f"Command: make check\nDirectory: (root)\nOutput: {output}\nError: {error}\n"
            f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\n"
            "Process Group PGID: (none)")


def test_a_silent_failure_in_geminis_shell_report_names_no_error() -> None:
    """`Error: (none)` is the harness saying there was none: two silent failures of different
    commands are not "the same error"."""
    silent = _shell_report("(empty)", 1)
    assert error_identity(False, "Exit code 1", silent, '{"command": "make check"}') == ""
    grep = silent.replace("make check", 'grep -r "not found" .')
    assert error_identity(False, "Exit code 1", grep, '{"command": "grep"}') == ""


def test_geminis_shell_report_is_read_for_the_programs_own_words() -> None:
    failed = _shell_report("cc: error: missing.c: No such file or directory", 2)
    assert error_identity(False, "Exit code 2", failed, '{"command": "make check"}') == \
        "cc: error: missing.c: No such file or directory"
    assert error_source(False, "Exit code 2", failed) == "output"
    hidden = _shell_report("Traceback (most recent call last):\n  File \"t.py\", line 3\n"
                           "ValueError: bad", 0)
    assert failure_line(hidden) == "ValueError: bad"  # the exit status hid it, the output did not
    spawn = _shell_report("(empty)", 127, error="spawn bash EACCES: permission denied")
    assert error_identity(False, "Exit code 127", spawn, '{"command": "make check"}') == \
        "spawn bash EACCES: permission denied"


COLLECTION = ("============================= test session starts ==============================\n"
              "collecting ... collected 0 items / 1 error\n\n"
              "==================================== ERRORS ====================================\n"
              "_____________________ ERROR collecting tests/test_a.py ______________________\n"
              "ImportError while importing test module '/w/tests/test_a.py'.\n"
              "Traceback:\ntests/test_a.py:3: in <module>\n    {}\nE   {}\n"
              "=========================== short test summary info ============================\n"
              "ERROR tests/test_a.py\n"
              "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!")


@pytest.mark.parametrize(("output", "identity"), [
    # a tool that puts a heading above the error it reports (a browser automation server)
    ("### Error\nTypeError: page.fill is not a function", "TypeError: page.fill is not a function"),
    ("**Error:**\nReferenceError: require is not defined",
     "ReferenceError: require is not defined"),
    # a count of errors is no error; the compiler's line above it is
    ("gen.c:4:9: error: unknown type name 'u8'\n2 errors generated.",
     "gen.c:#:#: error: unknown type name 'u#'"),
    # pytest's collection error: its tally, section title and wrapper line are the same
    # whatever fails; the `E` line names the exception
    (COLLECTION.format("from pkg.a import A", "ModuleNotFoundError: No module named 'pkg.a'"),
     "E ModuleNotFoundError: No module named 'pkg.a'"),
    (COLLECTION.format("from .a import A", "ImportError: attempted relative import with no "
                       "known parent package"),
     "E ImportError: attempted relative import with no known parent package"),
])
def test_headings_tallies_and_section_titles_name_no_error(output: str, identity: str) -> None:
    assert error_identity(False, "Exit code 1", output, '{"command": "x"}') == identity


def _run_code(engine: Engine, i: int, code: str, output: str) -> list[str]:
    call = {"call_id": f"c{i}", "tool": "mcp__browser__run_code", "args": {"code": code}}
    check = engine.check(call, 1.0)
    found = engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": False,
                            "output": output}, 1.0)
    return [check.action, *[f.detector for f in [*check.findings, *found]]]


def test_different_errors_under_one_heading_do_not_recur() -> None:
    """Three scripts failing three ways, each reported under the tool's `### Error` heading:
    three errors, not one error three times (it was, and the fourth attempt was refused)."""
    engine = Engine()
    errors = ["TypeError: import() is not supported here", "ReferenceError: require is not "
              "defined", "Error: no file system access", "SyntaxError: Unexpected token '}'"]
    for i, error in enumerate(errors):
        assert _run_code(engine, i, f"async (page) => {{ /* try {i} */ }}",
                         f"### Error\n{error}") == ["allow"], i


def test_the_same_error_under_a_heading_still_recurs() -> None:
    engine = Engine()
    seen = [name for i in range(4) for name in _run_code(
        engine, i, f"async (page) => {{ return page.title{i}(); }}",
        "### Error\nTypeError: page.title is not a function")]
    assert "recurring_error" in seen


def test_two_missing_modules_the_call_names_are_two_errors() -> None:
    """`python -c "from a.b import c"`: the module is in the call, and it is the error; trying
    one import path, then another, is two errors (both were masked to one `<arg>`, and three
    tries of two paths drew a recurring error and a refusal of the fourth, which worked)."""
    def ident(module: str) -> str:
        args = json.dumps({"command": f'uv run python -c "from {module}.mock import m"'})
        return error_identity(False, "Exit code 1", "Traceback (most recent call last):\n"
                              '  File "<string>", line 1, in <module>\n'
                              f"ModuleNotFoundError: No module named '{module}'", args)

    assert ident("app.skills.review") != ident("app.skills.app_review")
    assert ident("app.review") == "ModuleNotFoundError: No module named 'app.review'"
    engine = Engine()
    for i, module in enumerate(["app.skills.app_review", "app.skills.review",
                                "app.skills.app_review", "app.review"]):
        call = {"call_id": f"c{i}", "tool": "Bash",
                "args": {"command": f'python -c "from {module}.mock import m"'}}
        assert engine.check(call, 1.0).action == "allow", i
        found = engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": False,
                                "output": f"ModuleNotFoundError: No module named '{module}'",
                                "error": "Exit code 1"}, 1.0)
        assert found == [], i


def _cargo_build(*errors: tuple[str, int, str, int, str]) -> str:
    """`cargo build`'s output (rustc 1.95) for mismatched types at (file, line, code, column,
    label): the gutter is as wide as the line number, as rustc prints it."""
    parts = ["   Compiling demo v0.1.0 (/r/demo)"]
    for file, line, code, col, label in errors:
        pad = " " * len(str(line))
        parts += ["error[E0308]: mismatched types", f"{pad}--> {file}:{line}:{col}",
                  f"{pad} |", f"{line} | {code}", f"{pad} | {' ' * (col - 1)}^ {label}", ""]
    parts += ["For more information about this error, try `rustc --explain E0308`.",
              f'error: could not compile `demo` (bin "demo") due to {len(errors)} previous '
              f"error{'s' if len(errors) > 1 else ''}"]
    return "\n".join(parts) + "\n"


UTIL = ("src/util.rs", 3, "    x / y", 9, "expected `u32`, found `i64`")
MAIN = ("src/main.rs", 9, "    t + s", 9, "expected `u32`, found `i32`")
MAIN_MOVED = ("src/main.rs", 12, "    t + s", 9, "expected `u32`, found `i32`")
"""The error of MAIN after three lines were added above it."""


def test_a_rust_errors_location_is_part_of_its_identity_its_line_is_not() -> None:
    """rustc's heading names the kind of error (`mismatched types`, the same for every
    mismatch); the file under it (`--> src/util.rs:3:9`) says which. Line and column move with
    every edit above the error, as a Python traceback's line numbers do."""
    args = '{"command": "cargo build"}'

    def ident(*errors: tuple[str, int, str, int, str]) -> str:
        return error_identity(False, "Exit code 101", _cargo_build(*errors), args)

    assert ident(UTIL) == "error[E#]: mismatched types --> src/util.rs"
    assert ident(UTIL) != ident(MAIN)
    assert ident(MAIN) == ident(MAIN_MOVED)
    rustc = _cargo_build(UTIL).replace(  # rustc run alone closes with its own tally
        'error: could not compile `demo` (bin "demo") due to 1 previous error',
        "error: aborting due to 1 previous error")
    assert failure_line(rustc) == "error: aborting due to 1 previous error"
    assert error_identity(False, "Exit code 1", rustc, '{"command": "rustc src/main.rs"}') == (
        ident(UTIL))


def test_a_rust_error_moved_by_an_edit_above_it_is_the_same_output() -> None:
    assert normalise_output(_cargo_build(MAIN)) == normalise_output(_cargo_build(MAIN_MOVED))
    assert normalise_output(_cargo_build(MAIN)) != normalise_output(_cargo_build(UTIL))


def test_mismatches_in_three_files_are_three_errors_not_one_recurring() -> None:
    """Three builds, each failing on a mismatch in another file (the agent fixing one file
    after another): they all read `error[E0308]: mismatched types`, and were one error three
    times (a nudge, and the fourth build refused)."""
    engine = Engine()
    files = [UTIL, MAIN, ("src/parse.rs", 41, "    n", 5, "expected `usize`, found `u64`"),
             ("src/lex.rs", 7, "    c", 5, "expected `char`, found `u8`")]
    for i, error in enumerate(files):
        call = {"call_id": f"c{i}", "tool": "Bash",
                "args": {"command": "cargo build" + " --quiet" * (i % 2)}}
        assert engine.check(call, 1.0).action == "allow", i
        found = engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": False,
                                "output": _cargo_build(error), "error": "Exit code 101"}, 1.0)
        assert found == [], i


def test_one_rust_error_moving_as_the_file_is_edited_still_recurs() -> None:
    engine = Engine()
    seen = []
    for i in range(3):
        moved = ("src/main.rs", 9 + 3 * i, "    t + s", 9, "expected `u32`, found `i32`")
        call = {"call_id": f"c{i}", "tool": "Bash",
                "args": {"command": "cargo build" + " --quiet" * (i % 2)}}
        seen.append(engine.check(call, 1.0).action)
        seen += [f.detector for f in engine.observe(
            {"type": "tool_result", "call_id": f"c{i}", "ok": False,
             "output": _cargo_build(moved), "error": "Exit code 101"}, 1.0)]
    assert "recurring_error" in seen


_PIECES = ["E: ", "error: ", "fatal: ", "ERROR", "FATAL", "make", "make[2]: *** ", "[Er]",
           "not found", "command ", "timed out", "cannot stat", "WARNING", "line 3: ", "x",
           ":", " ", "bash: ", "Error", "tim", "ed out", "\u017f", "K", "*** "]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_the_plain_tests_before_the_end_lines_expression_change_nothing(line: str) -> None:
    """`_at_the_end` tries plain tests before `_AT_THE_END` (a hook's path pays for the
    expression on each of a result's last lines): the same answer for every line, including
    the pieces each alternative of the expression needs, cut and mixed."""
    assert _at_the_end(line) == (_AT_THE_END.match(line) is not None)


@pytest.mark.parametrize("line", [
    "E: Unable to locate package foo", "bash: line 1: foo: command not found",
    "sh: foo: not found", "ERROR: the build timed out", "fatal: not a git repository",
    "error[E0425]: cannot find value", "cp: cannot stat 'a': No such file or directory",
    "make[1]: *** [all] Error 2", "the request timed out after 30 s"])
def test_a_last_line_that_says_the_call_failed_still_does(line: str) -> None:
    assert _at_the_end(line) and failure_line(f"some output\n{line}\n") == line


def _cargo_test(test: str, path: str, line: int, message: str, tid: int) -> str:
    """`cargo test`'s output (Rust 1.89: the thread's id in parentheses) for one failing test."""
    return (f"     Running unittests src/lib.rs (target/debug/deps/demo-1a2b3c4d)\n\n"
            f"running 2 tests\ntest {test} ... FAILED\ntest tests::other ... ok\n\nfailures:\n\n"
            f"---- {test} stdout ----\n\nthread '{test}' ({tid}) panicked at {path}:{line}:5:\n"
            f"{message}\n  left: 4\n right: 5\nnote: run with `RUST_BACKTRACE=1` environment "
            f"variable to display a backtrace\n\n\nfailures:\n    {test}\n\ntest result: FAILED. 1 "
            f"passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n"
            f"error: test failed, to rerun pass `--lib`\n")


def _cargo_run(path: str, line: int, message: str) -> str:
    return (f"     Running `target/debug/demo`\n\nthread 'main' panicked at {path}:{line}:37:\n"
            f"{message}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a "
            "backtrace\nerror: process didn't exit successfully: `target/debug/demo` (exit "
            "status: 101)\n")


def test_a_rust_panic_is_the_error_its_file_part_of_it_its_line_not() -> None:
    """A panic names its error as rustc does (b3f26c8): the message, and the file with line
    and column left out. Before, a test's panic was the `test x ... FAILED` line, and every
    panic of a program `cargo run` ran was cargo's `process didn't exit successfully` line:
    two different panics were one error."""
    run = '{"command": "cargo run"}'
    unwrap = _cargo_run("src/main.rs", 4, "called `Option::unwrap()` on a `None` value")
    assert error_identity(False, "Exit code 101", unwrap, run) == (
        "thread 'main' panicked: called `Option::unwrap()` on a `None` value --> src/main.rs")
    index = _cargo_run("src/parse.rs", 30, "index out of bounds: the len is 3 but the index "
                                           "is 7")
    assert error_identity(False, "Exit code 101", index, run) != error_identity(
        False, "Exit code 101", unwrap, run)
    moved = _cargo_run("src/main.rs", 9, "called `Option::unwrap()` on a `None` value")
    assert error_identity(False, "Exit code 101", moved, run) == error_identity(
        False, "Exit code 101", unwrap, run)
    old = ("thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', "
           "src/main.rs:4:37\nnote: run with `RUST_BACKTRACE=1` environment variable")
    assert error_identity(False, "Exit code 101", old, run) == error_identity(
        False, "Exit code 101", unwrap, run)  # before Rust 1.73: one line
    test = _cargo_test("tests::adds", "src/lib.rs", 12, "assertion `left == right` failed", 41)
    assert error_identity(False, "Exit code 101", test, '{"command": "cargo test"}') == (
        "thread 'tests::adds' panicked: assertion `left == right` failed --> src/lib.rs")


def test_a_rust_panic_moved_by_an_edit_or_run_again_is_the_same_output() -> None:
    """The thread's id (Rust 1.88 on) is another on every run, and an edit above the panic
    moves its line: `cargo test` answering the same was a new outcome every time."""
    one = _cargo_test("tests::adds", "src/lib.rs", 12, "assertion `left == right` failed", 41)
    two = _cargo_test("tests::adds", "src/lib.rs", 15, "assertion `left == right` failed",
                      122854532)
    assert normalise_output(one) == normalise_output(two)
    other = _cargo_test("tests::adds", "src/calc.rs", 12, "assertion `left == right` failed", 41)
    assert normalise_output(one) != normalise_output(other)


def test_a_dry_run_is_a_look_at_the_failing_command_not_another_try() -> None:
    """ponyc-4588 (shared corpus, step 37): `make` failed three ways alike, the agent read the
    Makefile, then asked make what it would run (`make -n build`), and recurring_error refused
    that as one more variation of the build. A dry run runs nothing: it is its own program
    (`shell.dry_run`), neither refused for the build's error nor ending it when it works."""
    engine = Engine()
    error = "/bin/sh: 1: cd: can't cd to /w/build/build_release\nmake: *** [Makefile:9: all] " \
            "Error 2"
    for i, line in enumerate(("make", "make clean && make", "rm -rf build && make")):
        call = {"call_id": f"c{i}", "tool": "Bash", "args": {"command": line}}
        assert engine.check(call, 1.0 + i).action == "allow", line
        engine.observe({"type": "tool_result", "call_id": f"c{i}", "ok": False,
                        "output": error, "error": "Exit code 2"}, 1.5 + i)
    dry = engine.check({"call_id": "d", "tool": "Bash", "args": {"command": "make -n build"}},
                       5.0)
    assert dry.action == "allow"
    engine.observe({"type": "tool_result", "call_id": "d", "ok": True,
                    "output": "cd build/build_release && make all"}, 5.5)
    again = engine.check({"call_id": "m", "tool": "Bash", "args": {"command": "make -j4"}}, 6.0)
    assert again.action == "block"  # the build itself still fails alike
