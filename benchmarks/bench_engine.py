"""Engine: detection quality on the labelled dev set, and the cost of one step.

Quality (tests/data/devset): recall, false-alarm rate and median delay of the `default`
profile on the synthetic loops and traps, and on the labelled real runs of the corpus when
/work/shared/corpus and the importers are present. The same runs are scored with the loop
detectors of well-known agents (re-implemented from reference/loop-detection-anchors.md) for
comparison.

Cost: one step is `check` + `observe(tool_call)` + `observe(tool_result)`. A long loop-free
session is replayed with a window of 1,000 steps; the mean cost of a step around step 10,000
is compared with one around step 100 (target <= 1.2x), and with `json.dumps` of the same two
events (reported, no target), and what a hook process spends per call (load the state, check,
save it). Times are CPU time of this process (best of several interleaved
runs), because the machine may be shared.
"""

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import REPO, Figure

from supervisor.analysis.evaluate import Score, evaluate, score_run
from supervisor.analysis.replay import ReportFinding, RunReport
from supervisor.analysis.sources import load_runs
from supervisor.engine import Engine, Policy
from supervisor.engine.fingerprint import canonical_args, normalise_output

DEVSET = REPO / "tests" / "data" / "devset"
MAX_STEP_RATIO = 1.2


# --- quality ----------------------------------------------------------------------------------

def _quality(name: str, score: Score) -> list[Figure]:
    loops, clean = len(score.loops), len(score.clean)
    missed = [r.name.rsplit("/", 1)[-1] for r in score.loops if not r.detected]
    alarms = [r.name.rsplit("/", 1)[-1] for r in score.clean if r.false_alarm]
    delay = score.median_delay
    return [
        Figure(f"{name}: recall", round(score.recall, 3), note=f"{loops} loop runs"),
        Figure(f"{name}: missed loops (1 - recall)", round(1 - score.recall, 3), max_value=0.05,
               note=", ".join(missed[:3])),
        Figure(f"{name}: false-alarm rate", round(score.false_alarm_rate, 3), max_value=0.05,
               note=f"{clean} loop-free runs " + ", ".join(alarms[:3])),
        Figure(f"{name}: median delay", delay if delay is not None else -1.0, "steps",
               max_value=2.0),
    ]


Anchor = Callable[[list[dict[str, Any]]], int | None]


def _calls(events: list[dict[str, Any]]) -> list[tuple[str, str, bool | None]]:
    """(call key, normalised output, ok) per tool call, in order."""
    calls: list[list[Any]] = []
    index: dict[str, int] = {}
    for e in events:
        if e.get("type") == "tool_call":
            index[str(e.get("call_id"))] = len(calls)
            calls.append([f"{e.get('tool')}:{canonical_args(e.get('args'))}", None, None])
        elif e.get("type") == "tool_result" and str(e.get("call_id")) in index:
            c = calls[index[str(e.get("call_id"))]]
            c[1], c[2] = normalise_output(str(e.get("output") or "")), bool(e.get("ok"))
    return [(a, b, c) for a, b, c in calls]


def identical_consecutive(n: int) -> Anchor:
    """Cline / Roo Code / OpenCode / Gemini CLI: n identical consecutive calls, outcome ignored."""
    def detect(events: list[dict[str, Any]]) -> int | None:
        run, last = 0, None
        for i, (key, _, _) in enumerate(_calls(events)):
            run = run + 1 if key == last else 1
            last = key
            if run >= n:
                return i
        return None
    return detect


def openhands_classic(events: list[dict[str, Any]]) -> int | None:
    """OpenHands: 4 identical action+observation pairs; 3 identical actions each ending in an
    error; A-B alternation over 6 pairs (command outcomes compared by exit status only)."""
    calls = _calls(events)
    for i in range(len(calls)):
        last4 = calls[max(0, i - 3): i + 1]
        if len(last4) == 4 and len({(k, o) for k, o, _ in last4}) == 1:
            return i
        last3 = calls[max(0, i - 2): i + 1]
        if len(last3) == 3 and len({k for k, _, _ in last3}) == 1 and not any(
                ok for _, _, ok in last3):
            return i
        last6 = calls[max(0, i - 5): i + 1]
        if len(last6) == 6 and all(last6[j][:2] == last6[j % 2][:2] for j in range(6)) and (
                last6[0][0] != last6[1][0]):
            return i
    return None


