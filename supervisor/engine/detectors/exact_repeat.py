"""Exact repeat: the same call with the same outcome in an unchanged workspace.

Anywhere in the look-back (an interleaved call does not hide it), and across a revert (the
workspace version is derived from content, so undoing an edit brings back the earlier one).
The rubric's three occurrences: the 3rd is nudged, the 4th refused, the 6th escalated; a
failing call is no exception (one retry of a failure is legitimate). Calls issued together in
one model turn (a batch) count once; a call whose result never came counts as an attempt.
"""

from typing import ClassVar

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, Params, finding, recent
from supervisor.engine.state import State
from supervisor.engine.step import Step
from supervisor.engine.types import Finding


def same_call(st: State, step: Step) -> list[Step]:
    """Completed steps of this call in this workspace within the look-back, newest first."""
    return [s for s in recent(st, st.sizes["lookback"])
            if s["signature"] == step["signature"] and s["workspace"] == step["workspace"]]


def batches(steps: list[Step]) -> int:
    """How many decisions the steps were: a batch of parallel calls is one."""
    return len({s["batch"] or f"step:{s['index']}" for s in steps})


class ExactRepeat(Detector):
    name = "exact_repeat"
    summary = ("the same call with the same outcome in the same workspace, anywhere in the "
               "look-back")
    defaults: ClassVar[Params] = {
        "enabled": True, "nudge": 3, "block": 4, "escalate": 6, "stop": 0,
    }

    def observe(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        same = [s for s in same_call(st, step) if s["outcome"] == step["outcome"]]
        n = batches(same)
        if n < p["nudge"] or n >= p["block"] or step["refused"]:
            return None
        if batches([s for s in same if s["index"] != step["index"]]) == n:
            return None  # this call is part of a batch already counted
        return finding(self.name, 1, step["signature"], sorted(s["seq"] for s in same),
                       g.exact_repeat_nudge(step, same), step["index"])

    def refuse(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        prior = same_call(st, step)
        if not prior:
            return None
        run = [s for s in prior if s["outcome"] == prior[0]["outcome"]]
        refused = [s for s in st.pending.values()
                   if s["refused"] == self.name and s["signature"] == step["signature"]
                   and s["workspace"] == step["workspace"]]
        attempts = batches(run + refused + [step])
        stop = p.get("stop")
        if stop and attempts >= stop:
            level = 4
        elif attempts >= p["escalate"]:
            level = 3
        elif attempts >= p["block"]:
            level = 2
        else:
            return None
        return finding(self.name, level, step["signature"], sorted(s["seq"] for s in run),
                       g.exact_repeat_block(level, step, run), step["index"])
