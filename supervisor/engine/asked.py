"""Commands the person's prompt spells out: a repetition the person asked for is not a loop.

The labelled corpus's rubric says so for interactive sessions ("run the tests again", "now
also..."), and held-out batch 6 shows the shape: a person asked for `bun tsc -b`, `bun tsc
--noEmit` and `bun tsc -b --noEmit` "all for good measure"; the three failed on one stale file,
and the engine counted them as the agent varying one failing command. A prompt starts a new
context already (`Engine.user_turn`), so the runs it asks for are compared with nothing before
it; what this module adds is that they are not counted against the agent after it either.

A shell line is asked for when the latest prompt holds it whole, or holds the run it makes
(`shell.run_text`: `pytest` of `pytest 2>&1 | tail -30`; the output filters the agent adds
only choose which lines of the output it reads): the same words (white space collapsed), not
part of a longer word or path, and not followed by more arguments (`pytest` is not asked for
by "run `pytest tests/test_a.py`", "bun tsc -b" is by "`bun tsc -b`, `bun tsc -b --noEmit`").
Each run the prompt names is asked for once: the person asked for one run of it, and a rerun,
through whichever filter, is the agent's own (the rerun after a fix, or a loop on it). Only
the prompt's first `PROMPT_CHARS` characters are kept (the engine's state stays bounded), and
lines shorter than `MIN_CHARS` are not matched (`ls`, `make` said in passing).
"""

import re
from collections.abc import Sequence

from supervisor.engine.shell import run_text

PROMPT_CHARS = 4000
MIN_CHARS = 6
_WS = re.compile(r"\s+")
_BEFORE = re.compile(r"(?:^|[\s`'\"(\[$>:])$")
_AFTER = re.compile(r"^(?:$|[`'\")\],;!?]|\.(?:\s|$)|:\s|\s+(?:[A-Za-z]+(?=[\s,;.!?:]|$)|[`'\"(]))")


def prompt_text(text: str) -> str:
    """What the engine keeps of a prompt: its start, white space collapsed."""
    return _WS.sub(" ", text[:PROMPT_CHARS]).strip()


def asked_for(prompt: str, line: str | None, used: list[str],
              run: Sequence[str] | None = None) -> str | None:
    """The run of the shell `line` (`shell.run_text`; `run`: its words, `shell.run_words`, when
    the caller read them), when the prompt asks for the line or that run and the run is not in
    `used` yet (see the module docstring); else None."""
    if not prompt or not isinstance(line, str):
        return None
    whole = _WS.sub(" ", line).strip()
    if not whole or whole.split(" ", 1)[0] not in prompt:
        return None  # (most calls: the prompt does not name their program; both forms start so)
    key = _WS.sub(" ", run_text(line, run))
    if key in used:
        return None
    for form in dict.fromkeys((whole, key)):
        if len(form) >= MIN_CHARS and _names(prompt, form):
            return key
    return None


def _names(prompt: str, want: str) -> bool:
    """Whether `prompt` names `want` whole (not part of a longer word, path or command)."""
    start = prompt.find(want)
    while start >= 0:
        end = start + len(want)
        if _BEFORE.search(prompt[max(0, start - 1):start]) and _AFTER.match(prompt[end:end + 40]):
            return True
        start = prompt.find(want, start + 1)
    return False
