"""Exact repeat: the same call with the same outcome in an unchanged workspace.

Anywhere in the look-back (an interleaved call does not hide it). Failures are stricter than
successes, except transient ones (a timeout may be retried once).
"""

from typing import ClassVar

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, Params, finding, recent
from supervisor.engine.fingerprint import TRANSIENT_ERROR_CLASSES
from supervisor.engine.state import State
from supervisor.engine.step import Step
from supervisor.engine.types import Finding


def same_call(st: State, step: Step) -> list[Step]:
    """Completed steps of this call in this workspace within the look-back, newest first."""
    return [s for s in recent(st, st.sizes["lookback"])
            if s["signature"] == step["signature"] and s["workspace"] == step["workspace"]]


def _strict(s: Step) -> bool:
    return not s["ok"] and s["error"] not in TRANSIENT_ERROR_CLASSES


class ExactRepeat(Detector):
    name = "exact_repeat"
    summary = ("the same call with the same outcome in the same workspace, anywhere in the "
               "look-back")
    defaults: ClassVar[Params] = {
        "enabled": True, "nudge": 3, "block": 4, "escalate": 6, "error_nudge": 2, "error_block": 3,
        "stop": 0,
    }

    def observe(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        prior = same_call(st, step)[1:]  # [0] is this step
        same = [s for s in prior if s["outcome"] == step["outcome"]]
        n = len(same) + 1
        strict = _strict(step)
        threshold = p["error_nudge"] if strict else p["nudge"]
        block = p["error_block"] if strict else p["block"]
        if n < threshold or n >= block or step["refused"]:
            return None
        steps = sorted([s["index"] for s in same] + [step["index"]])
        msg = g.exact_repeat_nudge(step, steps)
        evidence = sorted([*(s["seq"] for s in same), step["seq"]])
        return finding(self.name, 1, step["signature"], evidence, msg, step["index"])

    def refuse(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        prior = same_call(st, step)
        if not prior:
            return None
        run = [s for s in prior if s["outcome"] == prior[0]["outcome"]]
        refused = sum(1 for s in st.pending.values()
                      if s["refused"] == self.name and s["signature"] == step["signature"]
                      and s["workspace"] == step["workspace"])
        block = p["error_block"] if _strict(run[0]) else p["block"]
        attempts = len(run) + refused + 1
        stop = p.get("stop")
        if stop and attempts >= stop:
            level = 4
        elif attempts >= p["escalate"] and attempts >= block:
            level = 3
        elif attempts >= block:
            level = 2
        else:
            return None
        msg = g.exact_repeat_block(level, step, run)
        return finding(self.name, level, step["signature"], sorted(s["seq"] for s in run), msg,
                       step["index"])
