"""Recurring error: the same error again and again from one tool while the arguments vary.

Errors are compared by identity (`failures.error_identity`: the normalised line that names the
error), per tool: for a shell, per program (`make`, `pip install`, `python3 -c`; a script the
agent runs is a program of its own, so reproducing a bug with one new script after another
is investigation, not a repetition), and for edit tools per file. Occurrences count within a
window of `window` steps, other calls in between allowed; a parallel batch counts once; a
success of that tool (of an editor: of that sub-command, so a working insert does not excuse
failing replacements) ends the episode. Identical calls failing with one error identity in one
workspace version are exact repeats (`exact_repeat` counts them by the same identity, whatever
else their outputs say), so the occurrences here must come from at least two different calls;
the same call failing the same way after edits is `ineffective_edits`' (edits without effect),
and the edit-test-edit-test of ordinary repair is no loop, with one exception: a syntax error
(`SyntaxError`, `IndentationError`) is made by the agent's own edits, not by the bug under
repair, so the same syntax error from one run after different edits counts once per workspace
version (three inserts that each break the file the same way).

Failed edits of a file between which the agent looked at that file in a way it had not used
since its edits began failing (a re-read, then `cat -A` of its whitespace, then `xxd` of its
bytes), and saw something not seen before, are investigation, not one more variation: such a
look starts the file's count again. A look that shows what an earlier one showed, or nothing
(a grep for the missing text), or one more view of a neighbouring range through the same tool,
teaches nothing new and changes nothing.

The rubric's three occurrences: nudge at the 3rd; the next call of that tool (program, file) is
refused at the 4th, escalated at the 6th. A run the person's prompt asked for
(`StepRecord.asked`: the prompt spells out its line) neither counts nor is refused: three build
variants asked for "for good measure" that fail alike are not the agent's loop. A refusal says
that running it again unchanged gives the same result, so it is made only while nothing changed
since the last failure: after a change of the work tree (an edit, or a shell command that wrote
or deleted files: `rm -rf .next` clearing a stale generated file, then the build that would have
passed) the next call checks that change and runs; it still counts when it fails the same way.
A syntax error is the exception, as above: the agent's own edits make it, so an edit is no fix.
"""

from typing import ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.failures import is_test_report
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding
from supervisor.engine.workspace import file_key

_GROUPS_KEPT = 16
_KEPT = 20


def group_of(step: StepRecord) -> str:
    """Failures are compared within one tool (for a shell: one program, see `StepRecord.head`; but
    an error only the harness names, such as a time-out, is the shell tool's own), and for an
    edit tool within one file."""
    if step["category"] == "mutate" and step["path"]:
        return f"edit:{file_key(step['path'])}"
    if step["error_source"] == "harness":
        return step["tool"]
    return step["head"]


