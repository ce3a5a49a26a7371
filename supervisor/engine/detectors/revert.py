"""Revert: a file comes back to one earlier content again and again.

The workspace model (`workspace.py`: real digests live, content followed from the calls
offline) marks a change that brings a file back to an earlier content: an undo, a restore from
a backup, a redo of an edit that was undone. One is an undo; oscillation is a loop once one
content of the file has come round the rubric's three times (it was there, and came back to it
twice: A→B→A→B→A, or restore, edit, restore, edit, restore), each return within a window of
`window` steps of the previous one and without progress in between (a test or script re-run
that now succeeds with another output restarts the count: restoring a backup between
attempts that each change what a working test says is iterative repair; a new failure is not
progress): nudge, then refuse the next rewrite of that file (the call that would write it
again); the sixth time escalates.

Counting one content's returns, not all returns, is what tells oscillation from a
restore-and-reapply clean-up: restoring a file from git and re-applying the wanted edits one by
one returns to every intermediate version once (O→X1→X→O→X1→X: three returns, no content
three times), which careful agents do; going round the same versions again is the loop.
"""

from typing import Any, ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding

_FILES_KEPT = 32


class RevertParams(TypedDict):
    """`[detectors.revert]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    escalate: int
    window: int


def _times(entry: dict[str, Any]) -> int:
    """How far the file has gone round: its returns, at most the times it had its most
    revisited content (there once, plus each return to it)."""
    ids = entry.get("ids") or {}
    return min(len(entry["steps"]), 1 + max((len(v) for v in ids.values()), default=0))


class Revert(Detector[RevertParams]):
    name = "revert"
    summary = ("a file returns to content it had before, again and again within a window of "
               "steps (changes undone and redone)")
    defaults: ClassVar[RevertParams] = {"enabled": True, "nudge": 3, "escalate": 6, "window": 20}

    def memory(self) -> Memory:
        # per file key: the seqs and steps of its recent returns, whether the rewrite after
        # the last one was refused, the level reported; per test or script run (signature)
        # its last output, and the last step at which one of them succeeded with a new one
        return {"files": {}, "probes": {}, "progress_at": -1}

    def observe(self, st: State, step: StepRecord, mem: Memory, p: RevertParams) -> Finding | None:
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
        contents = st.workspace.get("files", {})
        for key in step["returned"]:
            entry = files.pop(key, None)
            if (entry is None or step["index"] - entry["steps"][-1] > p["window"]
                    or mem["progress_at"] > entry["steps"][-1]):
                entry = {"steps": [], "seqs": [], "refused": False, "fired": 0, "ids": {}}
            content = str((contents.get(key) or {}).get("id", ""))
            ids = entry.setdefault("ids", {})
            ids[content] = [*ids.get(content, []), step["seq"]][-20:]
            while len(ids) > _FILES_KEPT:
                ids.pop(next(iter(ids)))
            entry["steps"] = (entry["steps"] + [step["index"]])[-20:]
            entry["seqs"] = (entry["seqs"] + [step["seq"]])[-20:]
            entry["refused"] = False
            files[key] = entry
            while len(files) > _FILES_KEPT:
                files.pop(next(iter(files)))
            n = _times(entry)
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

    def refuse(self, st: State, step: StepRecord, mem: Memory, p: RevertParams) -> Finding | None:
        for key in step["touches"]:
            entry = mem["files"].get(key)
            if (entry is None or entry["refused"] or _times(entry) < p["nudge"]
                    or step["index"] - entry["steps"][-1] > p["window"]):
                continue
            entry["refused"] = True
            level = 3 if _times(entry) >= p["escalate"] else 2
            return finding(self.name, level, f"revert:{key}", entry["seqs"],
                           g.revert_block(level, key, entry["seqs"]), step["index"])
        return None

    def clear(self, mem: Memory) -> None:
        mem["files"] = {}
