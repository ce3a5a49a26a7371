"""Ineffective edits: the workspace keeps changing, the output of the probe does not.

A test or script run (`run` category: `pytest ...`, `python reproduce.py`) is a probe, whatever
output filters its line ends with (`StepRecord.run`: `pytest -x 2>&1 | tail -20` re-runs
`pytest -x`; an agent that re-ran its check through another filter escaped the count). Between
two runs of the same probe, if files other than the probe's own were edited and its normalised
output is identical, that is one round without effect: "the code you edit may not be the code
that runs". Outputs are compared through the same filter only (the last output each filter
showed): a `grep` shows other lines than a `tail` of one unchanged output, so a run through a
filter not used before neither counts nor resets. Edits of the probe's own files (the script,
the test file) neither count nor reset the rounds; neither do new files (a backup, a scratch
script) or the files of other probes. A changed output resets them, and a round does not
count when the same edits changed another probe's output (verifying that a change leaves one
output alone is not a loop), nor when the probe passed and says so (`failures.reports_success`:
a build that `Finished`, `12 passed`): a person refactoring checks that the output stays the
same. The rubric's three: nudge at 3 rounds; the probe's re-run after one more edit is refused
at 4 and escalated at 6.
"""

from typing import Any, ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine import workspace
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.failures import reports_success
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord, run_of
from supervisor.engine.types import Finding

_PROBES_KEPT = 32
_FILTERS_KEPT = 4
"""Filters remembered per probe (`pytest`, `pytest | tail -20`, `pytest | grep FAIL`)."""


class IneffectiveEditsParams(TypedDict):
    """`[detectors.ineffective_edits]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    block: int
    escalate: int


def edits_since(st: State, since: int, step: StepRecord) -> tuple[list[str], bool]:
    """(files edited since step `since` that count, whether the probe's own files changed)."""
    probes = st.workspace["probes"]
    counted: list[str] = []
    own = False
    for index, key, kind in workspace.changed_since(st.workspace, since):
        if index == step["index"]:
            continue  # what the probe itself wrote
        if any(workspace.same_file(key, p) for p in step["probe"]):
            own = True
        elif (kind != "create" and not workspace.is_backup(key)
              and not any(workspace.same_file(key, p) for p in probes)):
            counted.append(key)
    return list(dict.fromkeys(counted)), own


class IneffectiveEdits(Detector[IneffectiveEditsParams]):
    name = "ineffective_edits"
    summary = ("edits between runs of the same test or script leave its output unchanged, "
               "round after round")
    defaults: ClassVar[IneffectiveEditsParams] = {
        "enabled": True, "nudge": 3, "block": 4, "escalate": 6,
    }

    def memory(self) -> Memory:
        # per probe (its run: `StepRecord.run`, output filters left out): its last run's step,
        # the last output seen through each filter (by call signature), rounds without effect
        # so far, the files edited in them, their seqs, refusals since; and the last step at
        # which edits did change some probe's output
        return {"probes": {}, "effective_at": -1}

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: IneffectiveEditsParams) -> Finding | None:
        if step["category"] != "run" or step["ok"] is None:
            return None
        probes: dict[str, Any] = mem["probes"]
        run = run_of(step)
        prev = probes.pop(run, None)
        probes[run] = entry = prev or {
            "index": step["index"], "outcomes": {}, "rounds": 0, "edited": [],
            "seqs": [step["seq"]], "refused": 0, "fired": 0}
        while len(probes) > _PROBES_KEPT:
            probes.pop(next(iter(probes)))
        outcomes: dict[str, Any] = entry.setdefault("outcomes", {})  # (not in older states)
        before = outcomes.pop(step["signature"], None)  # the last output through this filter
        outcomes[step["signature"]] = step["outcome"]
        while len(outcomes) > _FILTERS_KEPT:
            outcomes.pop(next(iter(outcomes)))
        if prev is None:
            return None
        since = prev["index"]
        edited, own = edits_since(st, since, step)
        entry["index"] = step["index"]
        if own or not edited:
            return None  # the probe changed, or nothing it could reflect did: no round
        if before is None:
            return None  # the first look through this filter: nothing to compare it with
        same = step["outcome"] == before
        if same and step["ok"] and reports_success(step["last_line"]):
            return None  # it passes, as it did: the edits kept what they had to keep
        if not same:
            entry.update(rounds=0, edited=[], seqs=[step["seq"]], refused=0, fired=0)
            mem["effective_at"] = step["index"]
            return None
        if mem["effective_at"] > since:
            return None  # the same edits changed another probe's output: they do take effect
        entry["rounds"] += 1
        entry["edited"] = list(dict.fromkeys(entry["edited"] + edited))[-8:]
        entry["seqs"] = (entry["seqs"] + [step["seq"]])[-20:]
        n = entry["rounds"]
        if step["refused"]:
            return None
        if n >= p["escalate"] and entry["fired"] < 3:
            level = 3
        elif n >= p["nudge"] and entry["fired"] == 0:
            level = 1
        else:
            return None
        entry["fired"] = level
        return finding(self.name, level, f"probe:{run_of(step)}", entry["seqs"],
                       g.ineffective_edits_nudge(step, n, entry["edited"]),
                       step["index"])

    def refuse(self, st: State, step: StepRecord, mem: Memory,
               p: IneffectiveEditsParams) -> Finding | None:
        if step["category"] != "run":
            return None
        entry = mem["probes"].get(run_of(step))
        if not entry or entry["rounds"] < p["nudge"]:
            return None
        edited, own = edits_since(st, entry["index"], step)
        if own or not edited:
            return None  # nothing new to test: not one more round
        attempts = entry["rounds"] + entry["refused"] + 1
        if attempts >= p["escalate"]:
            level = 3
        elif attempts >= p["block"]:
            level = 2
        else:
            return None
        entry["refused"] += 1
        return finding(self.name, level, f"probe:{run_of(step)}", entry["seqs"],
                       g.ineffective_edits_block(level, step, entry), step["index"])

    def undo(self, step: StepRecord, mem: Memory) -> None:
        entry = mem["probes"].get(run_of(step))
        if entry:
            entry["refused"] = max(0, entry["refused"] - 1)

    def clear(self, mem: Memory) -> None:
        for entry in mem["probes"].values():
            entry.update(rounds=0, edited=[], refused=0, fired=0)