class RecurringErrorParams(TypedDict):
    """`[detectors.recurring_error]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    block: int
    escalate: int
    window: int
    stop: int


def _distinct(failures: list[dict[str, object]]) -> int:
    """How many different calls failed (one call alone is an exact repeat, or repair); for a
    syntax error, different (call, workspace version) pairs."""
    if failures and all(f["error"] == "syntax_error" for f in failures):
        return len({(f["signature"], f.get("workspace")) for f in failures})
    return len({f["signature"] for f in failures})


def _changed_since(st: State, failures: list[dict[str, object]]) -> bool:
    """Whether the work tree changed since the last of these failures (so the next call
    checks a change, see the module docstring); never for syntax errors, which edits make.
    A failure remembered by an older engine, without its version after, counts as unchanged."""
    if all(f["error"] == "syntax_error" for f in failures):
        return False
    return failures[-1].get("after", st.ws) != st.ws


class RecurringError(Detector[RecurringErrorParams]):
    name = "recurring_error"
    summary = ("the same error (its normalised message) from one tool, or from edits of one "
               "file, within a window of steps while the arguments vary")
    defaults: ClassVar[RecurringErrorParams] = {
        "enabled": True, "nudge": 3, "block": 4, "escalate": 6, "window": 20, "stop": 0,
    }

    def memory(self) -> Memory:
        # per group: its recent failures (step, batch, signature, error identity, seq, head)
        # and how many calls were refused since; the group's last reported size
        return {"groups": {}}

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: RecurringErrorParams) -> Finding | None:
        groups = mem["groups"]
        key = group_of(step)
        if step["ok"] and step["novel"] and not step["empty"] and step["views"]:
            looked = groups.get(f"edit:{file_key(step['views'])}")
            if looked is not None and step["head"] not in looked.setdefault("looks", []):
                looked["looks"] = [*looked["looks"], step["head"]][-8:]  # a new way to look
                looked["learned"] = step["index"]
        if step["ok"]:  # the tool (for an editor: that sub-command) works again
            group = groups.get(key)
            if group is not None:
                group["failures"] = [f for f in group["failures"] if f["head"] != step["head"]]
                if not group["failures"]:
                    groups.pop(key)
            return None
        if (step["ok"] is None or not step["error_id"] or step.get("asked")
                or is_test_report(step["error"], step["error_id"])):
            # the bug under repair recurs while it is repaired; edits that do not change it are
            # `ineffective_edits`', identical runs `exact_repeat`'s; a run the person asked for
            # is not the agent varying its command
            return None
        group = groups.pop(key, None) or {"failures": [], "refused": 0, "fired": 0}
        groups[key] = group
        while len(groups) > _GROUPS_KEPT:
            groups.pop(next(iter(groups)))
        learned = group.pop("learned", -1)
        group["failures"] = [f for f in group["failures"]
                             if step["index"] - f["index"] <= p["window"]
                             and f["index"] > learned][-_KEPT:]
        group["failures"].append({
            "index": step["index"], "batch": step["batch"] or f"step:{step['index']}",
            "signature": step["signature"], "error_id": step["error_id"], "seq": step["seq"],
            "workspace": step["workspace"], "after": st.ws,
            "head": step["head"],
            "error": step["error"], "category": step["category"]})
        same = [f for f in group["failures"] if f["error_id"] == step["error_id"]]
        count = len({f["batch"] for f in same})
        if _distinct(same) < 2 or step["refused"]:
            return None
        stop = p.get("stop")
        if stop and count >= stop:
            level = 4
        elif count >= p["escalate"] and group["fired"] < 3:
            level = 3
        elif count >= p["nudge"] and group["fired"] == 0:
            level = 1
        else:
            return None
        group["fired"] = level
        return finding(self.name, level, f"error:{key}:{step['error_id'][:80]}",
                       [f["seq"] for f in same], g.recurring_error_nudge(step, key, same),
                       step["index"])

    def refuse(self, st: State, step: StepRecord, mem: Memory,
               p: RecurringErrorParams) -> Finding | None:
        key = group_of(step)
        group = mem["groups"].get(key)
        if not group or not group["failures"] or step.get("asked"):
            return None
        last = group["failures"][-1]
        same = [f for f in group["failures"] if f["error_id"] == last["error_id"]
                and step["index"] - f["index"] <= p["window"]]
        if _distinct(same) < 2 or _changed_since(st, same):
            return None
        attempts = len({f["batch"] for f in same}) + group["refused"] + 1
        stop = p.get("stop")
        if stop and attempts >= stop:
            level = 4
        elif attempts >= p["escalate"]:
            level = 3
        elif attempts >= p["block"]:
            level = 2
        else:
            return None
        group["refused"] += 1
        episode = {"group": key, "count": len(same), "error_id": last["error_id"],
                   "seqs": [f["seq"] for f in same], "error": last["error"],
                   "category": last["category"]}
        return finding(self.name, level, f"error:{key}:{last['error_id'][:80]}",
                       episode["seqs"], g.recurring_error_block(level, step, episode),
                       step["index"])

    def undo(self, step: StepRecord, mem: Memory) -> None:
        group = mem["groups"].get(group_of(step))
        if group:
            group["refused"] = max(0, group["refused"] - 1)

    def clear(self, mem: Memory) -> None:
        """An operator's answer lifts the refusals; the failures still count, so the same
        error once more is reported again (within the cooldown: a block, not a question)."""
        for group in mem["groups"].values():
            group.update(refused=0, fired=0)

    def new_context(self, mem: Memory) -> None:
        mem["groups"] = {}
