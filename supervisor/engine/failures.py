"""Whether a call failed, by its output as well as its flag, and which error it was.

Harnesses report success by exit status, and real agents hide failures from it: a script piped
into `tail` exits 0 after a traceback, a tool prints `No replacement was performed` and reports
success. So a call fails when the harness says so, or when its output says so in one of a few
unmistakable ways (`failure_line`); when the output says nothing, the flag stands.

The **error identity** of a failed call is the line that names the error (a traceback's last
line, the first error line of a tool), normalised so that the same error is the same string
whatever the call's arguments were: digits, hex ids and temp paths masked, and quoted text
masked where it repeats the call's own arguments (or is long enough, 40 characters or a
quotation the line does not close, to be the input echoed back), as is the text after the
line's last colon ("String to replace not found: foo" and "...: bar" are one error; two
different missing modules are two, and so are two different missing files named mid-line).
"""

import re
from collections.abc import Callable

from supervisor.engine.fingerprint import CWD_RESET
from supervisor.engine.prescan import may_hold

_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::.*)?$")
_ANYWHERE = re.compile(
    r"No replacement was performed|<tool_use_error>|did not appear verbatim|"
    r"Parameter `?\w+`? is required|"
    r"\A(?:Command )?timed out\b", re.I)  # a harness's report of a time-out, before the output
_ANYWHERE_WORDS = ("no replacement was performed", "<tool_use_error>", "did not appear verbatim",
                   " is required", "timed out")
"""Words one of which every match of `_ANYWHERE` holds (lower case): an output holding none
is not searched (`prescan.may_hold`)."""
_AT_THE_END = re.compile(
    r"^E: .+|"                                            # apt
    r"^(?:\S+: )?(?:line \d+: )?\S+: (?:command )?not found$|"  # bash / sh
    r"^.*\bcommand not found\b.*$|"
    r"^(?!WARNING).*\btimed out\b.*$|"                    # not pip's retry warnings
    r"^(?:error|fatal|ERROR|FATAL)(?:\[\w+\])?: .+$|"
    r"^.*\bcannot stat\b.*$|"
    r"^make(?:\[\d+\])?: \*\*\* .+$",
)
_AT_THE_END_STARTS = ("E: ", "error", "fatal", "ERROR", "FATAL", "make")
"""How a line `_AT_THE_END` matches by its start begins (`_at_the_end`)."""
_ERRORISH = re.compile(r"error|cannot|can't|failed|not found|no such|denied|invalid|unable|"
                       r"refused|not exist|timed out|traceback|unrecognized", re.I)
_WARNING = re.compile(r"^\W*(?:warning|warn|deprecat|note|hint|info)\b", re.I)
_NAMES_NO_ERROR = re.compile(
    r"^[\W_]*(?:errors?|failures?|failed|exceptions?|stderr)[\W_]*$|"  # `### Error`, `ERRORS:`
    r"^[=_*#-]{3,}\s.*\s[=_*#-]{3,}$", re.I)  # a section title: `____ ERROR collecting a.py ____`
"""Lines that read like an error and name none: a heading or label (Playwright's `### Error`
above the error it reports, pytest's `==== ERRORS ====`) and a section title between rules
(pytest's `____ ERROR collecting tests/a.py ____`, the same before every collection error of
that file). Taken for the error, they made different errors one."""
_TALLY = re.compile(r"(?<![\w:.,(])\d+\s+(?:errors?|failed|failures?|warnings?)\b", re.I)
"""A count of errors (`collected 0 items / 2 errors`, `2 errors generated.`) says how many, not
which: a line that reads like an error only by its counts names none (a number after `:` is a
position, eslint's `3:5  error  ...`)."""
_MISSING_MODULE = re.compile(r"\bNo module named\b")
"""A missing module's line: the module is the error, even where the call names it (`python -c
"from a.b import c"`), so its name is never masked as the call's echo: trying `a.b`, then `a.c`
is two errors, not one error twice."""
_PYTEST_E = re.compile(r"^E\s+(\S.*)$", re.M)
"""pytest's `E   ` lines, the exception its report names (a collection error's
`E   ModuleNotFoundError: No module named 'x'`, below the file's section title)."""
_RUST_HEADING = re.compile(r"^error(?:\[E\d+\])?: ")
_RUST_LOCATION = re.compile(r"^--> (.+?):\d+:\d+$")
"""rustc's heading of an error and the location line under it (`--> src/main.rs:12:5`)."""
_PANIC = re.compile(
    r"^thread '([^'\n]*)'(?: \(\d+\))? panicked at "
    r"(?:'(.*)', (\S+?):\d+:\d+|(\S+?):\d+:\d+:(?:\n(.*))?)$", re.M)
