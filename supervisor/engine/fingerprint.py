"""Fingerprints of calls and outcomes, and the error class of a failed call.

- A call's signature is xxhash of the tool name and its canonical arguments: keys sorted, JSON
  formatting whitespace ignored, strings stripped, whitespace runs collapsed in command-like
  arguments, and volatile keys (a Bash `description`, a `timeout`) dropped.
- A shell call's run (`run_signature`) is the same without the output filters its line ends
  with: `pytest -x` and `pytest -x 2>&1 | tail -20` are one run seen through two filters.
- An outcome's hash is xxhash of the output normalised against noise that changes between two
  runs of the same thing: ANSI codes, timestamps, durations, hex ids and addresses, UUIDs,
  temp paths, process and process-group ids, the line numbers of a Python traceback, of a
  rustc diagnostic and of a Rust panic (they move with every edit; a panic's thread id changes
  on every run), a persistent shell's line counter, a harness's
  numbered trailer (Claude Code's `[rerun: b183]`) and its `Shell cwd was reset to ...` line,
  trailing whitespace.
- The error class names the kind of failure (`search_string_not_found`, `not_found`, ...), so
  "the same error with different arguments" can be seen.
"""

import json
import re
from collections.abc import Sequence
from typing import Any

import xxhash

from supervisor.engine.prescan import may_hold

CWD_RESET = r"Shell cwd was reset to \S.*"
"""The line Claude Code appends to a Bash result when the command left the project's directory
(`cd sub && pytest`: `Shell cwd was reset to /repo`): the harness's, not the program's, so it
is noise in an outcome (the same output with it and without it is one outcome; alone, it says
nothing) and a trailer to the failure reader (`failures.last_lines`)."""
_COMMAND_KEYS = frozenset({"command", "cmd", "pattern", "query", "regex", "url"})
_WS = re.compile(r"\s+")


def _canon(value: Any, key: str | None, ignore: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {
            str(k): _canon(v, str(k), ignore) for k, v in value.items() if str(k) not in ignore
        }
    if isinstance(value, list | tuple):
        return [_canon(v, key, ignore) for v in value]
    if isinstance(value, str):
        value = value.strip()
        return _WS.sub(" ", value) if key in _COMMAND_KEYS else value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                              default=str)
"""Made once: `canonical_args` runs on every call the engine checks."""


def canonical_args(args: Any, ignore: frozenset[str] = frozenset()) -> str:
    """The arguments as one canonical JSON string (see module docstring)."""
    try:
        return _CANONICAL.encode(_canon(args, None, ignore))
    except (ValueError, TypeError, RecursionError):
        return repr(args)


def call_signature(tool: str, canon: str) -> str:
    """xxhash (64-bit, hex) of the tool name and the canonical arguments."""
    return xxhash.xxh3_64_hexdigest(f"{tool}\0{canon}".encode("utf-8", "replace"))


def run_signature(tool: str, rest: str, run: Sequence[str]) -> str:
    """The identity of the run a shell call makes: xxhash of the tool, its canonical arguments
    other than the command (`rest`) and the run's words (`shell.run_words`: the line without
    the output filters it ends with). `python r.py` and `python r.py 2>&1 | tail -20` are one
    run and two calls: the rules that ask whether a check was run again (`ineffective_edits`)
    key on this, while anything comparing outputs keeps to the call's signature (a filter
    shows other lines of the same output)."""
    words = "\x1f".join(run)
    return xxhash.xxh3_64_hexdigest(f"{tool}\0run\0{rest}\0{words}".encode("utf-8", "replace"))


