"""No progress: many steps without a workspace change or any new output.

Poll and `other` calls (waiting, todo lists) neither count nor reset, and neither does a
successful call whose output says nothing (blank, "No matches found": a silent build, a `sed -i`
whose effect the engine cannot see): it is no evidence either way, and long healthy sessions
are full of them. A silent call repeated is `exact_repeat`'s. Calls issued together in one
model turn (a batch) count as one step: none of them saw another's result.
"""

from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding, recent
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding


class NoProgressParams(TypedDict):
    """`[detectors.no_progress]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    escalate: int


class NoProgress(Detector[NoProgressParams]):
    name = "no_progress"
    summary = "many steps without a workspace change or an output not seen before"
    defaults: ClassVar[NoProgressParams] = {
        "enabled": True, "nudge": 10, "escalate": 30,
    }

    def memory(self) -> Memory:
        # steps without progress so far, the level it last reported at, the last batch counted
        return {"steps": 0, "fired": 0, "batch": None}

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: NoProgressParams) -> Finding | None:
        if step["category"] in ("poll", "other") or (step["ok"] and step["empty"]):
            return None
        if step["progress"]:
            mem.update(steps=0, fired=0)
            return None
        batch = step["batch"]
        if batch is not None and batch == mem.get("batch"):
            return None  # another call of the batch just counted: one decision
        mem.update(steps=mem["steps"] + 1, batch=batch)
        n = mem["steps"]
        if n >= p["escalate"] and mem["fired"] < 3:
            level = 3
        elif n >= p["nudge"] and mem["fired"] == 0:
            level = 1
        else:
            return None
        mem["fired"] = level
        steps = list(recent(st, n))
        msg = g.no_progress_nudge(n)
        return finding(self.name, level, "no_progress", sorted(s["seq"] for s in steps), msg,
                       step["index"])

    def new_context(self, mem: Memory) -> None:
        mem.update(steps=0, fired=0)