"""A Rust panic: `thread 'tests::adds' (1234) panicked at src/lib.rs:12:5:` over its message
(Rust 1.73 on; the thread id since 1.88), or `thread 'main' panicked at 'msg', src/main.rs:4:9`
before. The first names the file and the message the error."""
_BARE_STATUS = re.compile(r"(?:(?:exit(?:ed)? (?:with )?)?(?:code|status|return ?code)\s*:?\s*)?"
                          r"-?\d+|error|failed|failure|command failed", re.I)
_LAST_LINES = 3
_HEAD = 4096
_TRAILER = re.compile(
    r"^\[(?:The command |Command |Current working directory|Python interpreter|Exit code|"
    r"Below is the output)[^\]]*\]?$|^</?output>$|^<returncode>-?\d+</returncode>$|"
    r"^(?:exit(?:ed)? (?:with )?)?(?:exit )?(?:code|status):? ?-?\d+\.?$|" rf"^{CWD_RESET}$",
    re.I)
"""A harness's own lines after a command's output (OpenHands' `[The command completed with
exit code 1.]`, its working-directory and interpreter lines, `<returncode>1</returncode>`,
Claude Code's `Shell cwd was reset to /repo`: `fingerprint.CWD_RESET`):
they are not the program's last words, so they are skipped when looking for them."""
_RUNNER = re.compile(
    r"^error: (?:script )?\"[^\"]*\" exited with code -?\d+|"  # bun run, bun x
    r"^(?:npm (?:ERR!|error)|ERR_PNPM_\w+|\S* ?ERR_PNPM_|\S+ ERR!)(?:\s|$)|"  # npm, pnpm
    r"^(?:\S+\s+)?ELIFECYCLE\b|"                                   # pnpm, older npm
    r"^(?:error |\S+: )?Command failed with exit code -?\d+|"         # yarn, pnpm
    r"^info Visit https://yarnpkg\.com/|"
    r"^make(?:\[\d+\])?: \*\*\* \[[^\]]*\] Error -?\d+$|"         # make
    r"^error: [Rr]ecipe `[^`]*` failed|"                               # just
    r"^error: (?:test failed, to rerun pass|could not compile `|"     # cargo
    r"process didn't exit successfully: |"
    r"\d+ targets? failed|aborting due to (?:\d+ )?previous errors?\b)|"  # and rustc
    r"^exit status -?\d+$|^FAIL\s*$|"                                 # go test
    r"^Error: Process completed with exit code -?\d+|"
    r"^(?:Task|Script) .{0,80} (?:failed|exited) with (?:exit )?code -?\d+")
"""A task runner's closing lines after the program it ran failed (`bun run`, npm, pnpm, yarn,
make, just, cargo, go): they say which script failed and with what status, never why, so a
test run, a lint run and a build that fail for three different reasons all end with the same
line (cargo's `process didn't exit successfully` under every panic of the program it ran).
They still mark the call as failed; its error is named by the lines above them
(`error_line`)."""
_FRAME_LINE = re.compile(r'^[ \t]*File "[^"\n]+", line \d+.*$', re.M)
"""A Python traceback's frame line (`  File "/testbed/t.py", line 12, in <module>`)."""
_FRAME = re.compile(r"^(?:Traceback \(most recent call last\):|During handling of the above|"
                    r"The above exception was the direct cause|File \"|\s)")
_EXCEPTION_HEAD = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?::\s.*|:)?$")


_ENVELOPE = re.compile(
    r"Command: .*?\nOutput: (?P<out>.*)\nError: (?P<err>[^\n]*)\nExit Code: -?\d+", re.S)


def program_output(output: str) -> str:
    """The program's own words in `output`: the whole of it, except in the shell report of
    Gemini CLI and Qwen Code, whose field lines are the harness's (`Error: (none)` there means
    no error: read as an error line, every silent failure would be "the same error")."""
    if not output.startswith("Command: "):
        return output
    found = _ENVELOPE.match(output)
    if found is None:
        return output
    words = [text for text in (found["out"].strip(), found["err"].strip())
             if text not in ("(empty)", "(none)", "")]
    return "\n".join(words)


