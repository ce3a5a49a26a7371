"""Fingerprints of calls and outcomes, and the error class of a failed call.

- A call's signature is xxhash of the tool name and its canonical arguments: keys sorted, JSON
  formatting whitespace ignored, strings stripped, whitespace runs collapsed in command-like
  arguments, and volatile keys (a Bash `description`, a `timeout`) dropped.
- An outcome's hash is xxhash of the output normalised against noise that changes between two
  runs of the same thing: ANSI codes, timestamps, durations, hex ids and addresses, UUIDs,
  temp paths, PIDs, trailing whitespace.
- The error class names the kind of failure (`search_string_not_found`, `not_found`, ...), so
  "the same error with different arguments" can be seen.
"""

import json
import re
from typing import Any

import xxhash

_COMMAND_KEYS = frozenset({"command", "cmd", "code", "pattern", "query", "regex", "url"})
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


def canonical_args(args: Any, ignore: frozenset[str] = frozenset()) -> str:
    """The arguments as one canonical JSON string (see module docstring)."""
    try:
        return json.dumps(
            _canon(args, None, ignore), sort_keys=True, separators=(",", ":"),
            ensure_ascii=False, default=str,
        )
    except (ValueError, TypeError, RecursionError):
        return repr(args)


def call_signature(tool: str, canon: str) -> str:
    """xxhash (64-bit, hex) of the tool name and the canonical arguments."""
    return xxhash.xxh3_64_hexdigest(f"{tool}\0{canon}".encode("utf-8", "replace"))


_NOISE = [
    (re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\r"), ""),
    (re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    ), "<TS>"),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<TIME>"),
    (re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
     "<UUID>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<ADDR>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b"), "<HEX>"),
    (re.compile(r"(?:/tmp|/var/tmp|/private/var/folders|/var/folders)/[^\s'\":]+"), "<TMP>"),
    (re.compile(r"\btmp[A-Za-z0-9_]{6,}\b"), "<TMP>"),
    (re.compile(r"\b(pid|PID|process|Process)([ =:#]+)\d+"), r"\1\2<PID>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|us|ns|s|sec|secs|seconds?|m|min|minutes?|h)\b"),
     "<DUR>"),
    (re.compile(r"[ \t]+$", re.M), ""),
]
_MAX_NORMALISE = 64 * 1024


def normalise_output(text: str) -> str:
    """`text` with run-to-run noise replaced by placeholders (see module docstring)."""
    if len(text) > _MAX_NORMALISE:
        text = text[: _MAX_NORMALISE // 2] + text[-_MAX_NORMALISE // 2 :]
    for pattern, repl in _NOISE:
        text = pattern.sub(repl, text)
    return text.strip()


def outcome_hash(ok: bool | None, output: str) -> str:
    """xxhash of success and the normalised output."""
    flag = "ok" if ok else "err"
    text = f"{flag}\0{normalise_output(output)}"
    return xxhash.xxh3_64_hexdigest(text.encode("utf-8", "replace"))


_ERROR_CLASSES: list[tuple[str, re.Pattern[str]]] = [
    ("search_string_not_found", re.compile(
        r"no replacement was performed|did not appear verbatim|string to replace not found|"
        r"old_str.{0,80}(?:not found|did not appear|is not unique)|search string not found|"
        r"could not find .{0,80}to replace|failed to (?:exactly )?match|no match(?:es)? found for"
        r"|SearchReplaceNoExactMatch", re.I | re.S)),
    ("syntax_error", re.compile(
        r"SyntaxError|IndentationError|syntax error|introduced new syntax error|E999|"
        r"unexpected (?:token|indent|EOF)|parse error", re.I)),
    ("command_not_found", re.compile(
        r"command not found|not recognized as an internal or external command|"
        r"No such command|unknown command|Unknown command", re.I)),
    ("permission_denied", re.compile(
        r"permission denied|EACCES|operation not permitted|EPERM|access is denied", re.I)),
    ("timeout", re.compile(
        r"timed out|time(?:d)?out|TimeoutError|TimeoutExpired|deadline exceeded|took too long",
        re.I)),
    ("module_not_found", re.compile(r"ModuleNotFoundError|ImportError|No module named", re.I)),
    ("not_found", re.compile(
        r"no such file or directory|FileNotFoundError|ENOENT|does not exist|not found|"
        r"No file open|cannot find|could not find|404", re.I)),
    ("test_failure", re.compile(
        r"AssertionError|\bFAILED\b|\d+ failed|tests? failed|FAIL:", re.I)),
]
_EXCEPTION = re.compile(r"^(\w+(?:Error|Exception)):", re.M)
_EXIT = re.compile(r"(?:exit(?:ed)? (?:code|status)|returncode>?)\s*[:=]?\s*(-?\d+)", re.I)


def error_class(ok: bool | None, error: str | None, output: str) -> str:
    """The error class of a failed call ("" for a success)."""
    if ok:
        return ""
    text = f"{error or ''}\n{output[:3000]}\n{output[-2000:] if len(output) > 3000 else ''}"
    for name, pattern in _ERROR_CLASSES:
        if pattern.search(text):
            return name
    exc = _EXCEPTION.findall(text)
    if exc:
        return f"exception:{exc[-1]}"
    code = _EXIT.search(text)
    if code:
        return f"exit:{code.group(1)}"
    return "error"


GENERIC_ERROR_CLASSES = frozenset({"error", "exit:1", "exit:2"})
"""Classes too unspecific for the same-error detector (e.g. grep's 'no match' exit status)."""