ANCHORS: dict[str, Anchor] = {
    "cline soft / opencode (3 identical)": identical_consecutive(3),
    "roo code (4th identical blocked)": identical_consecutive(4),
    "gemini cli (5 identical)": identical_consecutive(5),
    "openhands classic": openhands_classic,
}


def _anchor_score(labels_file: Path, detect: Anchor) -> Score:
    labels = json.loads(labels_file.read_text(encoding="utf-8"))
    score = Score()
    for rel, label in labels.items():
        path, _, which = rel.partition("#")
        for run in load_runs(labels_file.parent / path):
            if which and run.session != which:
                continue
            step = detect(list(run.events))
            report = RunReport(session=run.session, source=run.source)
            if step is not None:
                report.findings.append(ReportFinding(step, 0, "anchor", 1, "nudge", ""))
            score.runs.append(score_run(rel, label, report))
    return score


def quality() -> list[Figure]:
    figures: list[Figure] = []
    sets = [("synthetic", DEVSET / "labels.json")]
    corpus = DEVSET / "corpus-labels.json"
    if Path("/work/shared/corpus").is_dir():
        try:
            from supervisor.importers import sources as foreign

            foreign.register_with_analysis()
            sets.append(("corpus", corpus))
        except ImportError:
            pass
    for name, labels in sets:
        ours = evaluate(labels, Policy.profile("default"))
        figures += _quality(f"{name} default", ours)
        strict = evaluate(labels, Policy.profile("seed-strict"))
        figures.append(Figure(f"{name} seed-strict: recall / false alarms",
                              round(strict.recall, 3),
                              note=f"false alarms {strict.false_alarm_rate:.3f}"))
        for anchor, detect in ANCHORS.items():
            s = _anchor_score(labels, detect)
            d = s.median_delay
            figures.append(Figure(
                f"{name} {anchor}: recall", round(s.recall, 3),
                note=f"false alarms {s.false_alarm_rate:.3f}, median delay "
                     f"{'-' if d is None else f'{d:g}'}"))
    return figures


# --- per-step cost ----------------------------------------------------------------------------

def session_steps(count: int, seed: int = 11) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """`count` loop-free (call, result) pairs: reads, searches, edits, tests, all different."""
    rng = random.Random(seed)
    words = ["def", "return", "import", "class", "self", "value", "error", "assert", "items"]
    pairs = []
    for i in range(count):
        kind = i % 6
        text = " ".join(rng.choices(words, k=rng.randint(20, 120))) + f" #{i}"
        if kind == 0:
            call = {"tool": "Read", "args": {"file_path": f"/repo/src/m{i}.py"}}
        elif kind == 1:
            call = {"tool": "Grep", "args": {"pattern": f"name_{i}", "path": "src"}}
        elif kind == 2:
            call = {"tool": "Edit", "args": {"file_path": f"/repo/src/m{i - 2}.py",
                                             "old_string": f"x = {i}",
                                             "new_string": f"x = {i + 1}"}}
        elif kind == 3:
            call = {"tool": "Bash", "args": {"command": f"python -m pytest tests/t{i}.py -q",
                                             "description": "run the tests"}}
        elif kind == 4:
            call = {"tool": "Bash", "args": {"command": f"grep -rn 'v{i}' src | head -20"}}
        else:
            call = {"tool": "Bash", "args": {"command": f"ls -la src/pkg{i}"}}
        cid = f"c{i}"
        ok = rng.random() > 0.15
        pairs.append((
            {"v": 1, "seq": 2 * i + 1, "ts": 1.7e9 + i, "type": "tool_call", "call_id": cid,
             **call},
            {"v": 1, "seq": 2 * i + 2, "ts": 1.7e9 + i + 0.5, "type": "tool_result",
             "call_id": cid, "ok": ok, "output": text, "output_bytes": len(text),
             "output_hash": f"{i:016x}", "error": None if ok else "exit code 1",
             "duration_ms": 12.0},
        ))
    return pairs


