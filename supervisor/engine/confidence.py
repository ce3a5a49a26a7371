"""How much evidence a finding rests on, and what it may therefore do.

A finding's confidence is read from the steps it cites (its evidence `#seq`s), not from the
detector's say-so:

- **occurrences**: how many attempts it cites;
- **match**: `identical` (one call, byte for byte; or one file coming back to one content) or
  `similar` (different calls: alike arguments, or one error behind varying calls);
- **outcome**: `unchanged` (one normalised output), `same error` (one error identity),
  `unknown` (a result that never came, or steps no longer in the look-back), or `varied`.

and graded:

- `strong`: one identical call whose outcome is known (unchanged, the same error, or an edit
  applied onto its own result), or unknown from the 4th attempt on; a period of calls
  repeating with identical outcomes (`cycle`); one file coming back to one content (`revert`);
  one error identity from several calls (`recurring_error`: the program itself says the same
  thing). How many occurrences make a loop is the policy's thresholds' business; the grade is
  about what kind of evidence they are;
- `moderate`: repetition seen only through similarity (`similar_calls`: arguments alike, outcomes
  of one class), or fewer than four identical calls whose outcome is unknown;
- `weak`: aggregate signals with no one repeated thing (`repeated_text`: messages alike,
  `error_rate`). `no_progress` is `moderate` until its escalation threshold (30 steps that
  showed nothing new by default: three of its nudge windows), `strong` from then on.

Only `strong` findings may block or escalate (`may_refuse`): a refusal or escalation by a weaker
one is told as a nudge instead (the call runs). Hard limits are not findings and are never
weighed here.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from supervisor.engine.fingerprint import NO_RESULT
from supervisor.engine.step import run_of

Confidence = Literal["strong", "moderate", "weak"]
CONFIDENCES: tuple[Confidence, ...] = ("strong", "moderate", "weak")

_AGGREGATE = frozenset({"repeated_text", "error_rate"})
"""Detectors of a trend rather than of one repeated thing."""

_STATE = frozenset({"revert"})
"""Detectors whose evidence is one file's content coming back (identical by construction)."""
_PERIODIC = frozenset({"cycle"})
"""Detectors whose evidence is a period of calls repeated with identical calls and outcomes
(several signatures, identical position by position)."""
_ERROR = frozenset({"recurring_error"})
"""Detectors whose evidence is one error identity the program printed, behind varying calls."""
_RERUNS = frozenset({"ineffective_edits"})
"""Detectors whose evidence is one check run again (`StepRecord.run`: whatever output filter
its line ends with), its output unchanged through each filter: identical runs, not calls."""
_UNKNOWN_OCCURRENCES = 4
"""Identical calls whose results never came are strong evidence from the 4th attempt on (one
more than the rubric's three: the outcome that would confirm them is missing)."""
_PREFIXES = ("Blocked: ", "Paused: ", "Stopped: ")


def weigh(detector: str, evidence: Sequence[int], hist: Sequence[Mapping[str, Any]],
          attempt: Mapping[str, Any] | None = None, level: int = 1
          ) -> tuple[Confidence, str]:
    """(confidence, basis): the grade and a short account of the evidence, e.g.
    `4 identical calls, output unchanged`. `attempt`: the call about to run that a refusal is
    about (one more occurrence, its outcome not known yet); `level`: the level the detector
    reported (for `no_progress`, whose evidence list is cut short of its count)."""
    wanted = {s for s in evidence if s}
    cited = [s for s in hist if s.get("seq") in wanted or s.get("result_seq") in wanted]
    n = max(len(wanted), len(cited)) + (attempt is not None)
    if detector == "no_progress":
        # every step repeated an output seen before in an unchanged workspace: each is a small
        # repetition; its escalation threshold (30 by default, three nudge windows) of them
        # is strong evidence
        grade: Confidence = "strong" if level >= 3 else "moderate"
        return grade, ("no new output and no change up to the escalation threshold"
                       if level >= 3 else f"{n} steps with no new output and no change")
    if detector in _AGGREGATE:
        return "weak", f"a trend over {n} steps"
    if detector in _STATE:
        # the returns, and the attempts they threw away (revert's second count), said apart
        back = sum(1 for s in cited if s.get("returned")) or n
        thrown = len(cited) - back if cited else 0
        return "strong", (f"{back} returns to earlier content of one file"
                          + (f", {thrown} attempts thrown away" if thrown > 0 else ""))
    if not cited:  # no citable step (events without seq): the detector's own definition
        if detector == "similar_calls":
            return "moderate", "similar calls"
        return "strong", "identical calls or one error" if detector in _ERROR else (
            "identical calls")
    known = bool(cited) and len(cited) >= len(wanted) and not any(
        s.get("ok") is None or s.get("outcome") == NO_RESULT for s in cited)
    if detector in _PERIODIC:
        said = "outcomes identical" if known else "outcome unknown"
        return "strong" if known else "moderate", f"{n} calls repeating one period, {said}"
    calls = [*cited, attempt] if attempt is not None else cited
    identical = bool(cited) and len({s.get("signature") for s in calls}) == 1
    outcome = _outcome(cited) if known else "outcome unknown"
    basis = f"{n} {'identical' if identical else 'similar'} calls, {outcome}"
    if detector in _RERUNS and not identical and _one_run(calls):
        # one check seen through several output filters: each filter's output is its own
        identical = True
        outcome = _filtered_outcome(cited) if known else outcome
        basis = f"{n} runs of one check through different output filters, {outcome}"
    failed = bool(cited) and all(s.get("ok") is False for s in cited)
    if detector in _ERROR and failed and outcome in ("same error", "output unchanged"):
        return "strong", basis
    if identical and (known or n >= _UNKNOWN_OCCURRENCES):
        # one call byte for byte; its outcome unchanged, the same error, an edit applied onto
        # its own result, or (with one more attempt) results that never came
        return "strong", basis
    return "moderate", basis


def _outcome(cited: Sequence[Mapping[str, Any]]) -> str:
    if len({s.get("outcome") for s in cited}) == 1:
        return "output unchanged"
    ids = {s.get("error_id") or "" for s in cited}
    if all(s.get("ok") is False for s in cited) and len(ids) == 1 and ids.pop():
        return "same error"
    return "outcomes varied"


def _one_run(calls: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the calls are one run (`StepRecord.run`), whatever filters they went through."""
    return len({run_of(s) for s in calls}) == 1


def _filtered_outcome(cited: Sequence[Mapping[str, Any]]) -> str:
    """The outcome of one run seen through several filters: unchanged when each filter showed
    one output every time."""
    shown: dict[Any, set[Any]] = {}
    for s in cited:
        shown.setdefault(s.get("signature"), set()).add(s.get("outcome"))
    return ("output unchanged through each filter" if all(len(v) == 1 for v in shown.values())
            else "outcomes varied")


def may_refuse(confidence: str) -> bool:
    """Whether a finding of this confidence may block or escalate (only `strong` ones)."""
    return confidence == "strong"


def as_block(message: str) -> str:
    """An escalation's message told as a block (within the cooldown after an answered one,
    `Engine._cooling`): `Paused:` becomes `Blocked:`, since nothing waits for an operator."""
    return "Blocked: " + message.removeprefix("Paused: ") if message.startswith("Paused: ") \
        else message


def as_nudge(message: str) -> str:
    """A refusal's message told as a nudge: its verb (`Blocked:`, `Paused:`) becomes `Loop:`,
    since the call is not refused."""
    for prefix in _PREFIXES:
        if message.startswith(prefix):
            return "Loop: " + message[len(prefix):]
    return message
