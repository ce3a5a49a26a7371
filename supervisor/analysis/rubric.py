"""Score findings against labelled loop episodes, the way the labelled corpus's rubric does.

A labels file (`labels.jsonl`, one run per line: `run`, `steps`, `loop`, `episodes[]` with
`onset`/`evident`/`end`/`kind`/`why`, `legit[]`) labels runs of other frameworks; step numbers
are 0-based tool calls, as the importers number them. At a level L:

- an **episode is caught** when a finding of level >= L falls in [onset, end + 2];
- a **false-alarm run** is a loop-free run with any finding of level >= L.

`score(labels, fires, level)` does that for one level; `Fire` is one finding (step, level,
detector, message). Breakdowns by framework (the run name's first part) and by episode kind,
and every miss and false alarm with what the engine did say, make it a report a person can
check.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SLACK = 2
"""Steps after an episode's end that still count (the rubric's `end + 2`)."""
RUN_SUFFIXES = (".traj.json", ".traj", ".output.jsonl", ".jsonl", ".json")
"""Extensions dropped from a run file's name (the longest first): SWE-agent and mini-swe-agent
trajectories, OpenHands outputs, Claude Code sessions and Codex rollouts (`.jsonl`)."""


@dataclass(frozen=True, slots=True)
class Fire:
    """One finding of a replay, as the rubric sees it."""

    step: int
    level: int
    detector: str
    message: str = ""


@dataclass(slots=True)
class Episode:
    run: str
    onset: int
    evident: int
    end: int
    kind: str
    why: str
    caught: bool = False
    by: str | None = None
    """The detector of the first fire in the window, when caught."""
    near: list[Fire] = field(default_factory=list)
    """When missed: the fires closest to the window (what the engine did say)."""


@dataclass(slots=True)
class LevelScore:
    """Recall and false alarms at one level."""

    level: int
    episodes: list[Episode] = field(default_factory=list)
    clean_runs: int = 0
    false_alarms: dict[str, list[Fire]] = field(default_factory=dict)
    """Loop-free runs with fires at this level, and those fires."""

    @property
    def recall(self) -> float:
        return sum(e.caught for e in self.episodes) / len(self.episodes) if self.episodes \
            else 1.0

    @property
    def false_alarm_rate(self) -> float:
        return len(self.false_alarms) / self.clean_runs if self.clean_runs else 0.0

    def by(self, key: str) -> dict[str, tuple[int, int]]:
        """(caught, episodes) per framework (`key="framework"`) or per kind (`"kind"`)."""
        out: dict[str, tuple[int, int]] = {}
        for e in self.episodes:
            name = framework(e.run) if key == "framework" else e.kind
            caught, total = out.get(name, (0, 0))
            out[name] = (caught + e.caught, total + 1)
        return dict(sorted(out.items()))


def framework(run: str) -> str:
    return run.split("/", 1)[0]


def run_name(source: str) -> str:
    """The labels' name of a run from its source (`<folder>/<file stem>[@<instance>]`)."""
    path, _, inner = source.partition("#")
    p = Path(path)
    name = p.name
    for ext in RUN_SUFFIXES:
        if name.endswith(ext):
            name = name[: -len(ext)]
            break
    return f"{p.parent.name}/{name}" + (f"@{inner}" if inner else "")


def load_labels(path: Path) -> list[dict[str, Any]]:
    """The labels of `labels.jsonl`, one dict per run."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def score(labels: Iterable[dict[str, Any]], fires: dict[str, list[Fire]], level: int
          ) -> LevelScore:
    """Score the fires of every labelled run at `level` (see the module docstring)."""
    result = LevelScore(level)
    for label in labels:
        run = label["run"]
        at_level = sorted((f for f in fires.get(run, []) if f.level >= level),
                          key=lambda f: f.step)
        if not label.get("loop"):
            result.clean_runs += 1
            if at_level:
                result.false_alarms[run] = at_level
            continue
        for e in label.get("episodes") or []:
            episode = Episode(run, e["onset"], e.get("evident", e["onset"]), e["end"],
                              e.get("kind", ""), e.get("why", ""))
            inside = [f for f in at_level if e["onset"] <= f.step <= e["end"] + SLACK]
            if inside:
                episode.caught, episode.by = True, inside[0].detector
            else:
                episode.near = sorted(
                    at_level, key=lambda f: min(abs(f.step - e["onset"]),
                                                abs(f.step - e["end"])))[:3]
            result.episodes.append(episode)
    return result


def miss_reason(episode: Episode) -> str:
    """One line on a missed episode: what the engine said instead, if anything."""
    if not episode.near:
        return "no finding at this level anywhere in the run"
    said = ", ".join(f"{f.detector}@{f.step}" for f in episode.near)
    return f"nothing in [{episode.onset}, {episode.end + SLACK}]; nearest: {said}"
