"""Detection quality on real runs: the labelled corpus, scored as its rubric says.

    python benchmarks/run.py quality

The corpus (`corpus-labelled/` beside the repository's `shared/` directory, or
`$SUPERVISOR_LABELLED_CORPUS`) holds real runs of mini-swe-agent, OpenHands and SWE-agent in
their native formats, and `labels.jsonl` with every loop episode (onset, end, kind) and every
loop-free run. Each run is imported (`supervisor.importers`, step numbers as in its
`STEPS.md`) and replayed through the engine with the `default` policy; at levels 1 (nudge),
2 (block) and 3 (escalate) an episode is caught when a finding of that level or higher falls in
[onset, end + 2], and a loop-free run with any such finding is a false-alarm run
(`supervisor.analysis.rubric`). Targets (issue 12): recall >= 0.90 with <= 5 % false-alarm
runs at level 1, recall >= 0.75 with <= 2 % at level 2.

Printed beside the figures: recall per framework and per episode kind, the documented rules
of other agents on the same runs, every missed episode and every false alarm with what the
engine said, and a 2-fold check: the one free parameter (how many occurrences make a loop, and
the window they must fall in) chosen on one half of the runs, split by source, and scored on
the other, against the principled values (3 occurrences, a window of 20 steps).

Then the guidance section (`quality_closest.py`, issue 19): on the labelled and the development
corpus, the share of failed "not found" edits whose closest-match region holds the text the
agent needed (judged by its next successful edit of the file); target >= 80 %.
"""

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import quality_closest
from anchors import ANCHORS
from common import REPO, Figure

from supervisor.analysis.replay import analyze_events
from supervisor.analysis.rubric import Fire, LevelScore, load_labels, miss_reason, run_name, score
from supervisor.engine import Policy

TARGETS = {1: (0.90, 0.05), 2: (0.75, 0.02)}
"""Level -> (minimum recall, maximum false-alarm rate)."""
FOLDS = {"mini-swe-agent": ("mini-swe-agent",), "openhands + swe-agent": ("openhands",
                                                                          "swe-agent")}
PRINCIPLED = (3, 20)
"""(occurrences that make a loop, window in steps): the rubric's 3, about 20 steps."""
CANDIDATES = [(k, w) for k in (2, 3, 4) for w in (10, 20, 40)]


def corpus_dir() -> Path | None:
    """Where the labelled corpus is, or None when it is not on this machine."""
    for candidate in (os.environ.get("SUPERVISOR_LABELLED_CORPUS"),
                      REPO.parent / "shared" / "corpus-labelled",
                      Path("/work/shared/corpus-labelled")):
        if candidate and (Path(candidate) / "labels.jsonl").is_file():
            return Path(candidate)
    return None


@dataclass(slots=True)
class Corpus:
    labels: list[dict[str, Any]]
    runs: dict[str, list[dict[str, Any]]]
    """Run name -> protocol events (imported once, replayed under every policy)."""


def load_corpus(base: Path) -> Corpus:
    from supervisor.importers import sources as foreign

    labels = load_labels(base / "labels.jsonl")
    wanted = {label["run"] for label in labels}
    runs: dict[str, list[dict[str, Any]]] = {}
    for folder in ("mini-swe-agent", "openhands", "swe-agent"):
        for path in sorted((base / folder).iterdir()) if (base / folder).is_dir() else []:
            for run in foreign.runs_of(path) or []:
                name = run_name(run.source)
                if name in wanted:
                    runs[name] = list(run.events)
    return Corpus(labels, runs)


def replay(corpus: Corpus, policy: Policy, names: Iterable[str] | None = None
           ) -> dict[str, list[Fire]]:
    """The engine's findings on each run, as the rubric sees them."""
    fires: dict[str, list[Fire]] = {}
    for name in names if names is not None else corpus.runs:
        report = analyze_events(corpus.runs[name], policy, session=name, source=name)
        fires[name] = [Fire(f.step, f.level, f.detector, f.message) for f in report.findings
                       if f.action != "skip"]
    return fires


def anchor_fires(corpus: Corpus, anchor: Any) -> dict[str, list[Fire]]:
    """Another agent's rule as fires: it nudges (level 1) where it fires; Roo Code and the
    seeds refuse, but to compare one number each is scored at level 1."""
    return {name: [Fire(step, 1, "anchor") for step in anchor(events)]
            for name, events in corpus.runs.items()}


def policy_for(occurrences: int, window: int) -> Policy:
    """The default policy with the occurrence count and window of the repetition detectors
    set to the given values (the 2-fold check's free parameter)."""
    k = occurrences
    repeat = {"nudge": k, "block": k + 1, "escalate": 2 * k}
    return Policy.from_dict({"detectors": {
        "exact_repeat": repeat,
        "recurring_error": {**repeat, "window": window},
        "ineffective_edits": repeat,
        "revert": {"nudge": k, "escalate": 2 * k, "window": window},
    }})


def _fold_labels(corpus: Corpus, fold: tuple[str, ...]) -> list[dict[str, Any]]:
    return [lab for lab in corpus.labels if lab["run"].split("/", 1)[0] in fold]


