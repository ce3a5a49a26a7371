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


def known_error(output: object) -> str | None:
    """The error class when the output starts with (or a line starts with) a known error text.

    Only the first 4 KiB are looked at: tools print these messages first, and a long output
    that merely quotes one later (a test log) is not a failure of the call.
    """
    if not isinstance(output, str):
        return None
    head = output[:4096].lstrip()
    for pattern, label in _KNOWN_ERRORS:
        match = pattern.search(head)
        if match and (match.start() == 0 or label != "python traceback"):
            return label
    return None


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
