"""Score the engine on a labelled set of runs: recall, false-alarm rate, detection delay.

A labels file (JSON) maps a run's path, relative to the labels file, to
`{"loop": bool, "kind": str, "onset": int | null}` where `onset` is the 0-based tool-call step
at which the loop becomes evident. A loop run counts as detected when the engine reacts (nudge
or stronger) at or after `onset - 1`; its delay is the step of that reaction minus `onset`
(one step early counts as 0: the engine saw the repeat coming). A reaction on a loop-free run
is a false alarm. Skips of unchanged re-reads are not alarms (the agent gets its content).
"""

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.analysis.replay import FIRST_ACTIONS, RunReport, analyze_events
from supervisor.analysis.sources import load_runs
from supervisor.engine import Policy


@dataclass(slots=True)
class RunScore:
    name: str
    loop: bool
    kind: str
    onset: int | None
    alarm: int | None
    """The first step with a nudge or stronger reaction (None: none)."""
    detector: str | None
    detected: bool
    delay: int | None
    false_alarm: bool


@dataclass(slots=True)
class Score:
    runs: list[RunScore] = field(default_factory=list)

    @property
    def loops(self) -> list[RunScore]:
        return [r for r in self.runs if r.loop]

    @property
    def clean(self) -> list[RunScore]:
        return [r for r in self.runs if not r.loop]

    @property
    def recall(self) -> float:
        loops = self.loops
        return sum(r.detected for r in loops) / len(loops) if loops else 1.0

    @property
    def false_alarm_rate(self) -> float:
        clean = self.clean
        return sum(r.false_alarm for r in clean) / len(clean) if clean else 0.0

    @property
    def median_delay(self) -> float | None:
        delays = [r.delay for r in self.loops if r.delay is not None]
        return float(statistics.median(delays)) if delays else None


def first_alarm(report: RunReport, after: int = -1) -> tuple[int | None, str | None]:
    """The earliest reaction (nudge or stronger) at a step >= `after`, and its detector."""
    for f in report.findings:
        key = "escalate" if f.action in ("pause", "escalate") else f.action
        if key in FIRST_ACTIONS and f.step >= after:
            return f.step, f.detector
    return None, None


def score_run(name: str, label: dict[str, Any], report: RunReport) -> RunScore:
    loop = bool(label.get("loop"))
    onset = label.get("onset")
    if loop and isinstance(onset, int):
        alarm, det = first_alarm(report, onset - 1)
        early, _ = first_alarm(report)
        detected = alarm is not None
        delay = max(0, alarm - onset) if alarm is not None else None
        return RunScore(name, True, str(label.get("kind", "")), onset, alarm, det, detected,
                        delay, early is not None and early < onset - 1)
    alarm, det = first_alarm(report)
    return RunScore(name, False, str(label.get("kind", "")), None, alarm, det, False, None,
                    alarm is not None)


def evaluate(labels_file: Path, policy: Policy) -> Score:
    """Replay every labelled run under the labels file's directory and score it."""
    labels: dict[str, dict[str, Any]] = json.loads(labels_file.read_text(encoding="utf-8"))
    base = labels_file.parent
    score = Score()
    for rel, label in labels.items():
        path, _, which = rel.partition("#")
        for run in load_runs(base / path):
            if which and run.session != which:
                continue
            report = analyze_events(run.events, policy, session=run.session, source=run.source)
            score.runs.append(score_run(rel, label, report))
    return score