def failure_line(output: str) -> str | None:
    """The line of `output` that says the call failed, or None when it says no such thing.

    A Python traceback counts when its exception line is among the last lines, with its
    header or without it (`_cut_traceback_exception`: a filter cut it off); a traceback printed
    and survived is not a failure of the call, and neither is a caught error's report (`Error:
    ...` from a script that exits 0: a reproduction shows the bug with it, docs/engine.md);
    tool refusals (`No replacement was
    performed`, `<tool_use_error>`) count anywhere in the first 4 KiB, a harness's time-out
    report when the output starts with it (Zed's `Timed out. New output: ...`); `E:` lines of apt,
    `command not found`, `timed out`, `error:`/`fatal:` lines, `cannot stat` and make's `***`
    count when they are among the last lines, where a command's final status is printed.
    """
    return _failure_line(program_output(output))


def _failure_line(output: str) -> str | None:
    """`failure_line` of the program's own words (`program_output` already applied)."""
    if not output:
        return None
    head = output[:_HEAD]
    found = _ANYWHERE.search(head) if may_hold(head, _ANYWHERE_WORDS) else None
    if found:
        return _line_at(head, found.start())
    last = last_lines(output)
    if _TRACEBACK in output:
        exc = traceback_exception(output)
        if exc and exc in last:
            return exc
        for line in reversed(last):
            if _EXCEPTION_LINE.match(line):
                return line
    else:
        exc = _cut_traceback_exception(output)
        if exc and exc in last:
            return exc
    for line in reversed(last):
        if _at_the_end(line):
            return line
    return None


def _at_the_end(line: str) -> bool:
    """`_AT_THE_END` matches `line`. Each of its alternatives needs the line to start with one
    of `_AT_THE_END_STARTS` or to hold `not found`, `timed out` or `cannot stat`, which most
    last lines do not: those plain tests first (about 0.3 us a line, where the expression's
    `^.*\\b...` alternatives cost 3-7 us a line, three lines a tool result, on every hook's
    path)."""
    return (line.startswith(_AT_THE_END_STARTS) or "not found" in line or "timed out" in line
            or "cannot stat" in line) and _AT_THE_END.match(line) is not None


def last_lines(output: str) -> list[str]:
    """The last non-blank lines of `output` (stripped), a harness's trailer lines left out."""
    tail = [line.strip() for line in output[-_HEAD:].splitlines() if line.strip()]
    while tail and _TRAILER.match(tail[-1]):
        tail.pop()
    return tail[-_LAST_LINES:]


def traceback_exception(output: str) -> str | None:
    """The exception line that ends the last Python traceback of `output` (for a chained
    traceback, the final exception; never the `Traceback (most recent call last):` header),
    or None when there is no traceback or no such line after it."""
    start = output.rfind(_TRACEBACK)
    if start < 0:
        return None
    for line in output[start:].splitlines()[1:]:
        if not line.strip() or _FRAME.match(line):
            continue
        if _TRAILER.match(line.strip()):
            return None
        if _EXCEPTION_HEAD.match(line.strip().split(" ", 1)[0].rstrip(":") + ":"):
            return line.strip()
        return None
    return None


def _cut_traceback_exception(output: str) -> str | None:
    """The exception line that ends a Python traceback without its `Traceback (most recent
    call last):` header: one a filter cut (`python t.py 2>&1 | tail -30`, exit status 0), or
    a syntax error in the script run, which Python reports with its frame and no header. It is
    the first line after the last frame (`File "t.py", line 3, in f`) that is not the frame's
    source or caret lines, when it reads as an exception (`_EXCEPTION_LINE`); None otherwise.
    Frames then an exception line are Python's report of a crash, header or not."""
    tail = output[-_HEAD:]
    if '", line ' not in tail:  # no frame: the usual output, told apart without a regex
        return None
    frames = list(_FRAME_LINE.finditer(tail))
    if not frames:
        return None
    for line in tail[frames[-1].end():].splitlines()[1:]:
        if not line.strip() or line[0].isspace():
            continue  # the frame's source line and its `^^^^` markers
        return line.strip() if _EXCEPTION_LINE.match(line.strip()) else None
    return None


