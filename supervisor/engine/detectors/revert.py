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

The same loop seen from the attempts: an agent that restores a file to one content twice (a
backup copied back, `git checkout`) has thrown away what it wrote before each restore. When
those restores threw away the rubric's three attempts (a rewrite of the file the agent then
looked at or ran: rewrites with no look between are one attempt; rewrites restored before any
look were not tried and are none), the same approach has failed three times, even though the
file came back only twice: restore, attempt, look, attempt, look, restore. Two restores that
throw away two attempts (try, restore, try, restore, try: the third try may work) stay quiet,
and so does restoring once, however many attempts it ends.
"""

from typing import Any, ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding
from supervisor.engine.workspace import file_key

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


def _thrown_away(entry: dict[str, Any]) -> int:
    """The attempts the file's restores threw away, once one content came back twice (two
    restores to one version); 0 before (one restore ends an attempt, it is no loop)."""
    ids = entry.get("ids") or {}
    if max((len(v) for v in ids.values()), default=0) < 2:
        return 0
    return len(entry.get("undone", []))


def _attempt(step: StepRecord, mem: Memory, contents: dict[str, Any], window: int) -> None:
    """Follow the attempts at each file once a step is judged: a rewrite (a change that is not
    a return to earlier content) starts a new attempt when the agent looked at the file, ran
    something, or looked without naming one file (a search, `head -n 9 f | tail`) since the
    file's last rewrite (it judged that one); rewrites with nothing between, or with only looks
    at other files (read a.py, edit b.py, read c.py, edit b.py), are one attempt. Also when the
    file last came to each content (a restore throws away what came after)."""
    attempts = mem.setdefault("attempts", {})
    returned = set(step["returned"])
    for key in step["changed"]:
        if key == "*":
            continue
        entry = attempts.pop(key, None) or {"last": -1, "starts": [], "held": {}}
        if key not in returned:
            if (entry["last"] < max(mem.get("looked_at", -1), entry.get("looked", -1))
                    or not entry["starts"]):
                entry["starts"] = [*(a for a in entry["starts"]
                                     if step["index"] - a[0] <= 2 * window),
                                   [step["index"], step["seq"]]][-20:]
            entry["last"] = step["index"]
        held = entry["held"]
        content = str((contents.get(key) or {}).get("id", ""))
        held.pop(content, None)
        held[content] = step["index"]
        while len(held) > 8:
            held.pop(next(iter(held)))
        attempts[key] = entry
        while len(attempts) > _FILES_KEPT:
            attempts.pop(next(iter(attempts)))
    if step["changed"] or step["category"] not in ("read", "run"):
        return
    shown = file_key(step["views"]) if step["category"] == "read" and step["views"] else None
    if shown is None:
        mem["looked_at"] = step["index"]
    elif shown in attempts:
        attempts[shown]["looked"] = step["index"]


def _undone(step: StepRecord, mem: Memory, key: str, content: str, since: int
            ) -> list[list[int]]:
    """The attempts at file `key` that step `step`, bringing it back to `content`, threw away:
    those begun after `since`, after the file last had that content, and after the last
    progress (as [step, seq]); the last of them only if it was tried, that is looked at, run
    or searched after its last rewrite. An attempt restored unseen (written, then dropped for
    a simpler plan before anything ran: pvlib-1154 52) says nothing about the approach; only
    tried attempts are the rubric's occurrences of one failing approach."""
    entry = (mem.get("attempts") or {}).get(key) or {}
    since = max(since, entry.get("held", {}).get(content, -1), mem["progress_at"])
    undone = [a for a in entry.get("starts", []) if since < a[0] < step["index"]]
    if undone and entry["last"] >= max(mem.get("looked_at", -1), entry.get("looked", -1)):
        undone.pop()  # its rewrites were never looked at: not tried
    return undone


class Revert(Detector[RevertParams]):
    name = "revert"
    summary = ("a file returns to content it had before, again and again within a window of "
               "steps (changes undone and redone)")
    defaults: ClassVar[RevertParams] = {"enabled": True, "nudge": 3, "escalate": 6, "window": 20}

    def memory(self) -> Memory:
        # per file key: the seqs and steps of its recent returns, whether the rewrite after
        # the last one was refused, the level reported; per test or script run (signature:
        # an output is compared through the same filter only, see `StepRecord.run`) its last
        # output, and the last step at which one of them succeeded with a new one;
        # per file key its recent attempts (see `_attempt`), and the last step that looked at
        # or ran something without writing
        return {"files": {}, "probes": {}, "progress_at": -1, "attempts": {},
                "looked_at": -1}

    def observe(self, st: State, step: StepRecord, mem: Memory, p: RevertParams) -> Finding | None:
        found = self._returns(st, step, mem, p)
        _attempt(step, mem, st.workspace.get("files", {}), p["window"])
        return found

    def _returns(self, st: State, step: StepRecord, mem: Memory, p: RevertParams
                 ) -> Finding | None:
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
            since = entry["steps"][-1] if entry["steps"] else step["index"] - p["window"]
            entry["undone"] = [*entry.get("undone", []),
                               *_undone(step, mem, key, content, since)][-20:]
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
            elif entry["fired"] == 0 and (n >= p["nudge"] or _thrown_away(entry) >= p["nudge"]):
                level = 1
            else:
                continue
            entry["fired"] = level
            message = (g.revert_nudge(key, len(entry["seqs"])) if n >= p["nudge"] else
                       g.revert_attempts_nudge(key, len(entry["seqs"]), len(entry["undone"])))
            found = finding(self.name, level, f"revert:{key}",
                            sorted({*entry["seqs"], *(a[1] for a in entry["undone"])}),
                            message, step["index"])
        return found

    def refuse(self, st: State, step: StepRecord, mem: Memory, p: RevertParams) -> Finding | None:
        for key in step["touches"]:
            entry = mem["files"].get(key)
            if (entry is None or entry["refused"]
                    or max(_times(entry), _thrown_away(entry)) < p["nudge"]
                    or step["index"] - entry["steps"][-1] > p["window"]):
                continue
            entry["refused"] = True
            level = 3 if _times(entry) >= p["escalate"] else 2
            return finding(self.name, level, f"revert:{key}", entry["seqs"],
                           g.revert_block(level, key, len(entry["seqs"])), step["index"])
        return None

    def clear(self, mem: Memory) -> None:
        mem["files"] = {}
        mem["attempts"] = {}  # an operator's answer, a prompt: the attempts before count no more
