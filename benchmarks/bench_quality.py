"""Detection quality on real runs: the labelled corpus, scored as its rubric says.

    python benchmarks/run.py quality

The corpus (`corpus-labelled/` beside the repository's `shared/` directory, or
`$SUPERVISOR_LABELLED_CORPUS`) holds real runs of mini-swe-agent, OpenHands and SWE-agent in
their native formats, and `labels.jsonl` with every loop episode (onset, end, kind) and every
loop-free run. Each run is imported (`supervisor.importers`, step numbers as in its
`STEPS.md`) and replayed through the engine with the `default` policy; at levels 1 (nudge),
2 (block) and 3 (escalate) an episode is caught when a finding of that level or higher falls in
[onset, end + 2], and a loop-free run with any such finding is a false-alarm run
(`supervisor.analysis.rubric`). Autonomous runs and interactive sessions (a label's
`"interactive": true`: a person in the loop) are scored apart. Targets (issue 35): on
autonomous runs recall >= 0.90 with <= 4 % false-alarm runs at level 1, recall >= 0.80 with
<= 2 % at level 2, <= 1 % false-alarm runs at level 3; on loop-free interactive sessions
< 5 % with a finding at level >= 1, < 2 % at >= 2, < 1 % at 3. A labelled run whose run file
is not on this machine is named as missing and left out of every score (never a miss).
Several corpus folders are scored together (`$SUPERVISOR_LABELLED_CORPUS` may list several;
the repository's own `benchmarks/corpus-labelled/` joins when present), and each apart.

Printed beside the figures: recall per framework and per episode kind, the documented rules
of other agents on the same runs, every missed episode and every false alarm with what the
engine said, per detector its fires, true fires and the false-alarm runs it caused, a
leave-one-source-out check (for each source, model / framework, the free parameter below
chosen on the other sources and scored on it; then the spread), and a 2-fold check: the one
free parameter (how many occurrences make a loop, and the window they must fall in) chosen on
one half of the runs, split by source, and scored on the other, against the principled values
(3 occurrences, a window of 20 steps).

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
from supervisor.analysis.rubric import (
    SLACK,
    Fire,
    LevelScore,
    load_labels,
    miss_reason,
    run_name,
    score,
)
from supervisor.cli.vocabulary import load_all
from supervisor.engine import Policy

TARGETS = {1: (0.90, 0.04), 2: (0.80, 0.02)}
"""Level -> (minimum recall, maximum false-alarm rate) on autonomous runs (issue 35)."""
ESCALATION_FALSE_ALARMS = 0.01
"""Maximum false-alarm rate at level 3 (issue 23)."""
INTERACTIVE_FALSE_ALARMS = {1: 0.05, 2: 0.02, 3: 0.01}
"""Level -> maximum share of loop-free interactive sessions with a finding at that level or
higher (issue 35): a person in the loop prompts again, waits, fans out sub-agents."""
FOLDS = {"mini-swe-agent": ("mini-swe-agent",), "openhands + swe-agent": ("openhands",
                                                                          "swe-agent")}
PRINCIPLED = (3, 20)
"""(occurrences that make a loop, window in steps): the rubric's 3, about 20 steps."""
CANDIDATES = [(k, w) for k in (2, 3, 4) for w in (10, 20, 40)]


def corpus_dirs() -> list[Path]:
    """Every labelled corpus on this machine: `$SUPERVISOR_LABELLED_CORPUS` (folders separated
    by the path separator) or else the shared one beside the repository, plus the repository's
    own `benchmarks/corpus-labelled/` when it is there. Each has `labels.jsonl` and one
    subfolder per source of native run files. A folder whose `labels.jsonl` is byte for byte
    one already found is that corpus again (the repository's labels-only copy of a corpus
    restored elsewhere, `benchmarks/restore_corpus.py`): it is left out, not reported as a
    corpus whose run files are missing."""
    env = os.environ.get("SUPERVISOR_LABELLED_CORPUS")
    candidates: list[Path] = []
    if env:
        candidates += [Path(p) for p in env.split(os.pathsep) if p]
    else:
        candidates += [REPO.parent / "shared" / "corpus-labelled",
                       Path("/work/shared/corpus-labelled")]
    candidates.append(REPO / "benchmarks" / "corpus-labelled")
    found: list[Path] = []
    labels_seen: set[bytes] = set()
    for candidate in candidates:
        labels = candidate / "labels.jsonl"
        if not labels.is_file() or candidate.resolve() in [f.resolve() for f in found]:
            continue
        data = labels.read_bytes()
        if data not in labels_seen:
            labels_seen.add(data)
            found.append(candidate)
    return found