def _line_at(text: str, index: int) -> str:
    start = text.rfind("\n", 0, index) + 1
    end = text.find("\n", index)
    return text[start: end if end >= 0 else len(text)].strip()


_QUOTED = re.compile(r"'([^'\n]{1,200})'|\"([^\"\n]{1,200})\"|`([^`\n]{1,200})`")
_ARG_VALUE = re.compile(r'"((?:[^"\\]|\\.){8,2000})"(?!:)')
"""A string value (not a key) of the canonical arguments (JSON), long enough (8 characters)
not to be a common word when an error line repeats it."""
_ECHO_MIN = 8
_UNCLOSED_CHARS = 20
_ECHO_CHARS = 40
"""Quoted text this long in an error line is the call's input echoed back, whatever it is."""
_HEX = re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b")
_TMP = re.compile(r"(?:/tmp|/var/tmp|/private/var/folders|/var/folders)/[^\s'\":]+|"
                  r"\btmp[A-Za-z0-9_]{6,}\b")
_DIGITS = re.compile(r"\d+")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|"
                   r"[\x00-\x08\x0b-\x1f]")
_WS = re.compile(r"\s+")
_IDENTITY_CHARS = 200


_PASS_VERDICT = re.compile(
    r"^(?:=+ )?(?:\d+ passed\b.*|finished\b.*|ok\b.*|pass(?:ed)?|all checks passed!?|"
    r"success\b.*|build succeeded\b.*|compiled successfully\b.*|"
    r".*\bno (?:issues|errors|problems) found\b.*)$", re.I)
_NOTHING_WRONG = re.compile(r"\b(?:no|0) (?:errors?|failures?|failed|issues|problems)\b", re.I)
_SOMETHING_WRONG = re.compile(r"\b(?:fail\w*|errors?|exception|warnings? as errors)\b", re.I)


def reports_success(last_line: str) -> bool:
    """Whether a run's last line is a checker's verdict that all is well: a build that
    `Finished`, `5 passed in 0.1s`, go's `ok pkg`, unittest's `OK`, `All checks passed!`,
    `Success: no issues found`. The same verdict after edits says they kept what they had to keep
    (a refactoring checked after each part), not that they had no effect."""
    line = last_line.strip()
    return bool(_PASS_VERDICT.match(line)) and not _SOMETHING_WRONG.search(
        _NOTHING_WRONG.sub("", line))


def error_source(ok: bool | None, error: str | None, output: str) -> str:
    """Who named the error: "output" (the program said it) or "harness" (only the harness's
    error text did: the command timed out, could not run), "" for a success."""
    if ok:
        return ""
    line = error_line(ok, error, output)
    if line and error and line == error.strip().splitlines()[0] \
            and line not in program_output(output):
        return "harness"
    return "output"


def error_line(ok: bool | None, error: str | None, output: str) -> str:
    """The raw line naming the error of a failed call: the output's failure line, else the
    exception of pytest's first `E   ` line, else the first line that reads like an error and
    names one (not a warning, a heading or a count of errors; a Rust panic first:
    `_panic_line`), else the harness's error text; ""
    for a success, and for a failure that says nothing but its exit status (that names no
    error: `grep` finding nothing and a crashing build are not the same error). A task
    runner's closing line (`_RUNNER`: `error: script "test" exited with code 1`) names no
    error either: the error is the one the lines above it name, or none."""
    if ok:
        return ""
    output = program_output(output)
    line = _failure_line(output) or traceback_exception(output)
    runner = line is not None and _RUNNER.match(line) is not None
    if runner:  # a task runner's closing line: the error is named above it, or nowhere
        output = _without_runner_lines(output)
        line = _failure_line(output) or traceback_exception(output)
    if line:
        return line
    for found in _PYTEST_E.finditer(output[-_HEAD:]):
        if _EXCEPTION_LINE.match(found[1].strip()):
            return f"E {found[1].strip()}"
    if "panicked at " in output:
        panic = _PANIC.search(output[-_HEAD:])
        if panic:
            return _panic_line(panic)
    lines = [x.strip() for x in output[-_HEAD:].splitlines() if x.strip()]
    for i, x in enumerate(lines):
        if (_names_an_error(x) and not _WARNING.match(x) and not _FRAME.match(x)
                and not _TRAILER.match(x) and not _RUNNER.match(x)):
            return _with_location(x, lines[i + 1] if i + 1 < len(lines) else "")
    text = "" if runner else (error or "").strip()
    if text and not _BARE_STATUS.fullmatch(text):
        return text.splitlines()[0]
    return ""


