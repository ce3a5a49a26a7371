"""The summary `supervisor analyze` prints over many runs: where runs looped and what it cost.

Over all runs: how many had a loop (a finding of a loop detector), the tool calls inside loops
and their share, the cost spent inside loops, the most common loop signatures, and one table
row per run. Cost inside a loop is the engine's attribution (each `usage` is charged to the
next tool call) when a run records cost per model call; a run that records only its total cost
gets a share by steps (marked `~`), and a run with no cost is left out of the cost figures.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from supervisor.safetext import clean

TOP_SIGNATURES = 10
REACTIONS = ("nudge", "block", "escalate", "stop")


class CostCounter:
    """Passes events through, counting the `usage` events that carry a cost."""

    def __init__(self, events: Iterable[dict[str, Any]]) -> None:
        self._events = events
        self.costed = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for event in self._events:
            if isinstance(event, dict) and event.get("type") == "usage":
                cost = event.get("cost_usd")
                if isinstance(cost, int | float) and not isinstance(cost, bool):
                    self.costed += 1
            yield event


@dataclass(slots=True)
class RunLine:
    """One analysed run, as the summary sees it."""

    session: str
    steps: int
    loop_steps: int
    cost: float | None
    loop_cost: float | None
    estimated: bool
    first: dict[str, int | None]
    signatures: list[dict[str, Any]]

    @property
    def looped(self) -> bool:
        return self.loop_steps > 0 or bool(self.signatures)


def run_line(report: Any, costed_usages: int) -> RunLine:
    """The summary's view of a `RunReport`; `costed_usages` as counted by `CostCounter`."""
    data = report.to_dict()
    cost = data.get("cost_usd")
    loop_cost = data.get("loop_cost_usd")
    estimated = False
    if cost is not None and costed_usages == 1 and data["steps"] > 1:
        loop_cost = round(cost * data["loop_steps"] / data["steps"], 6)  # only a total
        estimated = True
    examples: dict[tuple[str, str], str] = {}
    for finding in report.findings:
        examples.setdefault((finding.detector, finding.signature), finding.message)
    signatures = [{**sig, "example": examples.get((sig["detector"], sig["signature"]), "")}
                  for sig in data["signatures"]]
    return RunLine(data["session"], data["steps"], data["loop_steps"], cost, loop_cost,
                   estimated, data["first"], signatures)


def summary(lines: list[RunLine]) -> dict[str, Any]:
    """The figures of the summary as plain data (also what the tests check)."""
    looped = [line for line in lines if line.looped]
    costed = [line for line in lines if line.cost is not None]
    signatures: dict[tuple[str, str], dict[str, Any]] = {}
    for line in lines:
        for sig in line.signatures:
            key = (sig["detector"], sig["signature"])
            entry = signatures.setdefault(key, {"detector": sig["detector"],
                                                "signature": sig["signature"], "runs": 0,
                                                "steps": 0, "example": sig.get("example", "")})
            entry["runs"] += 1
            entry["steps"] += int(sig.get("steps") or 0)
    common = sorted(signatures.values(), key=lambda e: (-e["runs"], -e["steps"],
                                                         e["detector"], e["signature"]))
    return {
        "runs": len(lines),
        "runs_with_loops": len(looped),
        "steps": sum(line.steps for line in lines),
        "loop_steps": sum(line.loop_steps for line in lines),
        "runs_with_cost": len(costed),
        "cost_usd": round(sum(line.cost or 0.0 for line in costed), 6) if costed else None,
        "loop_cost_usd": round(sum(line.loop_cost or 0.0 for line in costed), 6)
        if costed else None,
        "estimated_runs": sum(1 for line in costed if line.estimated),
        "signatures": common[:TOP_SIGNATURES],
    }


def print_summary(lines: list[RunLine], out: TextIO) -> None:
    """Write the summary as readable text."""
    figures = summary(lines)
    out.write(f"Summary of {figures['runs']} runs, {figures['steps']} tool calls\n")
    out.write(f"  runs with loops     {figures['runs_with_loops']} of {figures['runs']}"
              f"{_pct(figures['runs_with_loops'], figures['runs'])}\n")
    out.write(f"  steps inside loops  {figures['loop_steps']} of {figures['steps']}"
              f"{_pct(figures['loop_steps'], figures['steps'])}\n")
    if figures["cost_usd"] is None:
        out.write("  cost inside loops   no run records its cost\n")
    else:
        note = f"; {figures['estimated_runs']} by share of steps" if figures["estimated_runs"] \
            else ""
        out.write(f"  cost inside loops   ${figures['loop_cost_usd']:.4f} of "
                  f"${figures['cost_usd']:.4f}"
                  f"{_pct(figures['loop_cost_usd'], figures['cost_usd'])} "
                  f"({figures['runs_with_cost']} runs record cost{note})\n")
    if figures["signatures"]:
        # a signature is a hash: each loop is said by what the engine first said of it, the
        # hash (to match `--json`) last, labelled; cut to a terminal's width, whole in a pipe
        out.write("  most common loops (what the engine first said of each)\n")
        wide = max(8, *(len(str(sig["detector"])) for sig in figures["signatures"]))
        out.write(f"    {'runs':>4} {'steps':>5}  {'detector':<{wide}} loop\n")
        columns = shutil.get_terminal_size((120, 20)).columns if out.isatty() else None
        for sig in figures["signatures"]:
            text = clean(str(sig["signature"]), keep_newlines=False, limit=40)
            example = clean(str(sig["example"]) or "-", keep_newlines=False, limit=columns)
            detector = clean(str(sig["detector"]), keep_newlines=False)
            row = f"    {sig['runs']:>4} {sig['steps']:>5}  {detector:<{wide}} "
            tail = f"  (signature {text})"
            if columns is not None:  # the example gives way first; the hash last
                room = columns - 1 - len(row) - len(tail)
                if room < 20:
                    tail, room = "", columns - 1 - len(row)
                example = clean(example, keep_newlines=False, limit=max(room, 10))
            out.write(f"{row}{example}{tail}\n")
    out.write("  per run\n")
    width = max([len(line.session) for line in lines] + [7])
    width = min(width, 48)
    if out.isatty():  # the session gives way to the figures, so a row never wraps
        width = max(7, min(width, shutil.get_terminal_size((120, 20)).columns - 62))
    out.write(f"    {'SESSION':<{width}} {'STEPS':>5} {'LOOP':>5} {'COST':>10} "
              f"{'LOOP COST':>10}  FIRST REACTION\n")
    for line in lines:
        name = clean(line.session, keep_newlines=False, limit=width)
        reacted = [(line.first[k], k) for k in REACTIONS if line.first.get(k) is not None]
        first = "{1} at step {0}".format(*min(reacted)) if reacted else "-"
        cost = "-" if line.cost is None else f"${line.cost:.4f}"
        loop_cost = "-" if line.loop_cost is None else (
            ("~" if line.estimated else "") + f"${line.loop_cost:.4f}")
        out.write(f"    {name:<{width}} {line.steps:>5} {line.loop_steps:>5} {cost:>10} "
                  f"{loop_cost:>10}  {first}\n")


def _pct(part: float | None, whole: float | None) -> str:
    if not whole or part is None:
        return ""
    return f" ({100 * part / whole:.0f}%)"
