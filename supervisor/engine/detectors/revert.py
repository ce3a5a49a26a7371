"""Revert: a file goes back to content it had before, again and again.

The workspace model (`workspace.py`: real digests live, content followed from the calls
offline) marks a change that brings a file back to an earlier content: an undo, a restore from
a backup, a redo of an edit that was undone. One is an undo; oscillation (A→B→A→B→A, or
restore, edit, restore, edit, restore) is a loop once it happened the rubric's three times
within a window of `window` steps (each return within `window` steps of the previous one) and
without progress in between (a test or script re-run that now succeeds with another output
restarts the count: restoring a backup between attempts that each change what a working test
says is iterative repair; a new failure is not progress):
nudge, then refuse the next rewrite of that file (the call that would write it again); the
sixth return escalates. Two returns (A→B→A→B: one restore and one re-apply) stay quiet: a
single restore-and-retry is how careful agents work.
"""

from typing import ClassVar

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, Params, finding
from supervisor.engine.state import State
from supervisor.engine.step import Step
from supervisor.engine.types import Finding

_FILES_KEPT = 32


class Revert(Detector):
    name = "revert"
    summary = ("a file returns to content it had before, again and again within a window of "
               "steps (changes undone and redone)")
    defaults: ClassVar[Params] = {"enabled": True, "nudge": 3, "escalate": 6, "window": 20}

    def memory(self) -> Memory:
        # per file key: the seqs and steps of its recent returns, whether the rewrite after
        # the last one was refused, the level reported; per test or script run (signature)
        # its last output, and the last step at which one of them succeeded with a new one
        return {"files": {}, "probes": {}, "progress_at": -1}

    def observe(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        if step["category"] == "run":
            probes = mem["probes"]
            before = probes.pop(step["signature"], None)
            if before is not None and before != step["outcome"] and step["ok"]:
                mem["progress_at"] = step["index"]  # a test or script now runs, differently
            probes[step["signature"]] = step["outcome"]
            while len(probes) > _FILES_KEPT:
                probes.pop(next(iter(probes)))
        files = mem["files"]
        found = None
        for key in step["returned"]:
            entry = files.pop(key, None)
            if (entry is None or step["index"] - entry["steps"][-1] > p["window"]
                    or mem["progress_at"] > entry["steps"][-1]):
                entry = {"steps": [], "seqs": [], "refused": False, "fired": 0}
            entry["steps"] = (entry["steps"] + [step["index"]])[-20:]
            entry["seqs"] = (entry["seqs"] + [step["seq"]])[-20:]
            entry["refused"] = False
            files[key] = entry
            while len(files) > _FILES_KEPT:
                files.pop(next(iter(files)))
            n = len(entry["steps"])
            if step["refused"] or found is not None:
                continue
            if n >= p["escalate"] and entry["fired"] < 3:
                level = 3
            elif n >= p["nudge"] and entry["fired"] == 0:
                level = 1
            else:
                continue
            entry["fired"] = level
            found = finding(self.name, level, f"revert:{key}", entry["seqs"],
                            g.revert_nudge(key, entry["seqs"]), step["index"])
        return found

    def refuse(self, st: State, step: Step, mem: Memory, p: Params) -> Finding | None:
        for key in step["touches"]:
            entry = mem["files"].get(key)
            if (entry is None or entry["refused"] or len(entry["steps"]) < p["nudge"]
                    or step["index"] - entry["steps"][-1] > p["window"]):
                continue
            entry["refused"] = True
            level = 3 if len(entry["steps"]) >= p["escalate"] else 2
            return finding(self.name, level, f"revert:{key}", entry["seqs"],
                           g.revert_block(level, key, entry["seqs"]), step["index"])
        return None

    def clear(self, mem: Memory) -> None:
        mem["files"] = {}