def _with_location(line: str, below: str) -> str:
    """A rustc diagnostic's heading with the file of the location below it (`error[E0308]:
    mismatched types` over `--> src/util.rs:3:9`: `... --> src/util.rs`). The heading names the
    kind of error, the same for every mismatch anywhere (its specifics are in the labels under
    the code), so two errors in two files were one error; the line and column are left out, as
    a Python traceback's line numbers are (`fingerprint`), since an edit above the error moves
    them and it is still the same error."""
    found = _RUST_LOCATION.match(below) if _RUST_HEADING.match(line) else None
    return f"{line} --> {found[1]}" if found else line


def _panic_line(found: re.Match[str]) -> str:
    """A Rust panic as its error (`_PANIC`): the thread, the message and the file, as a rustc
    diagnostic's heading and file (`_with_location`): `thread 'main' panicked: called
    `Option::unwrap()` on a `None` value --> src/main.rs`. Line and column are left out (an
    edit above moves them), and so is the thread's id (another on every run)."""
    name, message, path = found[1], found[2], found[3]
    if path is None:
        message, path = (found[5] or "").strip(), found[4]
    return f"thread '{name}' panicked{': ' + message if message else ''} --> {path}"


def _names_an_error(line: str) -> bool:
    """Whether a line reads like an error and names one (not a heading, a section title or a
    count of errors: `_NAMES_NO_ERROR`, `_TALLY`)."""
    return not _NAMES_NO_ERROR.match(line) and bool(_ERRORISH.search(_TALLY.sub("", line)))


def _without_runner_lines(output: str) -> str:
    """`output` without the task runner's closing lines (`_RUNNER`), wherever they are (npm
    prints its block after the script's own output, pnpm one line before it)."""
    return "\n".join(line for line in output[-_HEAD:].splitlines()
                     if not _RUNNER.match(line.strip()))


def error_identity(ok: bool | None, error: str | None, output: str, args: str) -> str:
    """The normalised error line of a failed call ("" for a success); `args` is the call's
    canonical arguments, whose quoted parts are masked where the line repeats them."""
    line = error_line(ok, error, output)
    if not line:
        return ""

    def mask(match: re.Match[str]) -> str:
        text = next(g for g in match.groups() if g is not None).strip()
        echoed = text in args or len(text) >= _ECHO_CHARS
        return "<arg>" if text and echoed else match.group(0)

    line = _ANSI.sub("", line[:1000])  # a terminal's escape codes (bracketed paste) are noise
    if not _MISSING_MODULE.search(line):
        line = _without_echoes(line, args, mask)
    line = _TMP.sub("<tmp>", line)
    line = _HEX.sub("<hex>", line)
    line = _DIGITS.sub("#", line)
    return _WS.sub(" ", line).strip()[:_IDENTITY_CHARS]


def _without_echoes(line: str, args: str, mask: Callable[[re.Match[str]], str]) -> str:
    """`line` with the call's own arguments masked where it repeats them."""
    line = _QUOTED.sub(mask, line)
    for value in sorted(_ARG_VALUE.findall(args), key=len, reverse=True):
        value = value.replace('\\"', '"').replace("\\n", "\n").strip()
        if len(value) >= _ECHO_MIN and value in line:  # the call's own argument, echoed
            line = line.replace(value, "<arg>")
    for quote in "`'\"":  # a quotation the line does not close: a multi-line echo
        if line.count(quote) % 2 and len(line) - line.rfind(quote) > _UNCLOSED_CHARS:
            line = line[: line.rfind(quote)] + "<arg>"
    head, sep, last = line.rpartition(": ")
    if sep and last.strip() and last.strip() in args:  # "String to replace not found: foo"
        line = f"{head}: <arg>"
    return line


def is_test_report(error_class: str, error_id: str) -> bool:
    """Whether a failure is a test runner's report of failing tests (class `test_failure`,
    pytest's `E ...` / `FAILED ...` lines): the bug under repair, whose numbers (how many
    tests fail) are information, so its masked identity is not enough to call two reports the
    same."""
    return error_class == "test_failure" or error_id.startswith(("E ", "FAILED "))

