"""Cycle: A-B-A-B and longer periods of identical calls and outcomes, nothing changing.

Every completed step adds a key (call, outcome, workspace version); for each period from
`min_period` to `max_period` the memory keeps how long the keys have repeated with that
period. When the cycle's third occurrence begins (two full periods and the first call of a
third, at least `min_steps` steps: the rubric's three occurrences) it is reported; the call
that would continue it is refused.
"""

from itertools import islice
from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding, recent
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding


class CycleParams(TypedDict):
    """`[detectors.cycle]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    min_period: int
    max_period: int
    min_steps: int
    block_periods: int
    escalate_periods: int


def cycle_signature(sigs: list[str]) -> str:
    """The same cycle entered at any of its calls has one signature."""
    start = sigs.index(min(sigs))
    return "cycle:" + "-".join(s[:8] for s in sigs[start:] + sigs[:start])


class Cycle(Detector[CycleParams]):
    name = "cycle"
    summary = ("the last steps repeat with a period of 2-6 calls, calls and outcomes "
               "identical, workspace unchanged")
    defaults: ClassVar[CycleParams] = {
        "enabled": True, "min_period": 2, "max_period": 6, "min_steps": 5, "block_periods": 1,
        "escalate_periods": 2,
    }

    def memory(self) -> Memory:
        # keys: (call, outcome, workspace) of the last steps; runs: per period, how many keys
        # in a row equal the one a period earlier; cycle: the one found (calls, position)
        return {"keys": [], "runs": {}, "cycle": None}

    def record(self, st: State, step: StepRecord, mem: Memory) -> None:
        keys = mem["keys"]
        keys.append(f"{step['signature']}:{step['outcome']}:{step['workspace']}")
        del keys[: -st.sizes["lookback"]]
        c = mem["cycle"]
        if c and c["workspace"] == step["workspace"] and step["signature"] in c["sigs"]:
            c["pos"] = c["sigs"].index(step["signature"]) + 1

    def observe(self, st: State, step: StepRecord, mem: Memory, p: CycleParams) -> Finding | None:
        keys = mem["keys"]
        best = None
        for period in range(p["min_period"], p["max_period"] + 1):
            name = str(period)
            run = mem["runs"].get(name, 0)
            run = run + 1 if len(keys) > period and keys[-1] == keys[-1 - period] else 0
            mem["runs"][name] = run
            if best is None and run:
                length = run + period
                need = max(2 * period + 1, p["min_steps"])
                if length >= need and len(set(keys[-period:])) > 1:
                    best = (period, length, need)
        c = mem["cycle"]
        if best is None:
            if c and (c["workspace"] != step["workspace"]
                      or step["signature"] not in c["sigs"]):
                mem["cycle"] = None
            return None
        period, length, need = best
        steps = list(islice(recent(st, length), length))
        sigs = [s["signature"] for s in reversed(steps[:period])]
        if c is None or c["period"] != period or c["workspace"] != step["workspace"]:
            c = {"period": period, "sigs": sigs, "workspace": step["workspace"],
                 "length": length, "need": need, "refused": 0, "pos": 0, "fired": 0}
            mem["cycle"] = c
        evidence = sorted(s["seq"] for s in steps)
        tools = " → ".join(g.short_call(s["tool"], s["args"], 48)
                           for s in reversed(steps[:period]))
        c.update(length=length, sigs=sigs, pos=0, seqs=evidence[-20:], tools=tools)
        level = 0
        if length >= need + p["escalate_periods"] * period and c["fired"] < 3:
            level = 3
        elif c["fired"] == 0:
            level = 1
        if level == 0 or step["refused"]:
            return None
        c["fired"] = level
        msg = g.cycle_nudge(step, period, tools, length)
        return finding(self.name, level, cycle_signature(sigs), evidence, msg, step["index"])

    def refuse(self, st: State, step: StepRecord, mem: Memory, p: CycleParams) -> Finding | None:
        c = mem["cycle"]
        if not c or c["workspace"] != step["workspace"] or c["fired"] == 0:
            return None
        if step["signature"] != c["sigs"][c["pos"] % c["period"]]:
            return None
        attempts = c["length"] + c["refused"] + 1
        if attempts >= c["need"] + p["escalate_periods"] * c["period"]:
            level = 3
        elif attempts >= c["need"] + p["block_periods"]:
            level = 2
        else:
            return None
        c["refused"] += 1
        msg = g.cycle_block(level, step, c)
        return finding(self.name, level, cycle_signature(c["sigs"]), list(c.get("seqs", [])),
                       msg, step["index"])

    def undo(self, step: StepRecord, mem: Memory) -> None:
        if mem["cycle"]:
            mem["cycle"]["refused"] = max(0, mem["cycle"]["refused"] - 1)

    def clear(self, mem: Memory) -> None:
        mem["cycle"] = None
