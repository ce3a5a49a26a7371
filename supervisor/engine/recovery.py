"""The recovery turn: the first nudge of a loop asks the agent to step back, from the evidence.

Gemini CLI answers its first loop detection with one "recovery" turn instead of a generic
warning; this is ours. The engine puts it in place of a loop detector's level-1 message
(`Engine._detect`); it is built only from the steps the finding cites (by their `#seq`, the
finding's evidence), and names them as the model knows them, by the call and how many times,
never by the supervisor's event numbers (which the model cannot resolve):

- **what was tried**: the calls (identical calls said once, with how many times); for edits
  that did not change a test's output, the edits between the runs;
- **what stayed the same**: the same error line (the error identity), or the same output (the
  same outcome hash; its last line when the step kept one); that the workspace did not change
  between identical calls; that a file went back to earlier content;
- **one concrete different next step**: for what the detector saw (edits without effect, a
  file going back and forth), else for the error every attempt had, else for the kind of tool
  that looped (edits, runs, reads, polls).

Short: at most `RECOVERY_CHARS` characters. The guard adds the file region of a failed edit
after it (`supervisor.guard.core`), within the same budget.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from supervisor.engine.fingerprint import normalise_output
from supervisor.engine.guidance import ERROR_ADVICE, times_text
from supervisor.safetext import quote

RECOVERY_CHARS = 1200
"""The whole recovery turn, a file region the guard adds included."""
STEP_BACK_CHARS = 700
"""The recovery text itself: the rest of `RECOVERY_CHARS` is left to the file region."""
HEADLINE = "Loop: step back."
"""How every recovery turn begins (the guard fits a failed edit's region after it)."""
_CALL_CHARS = 80
_LINE_CHARS = 120
_TRIED_SHOWN = 4

NEXT_STEP: dict[str, str] = {
    "mutate": "read the lines you are changing as they are now, then make one edit that copies "
              "them exactly",
    "run": "change what the command depends on before running it again, or run a narrower "
           "version of it (one test, with -x -vv) that tells you something new",
    "read": "use what you already read, or look elsewhere: search for another name or in "
            "another directory (grep -rn NAME .)",
    "poll": "check whether the process is still alive (ps, its log) instead of polling again",
    "other": "write down what you know and what you have not tried yet, then take one "
             "different step",
}
"""One concrete different step per kind of tool (`categories.classify`)."""
NEXT_FOR_DETECTOR: dict[str, str] = {
    "ineffective_edits": "the code you edit may not be the code that runs: find out which "
                         "code the run really executes (the last frame of your code "
                         "in the traceback, or print(module.__file__)) before the next edit",
    "blind_search": "the files you searched for exist (you opened or wrote them): check the "
                    "working directory (pwd) and search from the project root or in their "
                    "directory",
    "revert": "compare the versions you keep switching between and decide what the change "
              "must do before writing it once more",
}
"""Detectors whose evidence says more than the tool kind does."""
_BETWEEN = frozenset({"ineffective_edits"})
"""Detectors whose evidence is the runs of a test: what was tried are the edits between."""


def recovery_turn(detector: str, evidence: Sequence[int], hist: Sequence[Mapping[str, Any]],
                  budget: int = STEP_BACK_CHARS) -> str:
    """The recovery text for a loop `detector` found, citing the steps of `hist` (the engine's
    completed steps, oldest first) whose call or result `#seq` is in `evidence`; "" when none of
    them is still in the history (nothing to cite: the detector's own message stands)."""
    wanted = {s for s in evidence if s}
    cited = [s for s in hist if _seq(s) in wanted or _int(s.get("result_seq")) in wanted]
    if not cited:
        return ""
    tried = cited
    if detector in _BETWEEN and len(cited) > 1:
        first, last = _seq(cited[0]), _seq(cited[-1])
        edits = [s for s in hist if first < _seq(s) < last and s.get("category") == "mutate"
                 and s.get("changed")]
        tried = edits or cited
    return step_back(detector, tried, cited, budget=budget)


def step_back(detector: str, tried: Sequence[Mapping[str, Any]],
              results: Sequence[Mapping[str, Any]] | None = None, *,
              budget: int = STEP_BACK_CHARS) -> str:
    """The text: `tried` are the attempts (engine `StepRecord`s, oldest first), `results` the steps
    whose outcomes are compared (the attempts themselves by default)."""
    tried = [s for s in tried if _seq(s)]
    results = [s for s in (results if results is not None else tried) if _seq(s)]
    if not tried:
        return ""
    head = f"{HEADLINE} {_count(tried)} did not get you further."
    same = [x for x in (_same_result(results, tried), _same_workspace(detector, results),
                        _returned(detector, results)) if x]
    tail = ((f" Same each time: {'; '.join(same)}." if same else "")
            + f" Next, do something different: {_next(detector, tried, results)}.")
    for shown in range(_TRIED_SHOWN, 0, -1):  # fewer kinds of attempt before cutting
        text = f"{head} Tried: {_tried(tried, shown)}.{tail}"
        if len(text) <= budget:
            return text
    return text[: budget - 1] + "…"


def output_line(output: str) -> str:
    """The last non-blank line of an output, normalised as outcomes are and cut: what a
    step keeps (`StepRecord.last_line`) so the recovery turn can quote an output that stayed the
    same. Reads only the output's tail; a line that is all noise (a harness's trailer such as
    Claude Code's `Shell cwd was reset to /repo`) is not the output's last word."""
    for line in reversed(output[-2000:].splitlines()):
        if line.strip() and (normal := normalise_output(line)):
            return _cut(normal)
    return ""


def is_recovery(message: str | None) -> bool:
    """Whether a finding's message is a recovery turn."""
    return bool(message) and str(message).startswith(HEADLINE)


def region_room(messages: Iterable[str | None], default: int) -> int:
    """Characters left for a failed edit's file region told with these messages: what the
    recovery turn among them leaves of `RECOVERY_CHARS` (at least 499: it is cut at
    `STEP_BACK_CHARS`), else `default`."""
    for message in messages:
        if message and is_recovery(message):
            return min(default, RECOVERY_CHARS - len(message) - 1)
    return default


def _seq(step: Mapping[str, Any]) -> int:
    return _int(step.get("seq"))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_NOUNS = {"mutate": "edit", "run": "run", "read": "read", "poll": "poll"}


def _count(steps: Sequence[Mapping[str, Any]]) -> str:
    """`Your last 3 edits`: of the one kind of tool they all are, else attempts."""
    kinds = {s.get("category") for s in steps}
    noun = _NOUNS.get(str(kinds.pop()), "attempt") if len(kinds) == 1 else "attempt"
    n = len(steps)
    return f"Your last {noun}" if n == 1 else f"Your last {n} {noun}s"


def _call(step: Mapping[str, Any]) -> str:
    """The tool and its arguments, cut."""
    text = f"{step.get('tool', '?')} {step.get('args', '')}".strip()
    return text if len(text) <= _CALL_CHARS else text[: _CALL_CHARS - 1] + "…"


def _label(step: Mapping[str, Any]) -> str:
    """What a group of attempts is called: an edit by its tool and file (its arguments are
    long and the agent knows them), anything else by the call."""
    path = step.get("path")
    if step.get("category") == "mutate" and isinstance(path, str) and path:
        if len(path) > _CALL_CHARS:
            path = "…" + path[1 - _CALL_CHARS:]  # the file's name is at the end
        return f"{step.get('tool', '?')} {path}"
    return _call(step)


def _tried(steps: Sequence[Mapping[str, Any]], most: int = _TRIED_SHOWN) -> str:
    """`Bash {...} (3 times, the same call each time)`, `Edit app.py (3 times, 3 different
    calls)`, or one entry per such group (the last `most`)."""
    groups: dict[str, tuple[list[int], set[str]]] = {}
    for step in steps:
        seqs, signatures = groups.setdefault(_label(step), ([], set()))
        seqs.append(_seq(step))
        signatures.add(str(step.get("signature") or _call(step)))
    shown = []
    for label, (seqs, signatures) in list(groups.items())[-most:]:
        calls = len(signatures)
        how = ("" if len(seqs) == 1 else
               f" ({times_text(len(seqs))}, the same call each time)" if calls == 1
               else f" ({times_text(len(seqs))}, {calls} different calls)")
        shown.append(f"{label}{how}")
    more = len(groups) - len(shown)
    return "; ".join(shown) + (f"; and {more} other call{'s' if more > 1 else ''}" if more
                               else "")


def _same_result(steps: Sequence[Mapping[str, Any]],
                 tried: Sequence[Mapping[str, Any]]) -> str:
    """What every result shared; "" when they differ, when a result
    is missing, or when the steps did not keep it. Results of calls other than the attempts
    (the test run between edits) are named."""
    if len(steps) < 2 or any(s.get("ok") is None for s in steps):
        return ""
    if len({s.get("ok") for s in steps}) != 1:
        return ""
    whose = "" if steps[-1] in tried else f"{_call(steps[-1])}: "
    if steps[0].get("ok") is False:
        ids = {s.get("error_id") or "" for s in steps}
        if len(ids) == 1 and (line := ids.pop()):
            masked = " (numbers shown as #)" if "#" in line else ""
            return f"{whose}each failed with {quote(line, _LINE_CHARS)}{masked}"
        classes = {s.get("error") or "" for s in steps}
        if len(classes) == 1 and (cls := classes.pop()) and cls != "no_result":
            return f"{whose}each failed with the same kind of error, {cls}"
        return ""
    if len({s.get("outcome") for s in steps}) != 1 or not steps[0].get("outcome"):
        return ""
    waited = _float(steps[-1].get("time")) - _float(steps[0].get("time"))
    over = f" over {waited:.0f} s" if waited >= 60 else ""
    line = steps[-1].get("last_line") or ""
    if line:
        return f"{whose}each gave the same output{over}, ending {quote(line, _LINE_CHARS)}"
    return f"{whose}each gave the same output{over}"


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _same_workspace(detector: str, steps: Sequence[Mapping[str, Any]]) -> str:
    """Identical calls made in one workspace version: nothing the session followed changed."""
    if detector in _BETWEEN or len(steps) < 2:
        return ""
    versions = {s.get("workspace") for s in steps}
    calls = {s.get("signature") for s in steps}
    if len(versions) == 1 and len(calls) == 1 and versions.pop():
        return "no file changed between them"
    return ""


def _returned(detector: str, steps: Sequence[Mapping[str, Any]]) -> str:
    if detector != "revert":
        return ""
    files = list(dict.fromkeys(f for s in steps for f in s.get("returned") or []))
    back = sum(1 for s in steps if s.get("returned"))
    if not files or not back:
        return ""
    return f"{', '.join(files[:2])} went back to earlier content {times_text(back)}"


def _next(detector: str, tried: Sequence[Mapping[str, Any]],
          results: Sequence[Mapping[str, Any]]) -> str:
    if detector in NEXT_FOR_DETECTOR:
        return NEXT_FOR_DETECTOR[detector]
    classes = {s.get("error") or "" for s in results}
    if len(classes) == 1 and all(s.get("ok") is False for s in results):
        advice = ERROR_ADVICE.get(classes.pop())
        if advice:
            return advice
    kinds = [s.get("category") or "other" for s in tried]
    kind = max(dict.fromkeys(kinds), key=kinds.count)  # the most common, first on a tie
    return NEXT_STEP.get(kind, NEXT_STEP["other"])


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LINE_CHARS else text[: _LINE_CHARS - 1] + "…"
