"""Error rate: most of the recent steps failed. Off by default.

On the labelled corpus it caught no loop episode that another detector missed, and it raised
the only false alarms of two loop-free runs (a series of installs each failing on the next
missing dependency, a series of lint probes each exiting 65 by design): a failing stretch is
often how exploration looks. Enable it where failures in a row are themselves alarming.

At least `ratio` of the last `min_steps` to `window` steps failed (the longest such trailing
stretch is reported); it escalates when it persists over `escalate_after` windows. A read-only
command's bare non-zero exit (grep finding nothing exits 1) does not count.
"""

from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding, recent
from supervisor.engine.fingerprint import GENERIC_ERROR_CLASSES
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding


class ErrorRateParams(TypedDict):
    """`[detectors.error_rate]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    window: int
    ratio: float
    min_steps: int
    escalate_after: int


def _hard_failure(step: StepRecord) -> bool:
    return not step["ok"] and not (step["category"] == "read"
                                   and step["error"] in GENERIC_ERROR_CLASSES)


class ErrorRate(Detector[ErrorRateParams]):
    name = "error_rate"
    summary = "most of the last steps failed, and it persists"
    defaults: ClassVar[ErrorRateParams] = {
        "enabled": False, "window": 12, "ratio": 0.75, "min_steps": 8, "escalate_after": 3,
    }

    def memory(self) -> Memory:
        # fired: windows in a row that reported; cooldown: steps until it looks again
        return {"fired": 0, "cooldown": 0}

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: ErrorRateParams) -> Finding | None:
        if mem["cooldown"] > 0:
            mem["cooldown"] -= 1
            return None
        window = list(recent(st, p["window"]))
        if len(window) < p["min_steps"] or not _hard_failure(step):
            return None
        flags = [_hard_failure(s) for s in window]
        size = next((n for n in range(len(window), p["min_steps"] - 1, -1)
                     if sum(flags[:n]) >= p["ratio"] * n), 0)
        if not size:
            mem["fired"] = 0
            return None
        window = window[:size]
        errors = [s for s in window if _hard_failure(s)]
        mem["fired"] += 1
        mem["cooldown"] = p["window"] // 2
        level = 3 if mem["fired"] >= p["escalate_after"] else 1
        msg = g.error_rate_nudge(errors, len(window))
        return finding(self.name, level, "error_rate", sorted(s["seq"] for s in errors), msg,
                       step["index"])

    def clear(self, mem: Memory) -> None:
        mem.update(fired=0, cooldown=0)
