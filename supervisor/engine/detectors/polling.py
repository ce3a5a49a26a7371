"""Polling: a poll call (BashOutput, sleep, tail, status URLs, ...) whose output stays the same.

Waiting is not a loop while the output changes, or while the job plausibly runs: stuck means
the same output over at least `nudge` polls in a row, or over `stuck_after_s` seconds (with at
least three polls). A poll with growing sleeps is a different call each time, so it never
counts as one repeating call.
"""

from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding

_POLLS_KEPT = 32
_MIN_POLLS = 3


class PollingParams(TypedDict):
    """`[detectors.polling]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    block: int
    escalate: int
    stuck_after_s: float


class Polling(Detector[PollingParams]):
    name = "polling"
    summary = ("a poll call returning the same output over many polls or a long time")
    defaults: ClassVar[PollingParams] = {
        "enabled": True, "nudge": 12, "block": 16, "escalate": 24, "stuck_after_s": 900.0,
    }

    def memory(self) -> Memory:
        # per poll call (signature): its current output, how often in a row, since when
        return {"polls": {}}

    def observe(self, st: State, step: StepRecord, mem: Memory, p: PollingParams) -> Finding | None:
        if step["category"] != "poll":
            return None
        polls = mem["polls"]
        entry = polls.pop(step["signature"], None)
        if (entry is None or entry["outcome"] != step["outcome"]
                or entry["workspace"] != step["workspace"]):
            entry = {"outcome": step["outcome"], "workspace": step["workspace"], "count": 0,
                     "refused": 0, "seqs": [], "since": step["time"], "fired": 0}
        entry["count"] += 1
        entry["seqs"] = (entry["seqs"] + [step["seq"]])[-20:]
        polls[step["signature"]] = entry
        while len(polls) > _POLLS_KEPT:
            polls.pop(next(iter(polls)))
        n = entry["count"]
        waited = max(0.0, float(step["time"]) - float(entry["since"]))
        if step["refused"]:
            return None
        stuck = n >= p["nudge"] or (n >= _MIN_POLLS and waited >= p["stuck_after_s"])
        if n >= p["escalate"] and entry["fired"] < 3:
            level = 3
        elif stuck and entry["fired"] == 0:
            level = 1
        else:
            return None
        entry["fired"] = level
        return finding(self.name, level, step["signature"], entry["seqs"],
                       g.polling_nudge(step, n, waited), step["index"])

    def refuse(self, st: State, step: StepRecord, mem: Memory, p: PollingParams) -> Finding | None:
        if step["category"] != "poll":
            return None
        entry = mem["polls"].get(step["signature"])
        if not entry or entry["workspace"] != step["workspace"] or not entry["fired"]:
            return None
        attempts = entry["count"] + entry["refused"] + 1
        if attempts >= p["escalate"]:
            level = 3
        elif attempts >= p["block"]:
            level = 2
        else:
            return None
        entry["refused"] += 1
        return finding(self.name, level, step["signature"], entry["seqs"],
                       g.polling_block(level, step, entry["count"]), step["index"])

    def undo(self, step: StepRecord, mem: Memory) -> None:
        entry = mem["polls"].get(step["signature"])
        if entry:
            entry["refused"] = max(0, entry["refused"] - 1)
