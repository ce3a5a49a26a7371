"""Similar calls: variations of one call that all end the same way.

Calls of one tool whose canonical arguments are at least `threshold` alike (rapidfuzz), with
the same outcome class, in the same workspace; calls issued together in one model turn (a
batch) count once, as none of them saw another's result. Calls whose output says nothing
(blank, "No matches found") are left out unless they failed with a known error class: searching
one name after another and finding nothing is exploring.
"""

from itertools import islice
from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, batches, finding, recent
from supervisor.engine.fingerprint import KNOWN_ERROR_CLASSES
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding

_FLAGS_KEPT = 8


def _ratio(a: str, b: str, cutoff: float) -> float:
    from rapidfuzz.fuzz import ratio  # lazy: ~40 ms import the hook should not always pay

    return ratio(a, b, score_cutoff=cutoff * 100) / 100


def _uninformative(step: StepRecord) -> bool:
    return step["empty"] and (bool(step["ok"]) or step["error"] not in KNOWN_ERROR_CLASSES)


class SimilarCallsParams(TypedDict):
    """`[detectors.similar_calls]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    threshold: float
    nudge: int
    block: int
    escalate: int
    lookback: int
    max_chars: int


def outcome_class(step: StepRecord) -> str:
    """Errors of a known class compare by that class; other errors and successes by their
    normalised output (two scripts failing with different messages are not alike)."""
    if not step["ok"] and step["error"] in KNOWN_ERROR_CLASSES:
        return f"err:{step['error']}"
    return f"out:{step['outcome']}"


class SimilarCalls(Detector[SimilarCallsParams]):
    name = "similar_calls"
    summary = ("calls of one tool whose arguments are nearly alike, all with the same outcome "
               "class, in the same workspace")
    defaults: ClassVar[SimilarCallsParams] = {
        "enabled": True, "threshold": 0.85, "nudge": 5, "block": 7, "escalate": 9, "lookback": 20,
        "max_chars": 400,
    }

    def memory(self) -> Memory:
        # the clusters found, newest last: tool, workspace, outcome class, size, refusals
        return {"flags": []}

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: SimilarCallsParams) -> Finding | None:
        if _uninformative(step):
            return None
        args = step["args"][: p["max_chars"]]
        cls = outcome_class(step)
        cluster = []
        sigs = {step["signature"]}
        for s in islice(recent(st, p["lookback"]), 1, None):
            if (s["tool"] != step["tool"] or s["workspace"] != step["workspace"]
                    or outcome_class(s) != cls or _uninformative(s)):
                continue
            if s["signature"] == step["signature"] or _ratio(
                    args, s["args"][: p["max_chars"]], p["threshold"]) >= p["threshold"]:
                cluster.append(s)
                sigs.add(s["signature"])
        n = batches([*cluster, step])
        if len(sigs) < 2 or n < p["nudge"]:
            return None
        flags = mem["flags"]
        flag = next((f for f in flags if f["tool"] == step["tool"]
                     and f["workspace"] == step["workspace"] and f["class"] == cls), None)
        if flag is None:
            flag = {"tool": step["tool"], "workspace": step["workspace"], "class": cls,
                    "size": 0, "refused": 0, "args": args, "error": step["error"],
                    "ok": step["ok"], "category": step["category"], "seqs": []}
            flags.append(flag)
            del flags[:-_FLAGS_KEPT]
        was = flag["size"]
        flag.update(size=max(n, was), args=args)
        flag["seqs"] = sorted({s["seq"] for s in cluster} | {step["seq"]})[-20:]
        if step["refused"]:
            return None
        level = 3 if n >= p["escalate"] else (1 if was < p["nudge"] else 0)
        if level == 0:
            return None
        msg = g.similar_calls_nudge(step, n, p["threshold"])
        return finding(self.name, level, step["signature"], flag["seqs"], msg, step["index"])

    def refuse(self, st: State, step: StepRecord, mem: Memory,
               p: SimilarCallsParams) -> Finding | None:
        for flag in mem["flags"]:
            if flag["tool"] != step["tool"] or flag["workspace"] != step["workspace"]:
                continue
            if _ratio(step["args"][: p["max_chars"]], flag["args"],
                      p["threshold"]) < p["threshold"]:
                continue
            attempts = flag["size"] + flag["refused"] + 1
            if attempts >= p["escalate"]:
                level = 3
            elif attempts >= p["block"]:
                level = 2
            else:
                continue
            flag["refused"] += 1
            msg = g.similar_calls_block(level, step, flag)
            return finding(self.name, level, step["signature"], flag["seqs"], msg,
                           step["index"])
        return None

    def undo(self, step: StepRecord, mem: Memory) -> None:
        for flag in mem["flags"]:
            if flag["tool"] == step["tool"] and flag["refused"]:
                flag["refused"] -= 1
                break

    def clear(self, mem: Memory) -> None:
        mem["flags"] = []