@dataclass(slots=True)
class Corpus:
    labels: list[dict[str, Any]]
    """The labels of the runs that are here (a label whose run file is missing is in
    `missing`, not here: it is not scored, neither as a miss nor as a quiet run)."""
    runs: dict[str, list[dict[str, Any]]]
    """Run name -> protocol events (imported once, replayed under every policy)."""
    missing: dict[str, list[str]]
    """Corpus folder -> the labelled runs whose run files are not on this machine."""


def load_corpus(base: Path, prefix: str = "") -> Corpus:
    """The labels and runs of one corpus folder (every subfolder is a source of native run
    files); with `prefix`, run names get it in front (several corpora in one score)."""
    from supervisor.analysis import foreign

    labels = load_labels(base / "labels.jsonl")
    wanted = {label["run"] for label in labels}
    runs: dict[str, list[dict[str, Any]]] = {}
    for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for path in sorted(folder.iterdir()):
            for run in foreign.runs_of(path) or []:
                name = run_name(run.source)
                if name in wanted:
                    runs[prefix + name] = list(run.events)
    if prefix:
        labels = [{**lab, "run": prefix + lab["run"]} for lab in labels]
    here = [lab for lab in labels if lab["run"] in runs]
    gone = [lab["run"] for lab in labels if lab["run"] not in runs]
    return Corpus(here, runs, {str(base): gone} if gone else {})


def corpus_prefix(base: Path, bases: list[Path]) -> str:
    """What the run names of folder `base` get in front when several are scored together: its
    parent's name (`shared:` for `shared/corpus-labelled`, `benchmarks:` for the repository's
    own), or its own name when another folder has the same parent (`corpus-interactive-2:`
    beside `corpus-interactive:`), so each folder's runs can be told apart and scored alone."""
    if len(bases) == 1:
        return ""
    if sum(b.parent.name == base.parent.name for b in bases) == 1:
        return f"{base.parent.name}:"
    return f"{base.name}:"


def load_corpora(bases: list[Path]) -> Corpus:
    """Several corpus folders as one (run names prefixed by `corpus_prefix` when there is
    more than one, so they cannot collide)."""
    if len(bases) == 1:
        return load_corpus(bases[0])
    parts = [load_corpus(b, corpus_prefix(b, bases)) for b in bases]
    return Corpus([lab for c in parts for lab in c.labels],
                  {k: v for c in parts for k, v in c.runs.items()},
                  {k: v for c in parts for k, v in c.missing.items()})


def is_interactive(label: dict[str, Any]) -> bool:
    """A session with a person in the loop (its label says `"interactive": true`)."""
    return label.get("interactive") is True


def source_of(label: dict[str, Any]) -> str:
    """The source (model / framework) of a labelled run: its `source` field, else its folder
    and the first part of its name (`mini-swe-agent/gem3pro-...` -> `mini-swe-agent/gem3pro`:
    the labelled corpus names runs by model first)."""
    if isinstance(label.get("source"), str) and label["source"]:
        return str(label["source"])
    folder, _, name = label["run"].rpartition("/")
    return f"{folder}/{name.split('-', 1)[0]}"


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
    return [lab for lab in corpus.labels
            if lab["run"].split(":", 1)[-1].split("/", 1)[0] in fold]


def _key(scores: dict[int, LevelScore]) -> tuple[float, float, float]:
    """Better: fewer false alarms beyond the targets (none is best), then recall at level 1,
    then at level 2."""
    excess = sum(max(0.0, scores[level].false_alarm_rate - TARGETS[level][1])
                 for level in TARGETS)
    return (-round(excess, 6), scores[1].recall, scores[2].recall)


def two_fold(corpus: Corpus, by_candidate: dict[tuple[int, int], dict[str, list[Fire]]]
             ) -> list[str]:
    """Choose (occurrences, window) on one fold, score it on the other (both ways)."""
    lines = [f"2-fold check: the free parameter (occurrences, window) chosen on one half, "
             f"scored on the other; principled {PRINCIPLED}"]
    for train_name, train in FOLDS.items():
        test_name, test = next((n, f) for n, f in FOLDS.items() if n != train_name)
        train_labels, test_labels = _fold_labels(corpus, train), _fold_labels(corpus, test)
        if not train_labels or not test_labels:
            lines.append(f"  {train_name} -> {test_name}: one half has no runs; skipped")
            continue

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