def _key(scores: dict[int, LevelScore]) -> tuple[float, float, float]:
    """Better: fewer false alarms beyond the targets (none is best), then recall at level 1,
    then at level 2."""
    excess = sum(max(0.0, scores[level].false_alarm_rate - TARGETS[level][1])
                 for level in TARGETS)
    return (-round(excess, 6), scores[1].recall, scores[2].recall)


def two_fold(corpus: Corpus) -> list[str]:
    """Choose (occurrences, window) on one fold, score it on the other (both ways)."""
    by_candidate = {c: replay(corpus, policy_for(*c)) for c in CANDIDATES}
    lines = [f"2-fold check: the free parameter (occurrences, window) chosen on one half, "
             f"scored on the other; principled {PRINCIPLED}"]
    for train_name, train in FOLDS.items():
        test_name, test = next((n, f) for n, f in FOLDS.items() if n != train_name)
        train_labels, test_labels = _fold_labels(corpus, train), _fold_labels(corpus, test)

        def levels(labels: list[dict[str, Any]], c: tuple[int, int]) -> dict[int, LevelScore]:
            return {lv: score(labels, by_candidate[c], lv) for lv in (1, 2)}

        chosen = max(CANDIDATES, key=lambda c: (_key(levels(train_labels, c)), c == PRINCIPLED))
        for label, c in (("chosen", chosen), ("principled", PRINCIPLED)):
            tr, te = levels(train_labels, c), levels(test_labels, c)
            lines.append(
                f"  train {train_name}, test {test_name}: {label} {c}: "
                f"train L1 {tr[1].recall:.2f}/{tr[1].false_alarm_rate:.2f} "
                f"L2 {tr[2].recall:.2f}/{tr[2].false_alarm_rate:.2f}; "
                f"test L1 {te[1].recall:.2f}/{te[1].false_alarm_rate:.2f} "
                f"L2 {te[2].recall:.2f}/{te[2].false_alarm_rate:.2f} (recall/false-alarm runs)")
    return lines


def report(corpus: Corpus, scores: dict[int, LevelScore]) -> list[str]:
    episodes = len(scores[1].episodes)
    lines = [f"labelled corpus: {len(corpus.labels)} runs, {episodes} loop episodes, "
             f"{scores[1].clean_runs} loop-free runs"]
    for level, s in scores.items():
        caught = sum(e.caught for e in s.episodes)
        lines.append(f"  level >= {level}: recall {caught}/{episodes} = {s.recall:.3f}; "
                     f"false-alarm runs {len(s.false_alarms)}/{s.clean_runs} = "
                     f"{s.false_alarm_rate:.3f}")
    for key in ("framework", "kind"):
        parts = []
        for name, (c1, total) in scores[1].by(key).items():
            c2 = scores[2].by(key)[name][0]
            parts.append(f"{name} {c1}/{total} (block {c2})")
        lines.append(f"  by {key} (level 1, level 2): " + "; ".join(parts))
    for level in (1, 2):
        s = scores[level]
        for e in s.episodes:
            if not e.caught:
                lines.append(f"  missed at level {level}: {e.run} {e.onset}-{e.end} {e.kind}: "
                             f"{miss_reason(e)} | {e.why[:100]}")
        for run, fires in s.false_alarms.items():
            shown = "; ".join(f"{f.detector}@{f.step}: {f.message[:90]}" for f in fires[:2])
            lines.append(f"  false alarm at level {level}: {run}: {shown}")
    return lines


def run() -> list[Figure]:
    guidance_lines, guidance = quality_closest.section()
    base = corpus_dir()
    if base is None:
        print("quality: the labelled corpus (corpus-labelled/labels.jsonl) is not on this "
              "machine; set SUPERVISOR_LABELLED_CORPUS to its directory. Nothing measured.")
        print("\n".join(guidance_lines), file=sys.stdout, flush=True)
        return guidance
    corpus = load_corpus(base)
    fires = replay(corpus, Policy.profile("default"))
    scores = {level: score(corpus.labels, fires, level) for level in (1, 2, 3)}
    lines = report(corpus, scores)
    lines.append("beside the documented rules of other agents (as nudges, level 1):")
    figures: list[Figure] = []
    for name, anchor in ANCHORS.items():
        s = score(corpus.labels, anchor_fires(corpus, anchor), 1)
        lines.append(f"  {name}: recall {s.recall:.3f}, false-alarm runs "
                     f"{s.false_alarm_rate:.3f}")
        figures.append(Figure(f"{name}: recall", round(s.recall, 3),
                              note=f"false-alarm runs {s.false_alarm_rate:.3f}"))
    lines += two_fold(corpus)
    lines += guidance_lines
    print("\n".join(lines), file=sys.stdout, flush=True)
    ours: list[Figure] = []
    for level, s in scores.items():
        recall_min, fa_max = TARGETS.get(level, (None, None))
        ours.append(Figure(f"level {level}: missed episodes (1 - recall)",
                           round(1 - s.recall, 3),
                           max_value=round(1 - recall_min, 3) if recall_min else None,
                           note=f"recall {s.recall:.3f} of {len(s.episodes)} episodes"))
        ours.append(Figure(f"level {level}: false-alarm runs", round(s.false_alarm_rate, 3),
                           max_value=fa_max, note=f"of {s.clean_runs} loop-free runs"))
    return ours + figures + guidance
