"""Known error texts of agent tools that record no exit status, and the task line of a prompt.

SWE-agent's special commands and OpenHands' IPython helpers report failure only in their text.
These are the texts those tools really print (see docs/importers.md); anything else counts as
success, because a format that does not record an outcome must not have one invented for it.
"""

from __future__ import annotations

import re

# (pattern, error class); each is matched against the start of the output or of a line.
_KNOWN_ERRORS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.MULTILINE), label)
    for pattern, label in (
        (r"^\[?Your proposed edit has introduced new syntax error", "edit: syntax errors"),
        (r"^No file open\. Use the `?open`? command first", "no file open"),
        (r"^\[?No exact match found in ", "edit: no exact match"),
        (r"^No replacement was performed", "edit: no replacement performed"),
        (r"^ERROR:\s", "tool error"),
        (r"^Error: ", "tool error"),
        (r"^Usage: ", "usage error"),
        (r"^(?:bash: )?(?:line \d+: )?[^\s:]+: command not found$", "command not found"),
        (r"^File .{1,300} not found$", "file not found"),
        (r"^\[?File .{1,300} does not exist", "file not found"),
        (r"^Invalid `\w+` parameter", "invalid parameter"),
        (r"^EXECUTION TIMED OUT", "timeout"),
        (r"^The command .{0,300} was cancelled because it took more than", "timeout"),
        (r"^Traceback \(most recent call last\):", "python traceback"),
    )
)


assert all(pattern.pattern.startswith("^") for pattern, _label in _KNOWN_ERRORS)
_ANY_KNOWN_ERROR = re.compile(
    "\n(?:" + "|".join(f"({pattern.pattern[1:]})" for pattern, _label in _KNOWN_ERRORS) + ")",
    re.MULTILINE)
"""All of `_KNOWN_ERRORS` in one pattern, searched in the text after a newline: group i + 1 is
pattern i, and a line start is a newline (a literal first character, which the regex engine
skips to at C speed; `^` made it try every position, at several times the cost of parsing the
JSON the text came in). At a position the first pattern in order that matches wins, so the
lowest group over all matches is the first pattern that matches anywhere."""
_TRACEBACK = next(index for index, (_pattern, label) in enumerate(_KNOWN_ERRORS, 1)
                  if label == "python traceback")


def known_error(output: object) -> str | None:
    """The error class when the output starts with (or a line starts with) a known error text;
    the first of `_KNOWN_ERRORS` that does when several do.

    Only the first 4 KiB are looked at: tools print these messages first, and a long output
    that merely quotes one later (a test log) is not a failure of the call. A traceback counts
    only at the very start (a tool that failed with one prints nothing before it).
    """
    if not isinstance(output, str):
        return None
    text = "\n" + output[:4096].lstrip()
    best: int | None = None
    match = _ANY_KNOWN_ERROR.search(text)
    while match is not None:
        group = match.lastindex
        if group is not None and (group != _TRACEBACK or match.start() == 0):
            best = group if best is None else min(best, group)
            if best == 1:
                break
        match = _ANY_KNOWN_ERROR.search(text, match.start() + 1)  # lines a match ran into too
    return None if best is None else _KNOWN_ERRORS[best - 1][1]


_MARKERS = (
    re.compile(r"ISSUE:\s*\n"),
    re.compile(r"#+\s*Problem Statement\s*\n"),
    re.compile(r"Consider the following PR description:\s*\n"),
    re.compile(r"<pr_description>\s*\n"),
    re.compile(r"<issue_description>\s*\n"),
    re.compile(r"Please solve this issue:\s*"),
    re.compile(r"^Here is your task:\s*\n", re.MULTILINE),
)
_TAG_LINE = re.compile(r"^\s*</?[A-Za-z_][\w-]*>\s*$")


def task_line(prompt: object) -> str | None:
    """The problem statement's first line in a task prompt, skipping known boilerplate."""
    if not isinstance(prompt, str) or not prompt:
        return None
    text = prompt
    found = [m for m in (marker.search(text, 0, 3000) for marker in _MARKERS) if m]
    if found:
        text = text[min(found, key=lambda m: m.start()).end():]
        while True:  # markers that directly follow one another ("<pr_description>\nConsider...")
            stripped = text.lstrip()
            match = next((m for m in (k.match(stripped) for k in _MARKERS) if m), None)
            if not match:
                break
            text = stripped[match.end():]
    for line in text.splitlines():
        if line.strip() and not _TAG_LINE.match(line):
            return re.sub(r"</?[A-Za-z_][\w-]*>", "", line).strip()[:200] or None
    return None