def leave_one_source_out(corpus: Corpus, by_candidate: dict[tuple[int, int],
                                                          dict[str, list[Fire]]]) -> list[str]:
    """For each source: choose (occurrences, window) on the other sources (the development
    data), score the choice on this one; then the spread of the held-out scores."""
    sources = sorted({source_of(lab) for lab in corpus.labels})
    lines = [f"leave-one-source-out: (occurrences, window) chosen on the other sources, "
             f"scored on the one left out ({len(sources)} sources)"]
    held: dict[int, list[float]] = {1: [], 2: []}
    alarms: dict[int, list[float]] = {1: [], 2: []}
    for source in sources:
        test = [lab for lab in corpus.labels if source_of(lab) == source]
        train = [lab for lab in corpus.labels if source_of(lab) != source]

        def levels(labels: list[dict[str, Any]], c: tuple[int, int]) -> dict[int, LevelScore]:
            return {lv: score(labels, by_candidate[c], lv) for lv in (1, 2)}

        chosen = max(CANDIDATES, key=lambda c: (_key(levels(train, c)), c == PRINCIPLED))
        te = levels(test, chosen)
        episodes = len(te[1].episodes)
        for lv in (1, 2):
            if episodes:
                held[lv].append(te[lv].recall)
            if te[lv].clean_runs:
                alarms[lv].append(te[lv].false_alarm_rate)
        lines.append(
            f"  {source}: {len(test)} runs, {episodes} episodes, {te[1].clean_runs} loop-free; "
            f"chosen {chosen}; L1 recall {_fmt(te[1].recall, episodes)} false-alarm runs "
            f"{_fmt(te[1].false_alarm_rate, te[1].clean_runs)}; L2 recall "
            f"{_fmt(te[2].recall, episodes)} false-alarm runs "
            f"{_fmt(te[2].false_alarm_rate, te[2].clean_runs)}")
    for lv in (1, 2):
        if held[lv] and alarms[lv]:
            lines.append(f"  spread L{lv}: recall {min(held[lv]):.2f}-{max(held[lv]):.2f}, "
                         f"false-alarm runs {min(alarms[lv]):.2f}-{max(alarms[lv]):.2f}")
    return lines


def _fmt(value: float, n: int) -> str:
    return f"{value:.2f}" if n else "-"


