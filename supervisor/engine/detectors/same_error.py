"""Same error: one specific error class again and again from one tool while the arguments vary.

Failures are compared within one tool, and across all mutating tools (an Edit, then a
MultiEdit, then a Write failing the same way is one streak). Something new learned in between
(a read or run with a new output) ends the streak; the next call of that tool (for edits: of
the same file) right after a streak is refused.
"""

from itertools import islice
from typing import ClassVar

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, Params, finding, recent
from supervisor.engine.fingerprint import GENERIC_ERROR_CLASSES
from supervisor.engine.state import State
from supervisor.engine.step import Step
from supervisor.engine.types import Finding


def error_group(step: Step) -> str:
    return "mutate" if step["category"] == "mutate" else step["tool"]


class SameError(Detector):
    name = "same_error"
    summary = ("the same specific error class several times in a row from one tool with "
               "different arguments")
    defaults: ClassVar[Params] = {
        "enabled": True, "nudge": 3, "block": 4, "escalate": 6, "lookback": 20, "stop": 0,
    }

    def memory(self) -> Memory:
        # the current streak: tool group, error class, size, last step, file, refusals
        return {"streak": None}

    def observe(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        group = error_group(step)
        if step["ok"] or step["error"] in GENERIC_ERROR_CLASSES:
            if step["ok"] and mem["streak"] and mem["streak"]["tool"] == group:
                mem["streak"] = None
            return None
        chain = [step]
        for s in islice(recent(st, p["lookback"]), 1, None):
            if error_group(s) != group:
                if s["ok"] and s["novel"] and s["category"] in ("read", "run"):
                    break  # something new was learned in between
                continue
            if s["ok"] or s["error"] != step["error"] or s["workspace"] != step["workspace"]:
                break
            chain.append(s)
        n = len(chain)
        if len({s["signature"] for s in chain}) < 2:
            return None
        streak = {"tool": group, "error": step["error"], "size": n, "last": step["index"],
                  "path": step["path"], "category": step["category"], "refused": 0,
                  "seqs": sorted(s["seq"] for s in chain),
                  "steps": sorted(s["index"] for s in chain)}
        mem["streak"] = streak
        if step["refused"]:
            return None
        stop = p.get("stop")
        if stop and n >= stop:
            level = 4
        elif n >= p["escalate"]:
            level = 3
        elif n == p["nudge"]:
            level = 1
        else:
            return None
        msg = g.same_error_nudge(step, group, n, streak["steps"])
        return finding(self.name, level, f"error:{group}:{step['error']}", streak["seqs"], msg,
                       step["index"])

    def refuse(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        se = mem["streak"]
        if not se or se["tool"] != error_group(step):
            return None
        if se["tool"] == "mutate" and se.get("path") and step["path"] != se["path"]:
            return None
        attempts = se["size"] + se["refused"] + 1
        if attempts < p["block"]:
            return None
        last = st.hist[-1] if st.hist else None
        if last is None or last["index"] != se["last"]:
            return None  # something else happened since the last failure (e.g. a re-read)
        if p.get("stop") and attempts >= p["stop"]:
            level = 4
        else:
            level = 3 if attempts >= p["escalate"] else 2
        se["refused"] += 1
        msg = g.same_error_block(level, step, se)
        return finding(self.name, level, f"error:{se['tool']}:{se['error']}", se["seqs"], msg,
                       step["index"])

    def undo(self, step: Step, mem: Memory) -> None:
        if mem["streak"]:
            mem["streak"]["refused"] = max(0, mem["streak"]["refused"] - 1)

    def clear(self, mem: Memory) -> None:
        mem["streak"] = None