def _step(engine: Engine, call: dict[str, Any], result: dict[str, Any]) -> None:
    engine.check(call, call["ts"])
    engine.observe(call, call["ts"])
    engine.observe(result, result["ts"])


def _block_cost(snapshot: dict[str, Any], block: list[tuple[dict[str, Any], dict[str, Any]]],
                repeats: int) -> float:
    """Best-of-`repeats` mean seconds per step over `block`, each time from `snapshot`."""
    best = float("inf")
    for _ in range(repeats):
        engine = Engine.restore(snapshot)
        start = time.process_time()
        for call, result in block:
            _step(engine, call, result)
        best = min(best, (time.process_time() - start) / len(block))
        assert engine.level < 3, "the cost stream must stay loop-free"
    return best


def _dumps_cost(block: list[tuple[dict[str, Any], dict[str, Any]]], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        for call, result in block:
            json.dumps(call)
            json.dumps(result)
        best = min(best, (time.process_time() - start) / len(block))
    return best


def step_cost(scale: float = 1.0) -> list[Figure]:
    late_at = max(1_200, int(10_000 * scale))
    size, repeats = 200, 7
    policy = Policy.from_dict({"window": 1000, "limits": {
        name: {"limit": 0} for name in Policy.profile("default")["limits"]}})
    pairs = session_steps(late_at + size)
    engine = Engine(policy)
    snapshots = {}
    for i, (call, result) in enumerate(pairs[:late_at]):
        if i == 100:
            snapshots["early"] = engine.snapshot()
        _step(engine, call, result)
    snapshots["late"] = engine.snapshot()
    early_block, late_block = pairs[100:100 + size], pairs[late_at:late_at + size]
    early = late = 0.0
    for _ in range(5):  # interleave, so drift in machine load hits both alike
        early = min(early or 1e9, _block_cost(snapshots["early"], early_block, repeats))
        late = min(late or 1e9, _block_cost(snapshots["late"], late_block, repeats))
    dumps = _dumps_cost(late_block, repeats)
    hook = _hook_cost(json.dumps(snapshots["late"]), late_block[:20])
    return [
        Figure(f"per-step cost at step {late_at} vs step 100", round(late * 1e6, 2), "µs",
               baseline=round(early * 1e6, 2), max_ratio=MAX_STEP_RATIO,
               note="window 1,000; check + observe(call) + observe(result)"),
        Figure("per-step cost vs json.dumps of its 2 events", round(late * 1e6, 2), "µs",
               baseline=round(dumps * 1e6, 2), note="reported, no target"),
        Figure("snapshot size at the window", len(json.dumps(snapshots["late"])) / 1024, "KiB"),
        Figure("hook round trip: load state, check, save state", round(hook * 1e3, 2), "ms",
               note="json.loads + Engine.restore + check + snapshot + json.dumps, at the window"),
    ]


def _hook_cost(saved: str, block: list[tuple[dict[str, Any], dict[str, Any]]]) -> float:
    """What a hook process spends in the engine per tool call (best of the block)."""
    best = float("inf")
    for call, _ in block:
        start = time.process_time()
        engine = Engine.restore(json.loads(saved), copy=False)
        engine.check(call, call["ts"])
        json.dumps(engine.snapshot(copy=False))
        best = min(best, time.process_time() - start)
    return best


def run(scale: float = 1.0) -> list[Figure]:
    figures = step_cost(scale)
    if scale >= 1.0:
        figures = quality() + figures
    return figures

