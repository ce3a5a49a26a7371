"""How often the closest match of a failed edit shows the agent what it needed, on recorded runs.

For every edit that failed because its search text was not in the file, the agent's own next
successful edit of that file says what it needed: that edit's search text must lie within the
region the closest match would have shown (`supervisor.engine.closest`), context lines
included, exactly as the agent would have seen it. An edit by line numbers as the next edit (an
insertion, SWE-agent's `edit start:end`) is judged by its lines: the region shown must include
them.

What the file looked like at the failure is rebuilt from the run (`SeenFiles`: the numbered
views the agent asked for, the snippets editors print after an edit, and the edits applied to
them). A failure is *not judged*, with the reason listed, when that cannot be done honestly:

- the run showed nothing of the file before the failure;
- the text the tool did not find is in the rebuilt file (so the rebuilt file is stale);
- the agent never edited the file successfully afterwards, or rewrote it whole;
- the later search text is not in the rebuilt file (the run never showed that part, or a
  command changed the file in between).

Failures for a search text that occurs more than once (`ambiguous`) are checked too: the match
must list the occurrences the tool reported, when the tool reports their lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from supervisor.analysis.seen_files import SeenFiles
from supervisor.engine.closest import Match, closest_match
from supervisor.engine.edits import Edit, edit_failure

Outcome = Literal["hit", "miss", "not judged"]

_RANK = {"found": 0, "ambiguous": 0, "line_numbers": 1, "escaped": 1, "whitespace": 2,
         "indentation": 2, "changed": 3, "none": 4, "too_large": 5, "empty": 5}
_TOOL_LINES = re.compile(r"in lines \[([\d,\s]+)\]")


@dataclass(slots=True)
class EditCase:
    """One failed edit and its verdict."""

    run: str
    source: str
    seq: int
    path: str
    failure: str
    outcome: Outcome
    reason: str
    kind: str = ""
    shown: tuple[int, int] | None = None
    next_seq: int | None = None
    judged_by: str = ""


@dataclass(slots=True)
class _Pending:
    """A failed edit waiting for the next successful edit of its file."""

    case: EditCase
    failed: Edit
    blocks: list[tuple[int, list[str]]]
    total: int | None


@dataclass(slots=True)
class ClosestQuality:
    """Every case of a set of runs, with the figures."""

    cases: list[EditCase] = field(default_factory=list)
    runs: int = 0
    confirmed: int = 0
    contradicted: int = 0
    """Rebuilt lines a later view of the run showed the same / different (`SeenFiles`)."""

    def of(self, failure: str) -> list[EditCase]:
        return [c for c in self.cases if c.failure == failure]

    @property
    def judged(self) -> list[EditCase]:
        return [c for c in self.of("not_found") if c.outcome != "not judged"]

    @property
    def hits(self) -> int:
        return sum(1 for c in self.judged if c.outcome == "hit")

    @property
    def share(self) -> float | None:
        """Hits among judged "not found" failures (None when there is none)."""
        judged = self.judged
        return self.hits / len(judged) if judged else None


def measure_events(events: list[dict[str, Any]], run: str, source: str,
                   seen: SeenFiles | None = None) -> list[EditCase]:
    """The failed edits of one run (protocol events in order) and their verdicts; `seen`
    (optional) is the reconstruction to use, for its counters."""
    seen = seen if seen is not None else SeenFiles()
    calls: dict[str, dict[str, Any]] = {}
    pending: dict[str, list[_Pending]] = {}
    cases: list[EditCase] = []
    for event in events:
        kind = event.get("type")
        if kind == "tool_call":
            calls[str(event.get("call_id"))] = event
            continue
        if kind != "tool_result":
            continue
        call = calls.pop(str(event.get("call_id")), None)
        if call is None:
            continue
        edits = seen.edits(call)
        if edits and event.get("ok") is not True:
            failure = edit_failure(_text(event.get("output")), _text(event.get("error")))
            if failure is not None:
                cases += _failed(seen, edits, failure, event, run, source, pending)
        elif edits:
            for edit in edits:
                for waiting in pending.pop(_key(edit.path), []):
                    _judge(waiting, edit, int(event.get("seq") or 0))
        seen.observe(call, event, edits)
    for left in pending.values():
        for waiting in left:
            waiting.case.reason = "the agent did not edit the file successfully afterwards"
    return cases


def measure_paths(paths: list[Path]) -> ClosestQuality:
    """Every run in the files under `paths` (any importable format; other files are skipped)."""
    from supervisor.importers import FormatError, load_runs

    quality = ClosestQuality()
    for path in _files(paths):
        try:
            runs = load_runs(path)
        except FormatError:
            continue
        for imported in runs:
            seen = SeenFiles()
            quality.runs += 1
            quality.cases += measure_events(imported.events, imported.name, str(path), seen)
            quality.confirmed += seen.confirmed
            quality.contradicted += seen.contradicted
    return quality


def best_match(blocks: list[tuple[int, list[str]]], search: str
               ) -> tuple[Match, tuple[int, int]] | None:
    """The closest match over the known blocks of a rebuilt file (the best kind, then score),
    with the first and last line of the block it lies in."""
    best: tuple[Match, tuple[int, int]] | None = None
    for first, lines in blocks:
        got = closest_match("\n".join(lines), search, first_line=first)
        if best is None or (_RANK[got.kind], -got.score) < (_RANK[best[0].kind], -best[0].score):
            best = got, (first, first + len(lines) - 1)
    return best


def _runs_past(match: Match, block: tuple[int, int], total: int | None) -> bool:
    """True when search lines found no partner and the region ends at an edge of the known
    block that is not an edge of the file: the rest may be in the part the run never showed."""
    if not any(d.line is None for d in match.differences):
        return False
    open_start = block[0] > 1 and match.start == block[0]
    open_end = (total is None or block[1] < total) and match.end == block[1]
    return open_start or open_end


def _failed(
    seen: SeenFiles, edits: list[Edit], failure: str, event: dict[str, Any], run: str,
    source: str, pending: dict[str, list[_Pending]],
) -> list[EditCase]:
    out = []
    seq = int(event.get("seq") or 0)
    for edit in edits:
        if edit.kind != "replace" or not edit.search:
            continue
        known = seen.get(edit.path)
        blocks = known.blocks()
        case = EditCase(run, source, seq, edit.path, failure, "not judged", "")
        out.append(case)
        if not blocks:
            case.reason = "the run showed nothing of the file before the failure"
            continue
        if failure == "ambiguous":
            _judge_ambiguous(case, blocks, edit.search, _text(event.get("output")))
            continue
        if any(edit.search in "\n".join(lines) for _, lines in blocks):
            case.reason = "the text the tool did not find is in the rebuilt file (stale)"
            continue
        case.reason = "waiting for the next successful edit"
        pending.setdefault(_key(edit.path), []).append(_Pending(case, edit, blocks, known.total))
    return out


def _judge(waiting: _Pending, after: Edit, seq: int) -> None:
    case, blocks = waiting.case, waiting.blocks
    case.next_seq = seq
    got = best_match(blocks, waiting.failed.search or "")
    if got is None:
        case.reason = "the rebuilt file is empty"
        return
    match, block = got
    case.kind = match.kind
    case.shown = (match.shown[0][0], match.shown[-1][0]) if match.shown else None
    if after.kind == "write":
        case.reason = "the agent rewrote the whole file next"
        return
    if _runs_past(match, block, waiting.total):
        case.reason = (f"the search text runs past the part of the file the run showed "
                       f"(lines {block[0]}-{block[1]})")
        return
    if after.kind in ("insert", "lines"):
        case.judged_by = "edited lines"
        low = after.line or 0
        high = after.end if after.kind == "lines" and after.end is not None else low
        hit = case.shown is not None and case.shown[0] <= low and high <= case.shown[1]
        case.outcome = "hit" if hit else "miss"
        what = (f"inserts after line {low}" if after.kind == "insert"
                else f"replaces lines {low}-{high}")
        case.reason = f"{match.kind}: {what}; shown {_span(case.shown)}"
        return
    wanted = after.search or ""
    if not any(wanted in "\n".join(lines) for _, lines in blocks):
        case.reason = "the later search text is not in the rebuilt file"
        return
    case.judged_by = "search text"
    hit = bool(match.shown) and wanted in match.region_text
    case.outcome = "hit" if hit else "miss"
    case.reason = (f"{match.kind}: the later search text is "
                   f"{'within' if hit else 'outside'} the region shown {_span(case.shown)}")


def _judge_ambiguous(case: EditCase, blocks: list[tuple[int, list[str]]], search: str,
                     output: str) -> None:
    told = _TOOL_LINES.search(output)
    got = best_match(blocks, search)
    if told is None or got is None:
        case.reason = "the tool does not name the occurrences' lines"
        return
    expected = tuple(int(n) for n in re.findall(r"\d+", told.group(1)))
    match = got[0]
    case.kind = match.kind
    case.judged_by = "occurrence lines"
    case.outcome = "hit" if match.occurrences == expected else "miss"
    case.reason = f"the tool says lines {list(expected)}, the match {list(match.occurrences)}"


def _span(shown: tuple[int, int] | None) -> str:
    return f"lines {shown[0]}-{shown[1]}" if shown else "nothing"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _key(path: str) -> str:
    path = path.strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def _files(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        if path.is_dir():
            out += sorted(p for p in path.rglob("*") if p.is_file()
                          and p.suffix in (".traj", ".json", ".jsonl")
                          and p.name != "labels.jsonl")
        elif path.is_file():
            out.append(path)
    return out


# -- robustness on real files: agents' typical mistakes, applied to real text ------------------

PERTURBATIONS = ("indentation", "whitespace", "line_numbers", "escaped", "changed_line",
                 "missing_line")
"""The mistakes agents make in a search text (seen in the corpora: ponyc runs), applied to spans
of real files the runs showed."""
_SPAN_LINES = 4
_SPAN_STRIDE = 25
_SPANS_PER_FILE = 20


@dataclass(slots=True)
class Robustness:
    """Per mistake: spans whose perturbed text still led the closest match to a region that
    holds the original span, and spans tried."""

    hits: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PERTURBATIONS, 0))
    tried: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PERTURBATIONS, 0))

    @property
    def share(self) -> float | None:
        tried = sum(self.tried.values())
        return sum(self.hits.values()) / tried if tried else None


def perturb(kind: str, lines: list[str], first: int) -> str | None:
    """A span of `lines` (starting at line `first`) with one typical mistake; None when the
    mistake does not apply to it."""
    if kind == "indentation":
        return "\n".join(line[2:] if line.startswith("  ") else "  " + line for line in lines)
    if kind == "whitespace":
        out = [line.rstrip() + "  " for line in lines]
        return "\n".join(out) if out != lines else None
    if kind == "line_numbers":
        return "\n".join(f"{first + i:>6}\t{line}" for i, line in enumerate(lines))
    if kind == "escaped":
        return "\\n".join(lines) if len(lines) > 1 else None
    middle = len(lines) // 2
    if kind == "changed_line":
        line = lines[middle]
        if len(line.strip()) < 4:
            return None
        at = len(line) - len(line.lstrip()) + len(line.strip()) // 2
        changed = line[:at] + ("X" if line[at] != "X" else "Y") + line[at + 1:]
        return "\n".join([*lines[:middle], changed, *lines[middle + 1:]])
    if kind == "missing_line" and len(lines) >= 3 and lines[middle].strip():
        return "\n".join([*lines[:middle], *lines[middle + 1:]])
    return None


def robustness(paths: list[Path]) -> Robustness:
    """Spans of every file the runs under `paths` showed (4 lines, every 25th line, at most 20
    a file, unique in their block), each with every mistake of `PERTURBATIONS`: does the region
    shown hold the original span?"""
    from supervisor.importers import FormatError, load_runs

    out = Robustness()
    for path in _files(paths):
        try:
            runs = load_runs(path)
        except FormatError:
            continue
        for imported in runs:
            seen = SeenFiles()
            calls: dict[str, dict[str, Any]] = {}
            for event in imported.events:
                if event.get("type") == "tool_call":
                    calls[str(event.get("call_id"))] = event
                elif event.get("type") == "tool_result":
                    call = calls.pop(str(event.get("call_id")), None)
                    if call is not None:
                        seen.observe(call, event)
            for known in seen.files.values():
                _spans(known.blocks(), out)
    return out


def _spans(blocks: list[tuple[int, list[str]]], out: Robustness) -> None:
    taken = 0
    for first, lines in blocks:
        text = "\n".join(lines)
        for start in range(0, len(lines) - _SPAN_LINES + 1, _SPAN_STRIDE):
            span = lines[start:start + _SPAN_LINES]
            original = "\n".join(span)
            if not (span[0].strip() and span[-1].strip()) or text.count(original) != 1:
                continue  # an edit's search text starts and ends with content
            taken += 1
            if taken > _SPANS_PER_FILE:
                return
            for kind in PERTURBATIONS:
                search = perturb(kind, span, first + start)
                if search is None or search in text:
                    continue
                out.tried[kind] += 1
                match = closest_match(text, search, first_line=first)
                if original in match.region_text:
                    out.hits[kind] += 1
