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
`window` steps (an edit of it keeps it known), and the searches of the episode name one file
again and again: names of several files, each searched once and not found, are a hunt for
unused code (`old_helpers`, `legacy_utils`, `compat_shim`: nothing imports them), not a search
in the wrong place. Files the agent only created are not counted: agents name their scripts
after what they investigate (`trace_where_node.py`), and a search for that concept finding
nothing says nothing about where the search looks. A search that finds
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
    return _fold(_base(path).split(".", 1)[0])


def _is_file(path: str) -> bool:
    """Whether a path names a file (its last part has an extension), not a directory."""
    return "." in _base(path).lstrip(".")


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


def _base(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


class BlindSearch(Detector[BlindSearchParams]):
    name = "blind_search"
    summary = ("searches keep finding nothing for the name of a file a read has just shown "
               "(the search looks in the wrong place)")
    defaults: ClassVar[BlindSearchParams] = {
        "enabled": True, "nudge": 3, "window": 20, "min_name": 6,
    }

    def memory(self) -> Memory:
        # the files shown (folded stem -> [step index, file name]), the empty searches of the
        # episode ([seq, step index, name, the stems it names]), the stems it nudged about
        return {"files": {}, "misses": [], "fired": []}

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
                files[stem] = [step["index"], _base(path)]
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
                mem.update(misses=[], fired=[])
            return None
        index = step["index"]
        stems = [s for s, (i, _) in mem["files"].items() if index - i <= p["window"]]
        for name in search_names(step["args"], p["min_name"]):
            named = [s for s in stems if name in s]
            if named:
                break
        else:
            return None
        misses = [m for m in mem["misses"] if index - m[1] <= p["window"]]
        misses.append([step["seq"], index, name, named])
        mem["misses"] = misses[-20:]
        for stem in named:
            # one file's name searched for again and again: several files' names each
            # searched once is a hunt for unused code, not a search in the wrong place
            same = [m for m in misses if stem in m[3]]
            if len(same) < p["nudge"] or stem in mem["fired"]:
                continue
            mem["fired"] = [*mem["fired"], stem][-_FILES_KEPT:]
            seqs = [m[0] for m in same]
            return finding(self.name, 1, f"blind_search:{stem}", seqs,
                           g.blind_search_nudge(len(same), mem["files"][stem][1]),
                           index)
        return None

    def new_context(self, mem: Memory) -> None:
        mem.update(misses=[], fired=[])
