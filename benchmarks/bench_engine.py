"""Engine: the cost of one step, flat as a session grows.

One step is `check` + `observe(tool_call)` + `observe(tool_result)`. A long loop-free session
is replayed with a window of 1,000 steps; the mean cost of a step around step 10,000 is
compared with one around step 100 (target <= 1.2x), and with `json.dumps` of the same two
events (reported, no target), and what a hook process spends per call (load the state, check,
save it). Times are CPU time of this process (best of several interleaved runs), because the
machine may be shared. The detection quality is `bench_quality.py` (the labelled corpus).
"""

import json
import random
import time
from typing import Any

from common import REPO, Figure

from supervisor.engine import Engine, Policy

DEVSET = REPO / "tests" / "data" / "devset"
MAX_STEP_RATIO = 1.2


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
    return step_cost(scale)