class _Lazy:
    """A regular expression compiled at its first use: a hook process that only checks a call
    (and never normalises an output) does not pay for compiling the output patterns."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return self._compiled


def _hex_id(match: re.Match[str]) -> str:
    word = match.group(0)
    has_digit = any(c.isdigit() for c in word)
    return "<HEX>" if has_digit and not word.isdigit() else word


_DIGITS = tuple("0123456789")
_NOISE: list[tuple[tuple[str, ...], _Lazy, Any]] = [
    # (substrings one of which must occur for the pattern to apply, pattern, replacement):
    # the cheap `in` checks skip most patterns on most outputs.
    # A pattern that would begin with `\b` begins with its first character class instead,
    # the boundary asked just after it (`\d(?<!\w\d)` is `\b\d`): `re` tries a pattern led
    # by `\b` at every position of the text, one led by a class only where the class matches:
    # the normalisation of the labelled corpora's 30,596 outputs took 5.5 s of CPU, not 9.0
    # (a third of their replay's time; every result of a live session pays it too).
    # curl's progress meter (speeds and times differ on every run)
    (("--:--:--", "Dload"), _Lazy(
        r"^.*(?:% Total +% Received|Dload +Upload|--:--:--"
        r"|\d+:\d\d:\d\d +\d+:\d\d:\d\d).*$", re.M), ""),
    # harness wrappers of an exit status ("<returncode>1</returncode>", "Exit code 1",
    # "[The command completed with exit code 1]")
    (("returncode", "xit code", "exit status"), _Lazy(
        r"<returncode>\s*-?\d+\s*</returncode>\n?|</?output>|^\[?(?:The command completed "
        r"with |Command finished with )?[Ee]xit (?:code|status):? ?-?\d+\]?\.?$\n?", re.M), ""),
    # progress bars (pip, tqdm, curl) and "real 0m1.234s" timing lines
    (("%|", "━", "█", "eta "), _Lazy(r"^.*(?:\d+%\||━|█|\beta \d).*$\n?", re.M), ""),
    (("real", "user", "sys"), _Lazy(r"^(?:real|user|sys)\s+\d+m[\d.]+s$\n?", re.M), ""),
    (("\x1b", "\r"), _Lazy(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\r"),
     ""),
    ((":",), _Lazy(
        r"\d(?<!\w\d)\d{3}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?"
        r"(?:Z|[+-]\d{2}:?\d{2})?"), "<TS>"),
    ((":",), _Lazy(r"\d(?<!\w\d)\d?:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<TIME>"),
    (("-",), _Lazy(
        r"[0-9a-fA-F](?<!\w[0-9a-fA-F])[0-9a-fA-F]{7}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}"
        r"-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"), "<UUID>"),
    (("0x",), _Lazy(r"\b0x[0-9a-fA-F]+\b"), "<ADDR>"),
    (_DIGITS, _Lazy(r"[0-9a-f](?<!\w[0-9a-f])[0-9a-f]{6,63}\b"), _hex_id),
    (("/tmp", "/var/"),
     _Lazy(r"(?:/tmp|/var/tmp|/private/var/folders|/var/folders)/[^\s'\":]+"), "<TMP>"),
    (("tmp",), _Lazy(r"\btmp[A-Za-z0-9_]{6,}\b"), "<TMP>"),
    # a process or process-group id ("pid 4242", "Process Group PGID: 977", as Gemini CLI
    # appends to every shell command's output)
    (("pid", "PID", "rocess", "GID"), _Lazy(r"\b(pid|PID|pgid|PGID|process|Process)([ =:#]+)\d+"),
     r"\1\2<PID>"),
    # the numbered trailer Claude Code 2.1.92-2.1.109 appended to every Bash result ("[rerun:
    # b183]", one more per command run): six `go mod tidy` with the same empty output were six
    # different outcomes (batch 8)
    (("[rerun: b",), _Lazy(r"^\[rerun: b\d+\]$\n?", re.M), ""),
    (("Shell cwd was reset",), _Lazy(rf"^{CWD_RESET}$\n?", re.M), ""),
    (_DIGITS, _Lazy(
        r"\d(?<!\w\d)\d*(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|m|min|minutes?|h)\b"),
     "<DUR>"),
    # a persistent shell's own line counter ("/bin/bash: line 11301: cd: x: No such file",
    # dash's "sh: 12: cd: can't cd to x") grows with every command it ran
    (("sh: ",), _Lazy(r"^((?:\S*/)?(?:ba|da|z|k)?sh: (?:line )?)\d+:", re.M), r"\1<N>:"),
    # traceback line numbers move with every edit of the file
    (("line ",), _Lazy(r'(File "[^"\n]+", line )\d+'), r"\1<N>"),
    # and so do rustc's: the line numbers of the code it shows (`12 |     t + s`), the gutter
    # whose width follows them (`   |`, `  --> `, `   = help:`), and its location line
    # (`--> src/main.rs:12:5`, `::: ...`)
    (("--> ",), _Lazy(r"^ *\d* ?(?=\||= )|^ *((?:-->|:::) \S+?):\d+:\d+$", re.M),
     lambda m: f"{m[1]}:<N>:<N>" if m[1] else ""),
    # and a Rust panic's: its location (`panicked at src/lib.rs:12:5:`) and the thread's id
    # that Rust 1.88 on prints before it (`thread 'tests::adds' (122854532)`, another per run)
    (("panicked at",), _Lazy(
        r"^(thread '[^'\n]*')(?: \(\d+\))?( panicked at (?:'.*', )?\S+?):\d+:\d+(:?)$", re.M),
     r"\1\2:<N>:<N>\3"),
    # element numbers of a browser page state are renumbered on every read of the same page
    (('"index"',), _Lazy(r'"index":\s*\d+'), '"index": <N>'),
    ((" \n", "\t\n"), _Lazy(r"[ \t]+$", re.M), ""),
]
_MAX_NORMALISE = 64 * 1024


def normalise_output(text: str) -> str:
    """`text` with run-to-run noise replaced by placeholders (see module docstring)."""
    if len(text) > _MAX_NORMALISE:
        text = text[: _MAX_NORMALISE // 2] + text[-_MAX_NORMALISE // 2 :]
    for needles, pattern, repl in _NOISE:
        # a plain loop, not `any(<generator>)`: the generator cost 5 us of every result's
        # 13 us here (a step's outcome is normalised on every result)
        for needle in needles:
            if needle in text:
                text = pattern.get().sub(repl, text)
                break
    return text.strip()


NO_RESULT = "no-result"
"""The outcome of a call whose result never came."""


def outcome_hash(ok: bool | None, output: str) -> str:
    """xxhash of success and the normalised output."""
    return outcome(ok, output)[0]


_NO_RESULT = _Lazy(
    r"(?:no (?:matches|files|results)(?: found)?|0 (?:matches|results)|nothing found)\W*", re.I)


def outcome(ok: bool | None, output: str) -> tuple[str, bool]:
    """(outcome hash, empty): `empty` when the output says nothing (blank, or only "No matches
    found" and the like), so two calls agreeing on it are not evidence of a loop."""
    normal = normalise_output(output)
    flag = "ok" if ok else "err"
    digest = xxhash.xxh3_64_hexdigest(f"{flag}\0{normal}".encode("utf-8", "replace"))
    return digest, not normal or bool(_NO_RESULT.get().fullmatch(normal))


_LAUNCH = _Lazy(
    r"\s*(?:Async agent launched|Command running in background|Background (?:task|job|agent|"
    r"process) (?:started|launched)|Started background (?:task|job|process)|"
    r"Agent (?:launched|started) in the background)\b", re.I)


def is_launch(output: str) -> bool:
    """Whether a call's output is only the acknowledgement that background work started (a
    Claude Code `Agent`/`Task` or `Bash` with `run_in_background`: "Async agent launched
    successfully. agentId: ...", "Command running in background with ID: ..."). Such an answer
    says nothing about the work: launches of fifteen sub-agents, each on its own files, are
    answered alike and are still fifteen different pieces of work (see `launch_outcome`)."""
    return bool(_LAUNCH.get().match(output[:200]))


_PENDING = _Lazy(
    r"\A\s*[{\[]?[^\n]{0,40}(?:\n[^\n]{0,200}){0,6}?"
    r"[\"']?(?:status|state)[\"']?\s*[:=]\s*[\"']?"
    r"(?:running|pending|queued|in[_ -]progress|processing)\b|"
    r"\b(?:still (?:running|in progress|processing)|continue polling|poll(?:ing)? again)\b", re.I)
_PENDING_WORDS = ("status", "state", "still ", "poll")
"""Words one of which every match of `_PENDING` holds (`prescan.may_hold`): its first
alternative, anchored but free to wander over the first lines, cost about 120 µs an output."""


def reports_pending(output: str) -> bool:
    """Whether a call's output is a status report saying the work it asked about is not done
    yet (an asynchronous job checked by its id: `"status": "running"` among the first lines,
    "Research in progress. Continue polling..."). The call waited on work already started:
    it is a poll, and the same "still running" again is no repeat of the agent's (a research
    task checked eight times until it answered `completed` was refused at its seventh check)."""
    head = output[:600]
    return may_hold(head, _PENDING_WORDS) and bool(_PENDING.get().search(head))


_WAITED_OUT = _Lazy(
    r"\A\s*[{\[]?[^\n]{0,40}?\bwait(?:ing)? timed out\b|"
    r"[\"']timed_out[\"']\s*:\s*true\b", re.I)


def waited_out(output: str) -> bool:
    """Whether a wait's answer says only that its time ran out before the work it waits on
    ended (Codex's `wait_agent`: `{"message":"Wait timed out.","timed_out":true}` while the
    sub-agents it spawned still work). For a poll that is "still running", not a failure: three
    such waits were one error three times to `recurring_error`, which refused the fourth wait,
    the one that completed. A wait that never ends is still caught, by `polling` (the same
    answer poll after poll)."""
    return bool(_WAITED_OUT.get().search(output[:600]))


def launch_outcome(signature: str) -> str:
    """The outcome of a launch: the call itself (what was launched), not its acknowledgement;
    the same launch again is the same outcome, a different one a new outcome."""
    return xxhash.xxh3_64_hexdigest(f"launch\0{signature}".encode())


_ERROR_CLASSES: list[tuple[str, tuple[str, ...], _Lazy]] = [
    # (class, lower-case keywords one of which must occur, pattern): checked in this order
    ("search_string_not_found",
     (
      "replacement", "verbatim", "to replace", "old_str", "search string", "match",
      "occurrences found", "expected lines",
     ),
     _Lazy(
        r"no replacement was performed|did not appear verbatim|string to replace not found|"
        r"old_str.{0,80}(?:not found|did not appear|is not unique)|search string not found|"
        r"could not find .{0,80}to replace|failed to (?:exactly )?match|no match(?:es)? found for"
        r"|SearchReplaceNoExactMatch"
        # Gemini CLI's replace, Codex's apply_patch (supervisor.engine.edits has them all)
        r"|could not find an exact match for|\b0 occurrences found|failed to find expected lines",
        re.I | re.S)),
    ("read_first",
     (
      "read yet", "read it first", "no file open", "command first", "must ",
     ),
     _Lazy(
        r"has not been read yet|read it first before|No file open|Use the `open` command first"
        r"|must (?:read|view|open) the file", re.I)),
    ("syntax_error",
     (
      "syntax", "indentation", "e999", "unexpected", "parse error",
     ),
     _Lazy(
        r"SyntaxError|IndentationError|syntax error|introduced new syntax error|E999|"
        r"unexpected (?:token|indent|EOF)|parse error", re.I)),
    ("command_not_found",
     (
      "not found", "not recognized", "no such command", "unknown command",
     ),
     _Lazy(
        r"command not found|not recognized as an internal or external command|"
        r"No such command|unknown command|Unknown command", re.I)),
    ("permission_denied",
     (
      "permission", "eacces", "not permitted", "eperm", "access is denied",
     ),
     _Lazy(
        r"permission denied|EACCES|operation not permitted|EPERM|access is denied", re.I)),
    ("timeout",
     (
      "time", "deadline", "took too long",
     ),
     _Lazy(
        r"timed out|time(?:d)?out|TimeoutError|TimeoutExpired|deadline exceeded|took too long",
        re.I)),
    ("module_not_found",
     (
      "module", "importerror",
     ),
     _Lazy(r"ModuleNotFoundError|ImportError|No module named", re.I)),
    ("not_found",
     (
      "no such", "notfound", "enoent", "does not exist", "not found", "no file open",
      "cannot find", "could not find", "404",
     ),
     _Lazy(
        r"no such file or directory|FileNotFoundError|ENOENT|does not exist|not found|"
        r"No file open|cannot find|could not find|404", re.I)),
    ("test_failure",
     (
      "assert", "fail",
     ),
     _Lazy(
        r"AssertionError|\bFAILED\b|\d+ failed|tests? failed|FAIL:", re.I)),
]
KNOWN_ERROR_CLASSES = frozenset(name for name, _, _ in _ERROR_CLASSES)
_EXCEPTION = _Lazy(r"^(\w+(?:Error|Exception)):", re.M)
_EXIT = _Lazy(r"(?:exit(?:ed)? (?:code|status)|returncode>?)\s*[:=]?\s*(-?\d+)", re.I)


def error_class(ok: bool | None, error: str | None, output: str) -> str:
    """The error class of a failed call ("" for a success)."""
    if ok:
        return ""
    text = f"{error or ''}\n{output[:3000]}\n{output[-2000:] if len(output) > 3000 else ''}"
    low = text.lower()
    for name, keywords, pattern in _ERROR_CLASSES:
        if any(k in low for k in keywords) and pattern.get().search(text):
            return name
    exc = _EXCEPTION.get().findall(text)
    if exc:
        return f"exception:{exc[-1]}"
    code = _EXIT.get().search(text)
    if code:
        return f"exit:{code.group(1)}"
    return "error"


GENERIC_ERROR_CLASSES = frozenset({"error", "exit:1", "exit:2"})
TRANSIENT_ERROR_CLASSES = frozenset({"timeout"})
"""Classes where one identical retry is legitimate (the stricter failure thresholds skip them)."""
"""Classes too unspecific for the same-error detector (e.g. grep's 'no match' exit status)."""


def output_hash(text: str) -> str:
    """The `output_hash` of a `tool_result`: xxh3-64 (hex) of the whole output's UTF-8 bytes.

    Every writer (guard, hook, importers) uses this one function, so the same output has the same
    hash whichever way it was recorded."""
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "replace"))
