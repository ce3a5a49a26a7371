"""Commands the person's prompt spells out: a repetition the person asked for is not a loop.

The labelled corpus's rubric says so for interactive sessions ("run the tests again", "now
also..."), and held-out batch 6 shows the shape: a person asked for `bun tsc -b`, `bun tsc
--noEmit` and `bun tsc -b --noEmit` "all for good measure"; the three failed on one stale file,
and the engine counted them as the agent varying one failing command. A prompt starts a new
context already (`Engine.user_turn`), so the runs it asks for are compared with nothing before
it; what this module adds is that they are not counted against the agent after it either.

A shell line is asked for when the latest prompt holds it whole: the same words (white space
collapsed), not part of a longer word or path, and not followed by more arguments (`pytest` is
not asked for by "run `pytest tests/test_a.py`", "bun tsc -b" is by "`bun tsc -b`, `bun tsc
-b --noEmit`"). Each line the prompt names is asked for once: the person asked for one run of
it, and a rerun is the agent's own (the rerun after a fix, or a loop on the same line). Only
the prompt's first `PROMPT_CHARS` characters are kept (the engine's state stays bounded), and
lines shorter than `MIN_CHARS` are not matched (`ls`, `make` said in passing).
"""

import re

PROMPT_CHARS = 4000
MIN_CHARS = 6
_WS = re.compile(r"\s+")
_BEFORE = re.compile(r"(?:^|[\s`'\"(\[$>:])$")
_AFTER = re.compile(r"^(?:$|[`'\")\],;!?]|\.(?:\s|$)|:\s|\s+(?:[A-Za-z]+(?=[\s,;.!?:]|$)|[`'\"(]))")


def prompt_text(text: str) -> str:
    """What the engine keeps of a prompt: its start, white space collapsed."""
    return _WS.sub(" ", text[:PROMPT_CHARS]).strip()


def asked_for(prompt: str, line: str | None, used: list[str]) -> str | None:
    """The shell `line` as the prompt names it, when the prompt asks for it and that request
    is not in `used` yet (see the module docstring); else None."""
    if not prompt or not isinstance(line, str):
        return None
    want = _WS.sub(" ", line).strip()
    if len(want) < MIN_CHARS or want in used:
        return None
    start = prompt.find(want)
    while start >= 0:
        end = start + len(want)
        if _BEFORE.search(prompt[max(0, start - 1):start]) and _AFTER.match(prompt[end:end + 40]):
            return want
        start = prompt.find(want, start + 1)
    return None