def per_detector(corpus: Corpus, fires: dict[str, list[Fire]]) -> list[str]:
    """Per detector (level >= 1): how often it fired, how many of its fires fell in a labelled
    episode ([onset, end + 2]), and the loop-free runs it alarmed."""
    labels = {lab["run"]: lab for lab in corpus.labels}
    stats: dict[str, list[int]] = {}
    alarmed: dict[str, set[str]] = {}
    for run, found in fires.items():
        label = labels.get(run)
        if label is None:
            continue
        windows = [(e["onset"], e["end"] + SLACK) for e in label.get("episodes") or []]
        for f in found:
            if f.level < 1:
                continue
            entry = stats.setdefault(f.detector, [0, 0])
            entry[0] += 1
            entry[1] += any(a <= f.step <= b for a, b in windows)
            if not label.get("loop"):
                alarmed.setdefault(f.detector, set()).add(run)
    lines = ["per detector (level >= 1): fires, true fires (inside a labelled episode), "
             "false-alarm runs it caused"]
    for name, (n, true) in sorted(stats.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"  {name}: {n} fires, {true} true, {len(alarmed.get(name, ()))} "
                     "false-alarm runs")
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
    bases = corpus_dirs()
    if not bases:
        print("quality: the labelled corpus (corpus-labelled/labels.jsonl) is not on this "
              "machine; set SUPERVISOR_LABELLED_CORPUS to its directory. Nothing measured.")
        print("\n".join(guidance_lines), file=sys.stdout, flush=True)
        return guidance
    load_all()  # every agent's tool names, as `supervisor analyze` has them
    corpus = load_corpora(bases)
    fires = replay(corpus, Policy.profile("default"))
    lines = [f"corpora: {', '.join(str(b) for b in bases)}"]
    for base, gone in corpus.missing.items():
        lines.append(f"  {base}: the run files of {len(gone)} labelled runs are not on this "
                     f"machine (e.g. {gone[0]}): NOT SCORED (see that folder's README for "
                     "where they are)")
    if len(bases) > 1:
        for base in bases:
            prefix = corpus_prefix(base, bases)
            part = [lab for lab in corpus.labels if lab["run"].startswith(prefix)]
            if not part:
                continue
            for level in (1, 2, 3):
                s = score(part, fires, level)
                lines.append(f"  {base}: level >= {level}: recall {s.recall:.3f} of "
                             f"{len(s.episodes)} episodes; false-alarm runs "
                             f"{s.false_alarm_rate:.3f} of {s.clean_runs}")
    autonomous = [lab for lab in corpus.labels if not is_interactive(lab)]
    interactive = [lab for lab in corpus.labels if is_interactive(lab)]
    scores = {level: score(autonomous, fires, level) for level in (1, 2, 3)}
    people = {level: score(interactive, fires, level) for level in (1, 2, 3)}
    lines.append("autonomous runs (no person in the loop):")
    lines += report(Corpus(autonomous, corpus.runs, {}), scores)
    lines += interactive_report(people)
    lines += per_detector(corpus, fires)
    lines.append("beside the documented rules of other agents (as nudges, level 1):")
    figures: list[Figure] = []
    for name, anchor in ANCHORS.items():
        s = score(corpus.labels, anchor_fires(corpus, anchor), 1)
        lines.append(f"  {name}: recall {s.recall:.3f}, false-alarm runs "
                     f"{s.false_alarm_rate:.3f}")
        figures.append(Figure(f"{name}: recall", round(s.recall, 3),
                              note=f"false-alarm runs {s.false_alarm_rate:.3f}"))
    by_candidate = {c: replay(corpus, policy_for(*c)) for c in CANDIDATES}
    lines += leave_one_source_out(corpus, by_candidate)
    lines += two_fold(corpus, by_candidate)
    lines += guidance_lines
    print("\n".join(lines), file=sys.stdout, flush=True)
    ours: list[Figure] = []
    for level, s in scores.items():
        recall_min, fa_max = TARGETS.get(level, (None, ESCALATION_FALSE_ALARMS))
        ours.append(Figure(f"autonomous level {level}: missed episodes (1 - recall)",
                           round(1 - s.recall, 3),
                           max_value=round(1 - recall_min, 3) if recall_min else None,
                           note=f"recall {s.recall:.3f} of {len(s.episodes)} episodes"))
        ours.append(Figure(f"autonomous level {level}: false-alarm runs",
                           round(s.false_alarm_rate, 3),
                           max_value=fa_max, note=f"of {s.clean_runs} loop-free runs"))
    for level, s in people.items():
        if s.clean_runs:
            ours.append(Figure(f"interactive level {level}: false-alarm sessions",
                               round(s.false_alarm_rate, 3),
                               max_value=INTERACTIVE_FALSE_ALARMS[level],
                               note=f"of {s.clean_runs} loop-free sessions"))
    return ours + figures + guidance


def interactive_report(scores: dict[int, LevelScore]) -> list[str]:
    """Sessions with a person in the loop: the share of loop-free ones with a finding at each
    level (their false alarms named), and recall where they hold labelled loops."""
    clean = scores[1].clean_runs
    if not clean and not scores[1].episodes:
        return ["interactive sessions: none labelled here"]
    lines = [f"interactive sessions (a person in the loop): {clean} loop-free, "
             f"{len(scores[1].episodes)} loop episodes"]
    for level, s in scores.items():
        caught = sum(e.caught for e in s.episodes)
        lines.append(f"  level >= {level}: false-alarm sessions {len(s.false_alarms)}/{clean}"
                     f" = {s.false_alarm_rate:.3f} (target < "
                     f"{INTERACTIVE_FALSE_ALARMS[level]:.2f}); recall {caught}/"
                     f"{len(s.episodes)}")
        for run, fires in s.false_alarms.items():
            shown = "; ".join(f"{f.detector}@{f.step}: {f.message[:90]}" for f in fires[:2])
            lines.append(f"    false alarm: {run}: {shown}")
    return lines
