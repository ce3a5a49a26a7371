"""Exact repeat: the same call with the same outcome in an unchanged workspace, or the same
mutating call applied again and again onto its own result.

Anywhere in the look-back (an interleaved call does not hide it), and across a revert (the
workspace version is derived from content, so undoing an edit brings back the earlier one).
Two outcomes are the same when their normalised outputs are, or, for two failures, when they
name the same error (`failures.error_identity`): a failing call whose output differs only by
something the normaliser does not know (a counter of its own) is still the same failure; a
test runner's report is the exception (its masked counts, "4 failed" then "3 failed", are a
test count moving: progress). So
nothing falls between this detector and `recurring_error`: identical calls in one workspace
version are counted here, everything else that fails the same way there.

An **edit** (a mutating call that names the file it writes in its arguments: an editor's
insert, SWE-agent's `edit 1:1`, an append tool) sent byte-identical again is a repeat whatever
the workspace does: an edit by line range, an append, an insert "changes" the file every time
(one more copy), so the workspace never looks unchanged. Shell lines are left out: a rebuild
(`rm -rf _build && make`) rewrites files it does not carry the content of. Its occurrences
count while no other call changed the files it writes in between (a restore then the same
re-application is the `revert` detector's business, not a repeat) and the agent did not
read the file and see something new; only applications that succeeded count (a failed one
applied nothing); different content is a different call and never counts.

The rubric's three occurrences: the 3rd is nudged, the 4th refused, the 6th escalated; a
failing call is no exception (one retry of a failure is legitimate). Calls issued together in
one model turn (a batch) count once; a call whose result never came counts as an attempt.
"""

from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, batches, finding, recent
from supervisor.engine.failures import is_test_report
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding
from supervisor.engine.workspace import file_key


def same_call(st: State, step: StepRecord) -> list[StepRecord]:
    """Completed steps of this call in this workspace within the look-back, newest first,
    back to the last time the agent waited on purpose (a `poll` step: `sleep 120`, a look at a
    running process, this very call answered "still running") before a call that changes
    nothing: asking again after waiting is polling something outside the workspace (a CI run,
    a reviewer's answer, a job's status), which the `polling` detector judges by time when the
    call is a poll, not a repeat."""
    found: list[StepRecord] = []
    for s in recent(st, st.sizes["lookback"]):
        if s["category"] == "poll" and step["category"] != "mutate":
            break
        if s["signature"] == step["signature"] and s["workspace"] == step["workspace"]:
            found.append(s)
    return found


def same_outcome(a: StepRecord, b: StepRecord) -> bool:
    """The same normalised output, or two failures naming the same error (not test reports:
    "4 failed" then "3 failed" is a test count moving, progress)."""
    if a["outcome"] == b["outcome"]:
        return True
    return (a["ok"] is False and b["ok"] is False and bool(a["error_id"])
            and a["error_id"] == b["error_id"]
            and not is_test_report(a["error"], a["error_id"]))


def reapplied(st: State, step: StepRecord) -> list[StepRecord]:
    """For a mutating call: the completed applications of this very call within the
    look-back, newest first, back to the last time another call changed a file it writes
    (only for an edit: a mutating call that names its file)."""
    if step["category"] != "mutate" or not step["path"]:
        return []
    files = set(step["touches"])
    found: list[StepRecord] = []
    for s in recent(st, st.sizes["lookback"]):
        if s["signature"] == step["signature"]:
            if s["ok"]:  # an application that failed applied nothing
                found.append(s)
                files.update(s["touches"])
                files.update(s["changed"])
            continue
        if s["changed"] and (files & set(s["changed"]) or "*" in s["changed"] or not files):
            break  # another call changed what this one writes (or we cannot tell)
        if s["views"] and s["novel"] and file_key(s["views"]) in files:
            break  # the agent looked at the result and saw something new: an informed retry
    return found


class ExactRepeatParams(TypedDict):
    """`[detectors.exact_repeat]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    block: int
    escalate: int
    stop: int


def _level(p: ExactRepeatParams, attempts: int) -> int:
    stop = p.get("stop")
    if stop and attempts >= stop:
        return 4
    if attempts >= p["escalate"]:
        return 3
    if attempts >= p["block"]:
        return 2
    return 0


class ExactRepeat(Detector[ExactRepeatParams]):
    name = "exact_repeat"
    summary = ("the same call with the same outcome in the same workspace, anywhere in the "
               "look-back; a mutating call re-applied onto its own result")
    defaults: ClassVar[ExactRepeatParams] = {
        "enabled": True, "nudge": 3, "block": 4, "escalate": 6, "stop": 0,
    }

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: ExactRepeatParams) -> Finding | None:
        if step["refused"]:
            return None
        same = [s for s in same_call(st, step) if same_outcome(s, step)]
        again = reapplied(st, step)
        applied = batches(again) > batches(same)
        if applied:
            same = again
        n = batches(same)
        if n < p["nudge"] or n >= p["block"]:
            return None
        if batches([s for s in same if s["index"] != step["index"]]) == n:
            return None  # this call is part of a batch already counted
        message = (g.reapplied_nudge if applied else g.exact_repeat_nudge)(step, same)
        return finding(self.name, 1, step["signature"], sorted(s["seq"] for s in same),
                       message, step["index"])

    def refuse(self, st: State, step: StepRecord, mem: Memory,
               p: ExactRepeatParams) -> Finding | None:
        prior = same_call(st, step)
        run = [s for s in prior if same_outcome(s, prior[0])] if prior else []
        again = reapplied(st, step)
        if batches(again) > batches(run) and len(again) > 1:
            run = again
        if not run:
            return None
        refused = [s for s in st.pending.values()
                   if s["refused"] == self.name and s["signature"] == step["signature"]
                   and (s["workspace"] == step["workspace"] or run is again)]
        level = _level(p, batches(run + refused + [step]))
        if not level:
            return None
        message = (g.reapplied_block if run is again else g.exact_repeat_block)(level, step, run)
        return finding(self.name, level, step["signature"], sorted(s["seq"] for s in run),
                       message, step["index"])
