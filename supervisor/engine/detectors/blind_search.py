"""Blind search: searches keep finding nothing for names of files the agent is working on.

A search that finds nothing is normally information (the name is not used), and many of them in
a row are exploration, not a loop (`similar_calls` leaves them alone). One kind is not: the
agent searches for a name it knows is there, because it is the name of a file it has just
read or written (`ExerciseSubstitut` after editing `ExerciseSubstitutionService.swift`), and
the search answers "No matches found". The file exists; the search looks in the wrong place (a
`cd` moved the working directory, a glob or root that does not cover it). Each new spelling of
the pattern is then another blind attempt with the same empty answer: the rubric's same
failing approach with trivial variation.

A search counts when it is a read-only call (category `read`) that is not a file read and not
confined to one file (a name not used in one file is no sign of a wrong place), its result is
empty, and a name in its arguments (an identifier of at least `min_name` characters, path and
glob arguments left out) is part of the name of a file the session was shown within the last
`window` steps (an edit of it keeps it known). Files the agent only created are not counted:
agents name their scripts after what they investigate (`trace_where_node.py`), and a search for
that concept finding nothing says nothing about where the search looks. A search that finds
something ends the episode (the search works again); a person's prompt starts afresh. The
rubric's three occurrences: nudge at the 3rd, and only a nudge: the evidence is different calls
whose answer is empty (`moderate`), never enough to refuse a call.

Not a loop by design: searches for names no file of the session is named after (exploring
whether something exists), one or two empty searches (checking that a removed name is gone),
searches inside one file, empty searches with a successful one in between.
"""

import json
import re
from typing import Any, ClassVar, TypedDict

from supervisor.engine import guidance as g
from supervisor.engine.detectors.base import Detector, Memory, finding
from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import Finding

_FILES_KEPT = 16
_PATHLIKE = re.compile(r"[^\s\"'=:,]*[/*][^\s\"'=:,]*|[\w.-]+\.[A-Za-z]\w{0,4}\b")
"""Path and glob arguments (`src/pkg/a.py`, `*.swift`, `a.py`): where to look, not what."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")
_KEYS = frozenset({"pattern", "path", "glob", "outputmode", "fileswithmatches", "content",
                   "command", "description", "include", "exclude", "query", "regex",
                   "recursive", "headlimit", "multiline", "count"})
"""Argument keys and values of search tools (folded), which name no file."""


class BlindSearchParams(TypedDict):
    """`[detectors.blind_search]` of the policy, merged for one tool (defaults and meaning in
    docs/policy.md)."""

    enabled: bool
    nudge: int
    window: int
    min_name: int


def _stem(path: str) -> str:
    """A file's name without its directory and extension, lower case, without `_` and `-`
    (`billing_client.py` names `BillingClient`)."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return _fold(name.split(".", 1)[0])


def _is_file(path: str) -> bool:
    """Whether a path names a file (its last part has an extension), not a directory."""
    return "." in path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lstrip(".")


def _fold(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def search_names(args: str, min_name: int) -> list[str]:
    """The names a search's canonical arguments look for (folded as file names are), its path
    and glob arguments and the keys of its tool left out."""
    try:
        value: Any = json.loads(args)
    except ValueError:
        value = args
    texts = ([str(v) for k, v in value.items() if k not in ("path", "glob", "include")]
             if isinstance(value, dict) else [str(value)])
    names = []
    for text in texts:
        for word in _NAME.findall(_PATHLIKE.sub(" ", text)):
            low = _fold(word)
            if len(low) >= min_name and low not in _KEYS and low not in names:
                names.append(low)
    return names


def _known(names: list[str], stems: dict[str, int]) -> str | None:
    """The first name that is part of a known file's name."""
    for name in names:
        if any(name in stem for stem in stems):
            return name
    return None


class BlindSearch(Detector[BlindSearchParams]):
    name = "blind_search"
    summary = ("searches keep finding nothing for names of files the session has just read "
               "or written (the search looks in the wrong place)")
    defaults: ClassVar[BlindSearchParams] = {
        "enabled": True, "nudge": 3, "window": 20, "min_name": 6,
    }

    def memory(self) -> Memory:
        # the names of the files read or written with success (stem -> step index), the
        # empty searches of the episode (seq, step index, the name), whether it nudged
        return {"files": {}, "misses": [], "fired": False}

    def record(self, st: State, step: StepRecord, mem: Memory) -> None:
        if not step["ok"]:
            return
        files = mem["files"]
        if step["category"] == "read" and not step["empty"]:
            shown = [step["views"] or step["path"]]  # a file shown: it exists
        elif step["category"] == "mutate":
            shown = [x for x in (step["path"], *step["touches"])
                     if x and _stem(x) in files]  # an edit keeps a known file fresh
        else:
            return
        for path in shown:
            if path and _is_file(path):
                stem = _stem(path)
                files.pop(stem, None)
                files[stem] = step["index"]
        while len(files) > _FILES_KEPT:
            files.pop(next(iter(files)))

    def observe(self, st: State, step: StepRecord, mem: Memory,
                p: BlindSearchParams) -> Finding | None:
        if step["category"] != "read" or step["is_read"] or step["ok"] is None:
            return None
        where = step["views"] or step["path"]
        if where and _is_file(where):
            return None  # a search of one file: the name is not used there, nothing more
        if not step["empty"]:
            if step["ok"]:  # a search that finds something: searching works
                mem.update(misses=[], fired=False)
            return None
        index = step["index"]
        stems = {s: i for s, i in mem["files"].items() if index - i <= p["window"]}
        name = _known(search_names(step["args"], p["min_name"]), stems)
        if name is None:
            return None
        misses = [m for m in mem["misses"] if index - m[1] <= p["window"]]
        misses.append([step["seq"], index, name])
        mem["misses"] = misses[-20:]
        if len(misses) < p["nudge"] or mem["fired"]:
            return None
        mem["fired"] = True
        seqs = [m[0] for m in misses]
        return finding(self.name, 1, f"blind_search:{name}", seqs,
                       g.blind_search_nudge(len(misses), [m[2] for m in misses], seqs),
                       index)

    def new_context(self, mem: Memory) -> None:
        mem.update(misses=[], fired=False)
