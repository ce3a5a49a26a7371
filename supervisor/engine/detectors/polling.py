"""Polling: a poll call (BashOutput, sleep, tail, status URLs, ...) returning the same output
too many times in a row. A poll whose output keeps changing is waiting, not stuck.
"""

from typing import ClassVar

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, Params, finding
from supervisor.engine.state import State
from supervisor.engine.step import Step
from supervisor.engine.types import Finding

_POLLS_KEPT = 32


class Polling(Detector):
    name = "polling"
    summary = "a poll call returning the same output again and again"
    defaults: ClassVar[Params] = {
        "enabled": True, "nudge": 8, "block": 12, "escalate": 16,
    }

    def memory(self) -> Memory:
        # per poll call (signature): its current output, how often in a row, since when
        return {"polls": {}}

    def observe(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        if step["category"] != "poll":
            return None
        polls = mem["polls"]
        entry = polls.pop(step["signature"], None)
        if (entry is None or entry["outcome"] != step["outcome"]
                or entry["workspace"] != step["workspace"]):
            entry = {"outcome": step["outcome"], "workspace": step["workspace"], "count": 0,
                     "refused": 0, "steps": [], "seqs": [], "since": step["time"]}
        entry["count"] += 1
        entry["steps"] = (entry["steps"] + [step["index"]])[-20:]
        entry["seqs"] = (entry["seqs"] + [step["seq"]])[-20:]
        polls[step["signature"]] = entry
        while len(polls) > _POLLS_KEPT:
            polls.pop(next(iter(polls)))
        n = entry["count"]
        if step["refused"]:
            return None
        if n == p["escalate"]:
            level = 3
        elif n == p["nudge"]:
            level = 1
        else:
            return None
        waited = max(0.0, float(step["time"]) - float(entry["since"]))
        msg = g.polling_nudge(step, n, waited, entry["steps"])
        return finding(self.name, level, step["signature"], entry["seqs"], msg, step["index"])

    def refuse(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        if step["category"] != "poll":
            return None
        entry = mem["polls"].get(step["signature"])
        if not entry or entry["workspace"] != step["workspace"]:
            return None
        attempts = entry["count"] + entry["refused"] + 1
        if attempts >= p["escalate"]:
            level = 3
        elif attempts >= p["block"]:
            level = 2
        else:
            return None
        entry["refused"] += 1
        msg = g.polling_block(level, step, entry["count"])
        return finding(self.name, level, step["signature"], entry["seqs"], msg, step["index"])

    def undo(self, step: Step, mem: Memory) -> None:
        entry = mem["polls"].get(step["signature"])
        if entry:
            entry["refused"] = max(0, entry["refused"] - 1)
