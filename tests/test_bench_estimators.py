"""The estimators the agent_cli benchmark reads a CLI's hook log with (`benchmarks/common.py`).

A log that stamps whole milliseconds (Factory Droid's, Claude Code's, Qwen Code's, Copilot's)
rounds each hook's start and end down to its millisecond; a call's logged time is a sum of such
differences. These tests draw hook times as a real run has them (a true time, a little jitter,
a rare call that waited for a CPU), log them the way the CLIs do and check that the goal's
estimator finds the true times where the median cannot.
"""

import importlib.util
import math
import random
import statistics

from tests.conftest import REPO


def _common():
    spec = importlib.util.spec_from_file_location("bench_common", REPO / "benchmarks" / "common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _logged_calls(pre_ms: float, post_ms: float, calls: int, seed: int) -> list[float]:
    """Per call, in seconds: the PreToolUse and PostToolUse hooks' times as a log stamping
    whole milliseconds gives them (each stamp rounded down, the start at any phase)."""
    pick = random.Random(seed)
    out = []
    for _ in range(calls):
        total = 0
        for true_ms in (pre_ms, post_ms):
            took = true_ms + pick.gauss(0, 0.15) + (20.0 if pick.random() < 0.03 else 0.0)
            start = pick.uniform(0, 1000)
            total += math.floor(start + took) - math.floor(start)
        out.append(total / 1000.0)
    return out


def test_the_trimmed_mean_finds_a_time_the_median_rounds_away() -> None:
    common = _common()
    ours = _logged_calls(4.3, 3.3, 400, seed=1)  # 7.6 ms a call
    cats = _logged_calls(3.6, 3.0, 400, seed=2)  # 6.6 ms a call
    assert {round(v * 1000) for v in ours} <= set(range(5, 50))  # whole milliseconds only
    trimmed = common.trimmed_mean(ours) * 1000, common.trimmed_mean(cats) * 1000
    assert abs(trimmed[0] - 7.6) < 0.1 and abs(trimmed[1] - 6.6) < 0.1
    assert abs(trimmed[0] / trimmed[1] - 7.6 / 6.6) < 0.025
    medians = statistics.median(ours) * 1000, statistics.median(cats) * 1000
    assert medians == (8.0, 7.0)  # the grid point most calls fall on: 1.14x for 1.15x here,
    assert statistics.mean(ours) * 1000 > 8.0  # and the calls that waited move a plain mean


def test_the_trim_drops_a_share_at_each_end() -> None:
    common = _common()
    assert common.trimmed_mean([1.0] * 9 + [100.0]) == 1.0  # 10 % at each end
    assert common.trimmed_mean([0.0] + [5.0] * 18 + [100.0]) == 5.0
    assert common.trimmed_mean([1.0, 2.0, 9.0]) == 4.0  # too few to drop any


def test_the_bootstrap_interval_holds_the_true_ratio_and_narrows_with_calls() -> None:
    common = _common()
    ours = [_logged_calls(4.3, 3.3, 120, seed=s) for s in (3, 4, 5)]
    cats = [_logged_calls(3.6, 3.0, 120, seed=s) for s in (6, 7, 8)]
    low, high = common.bootstrap_ratio(ours, cats, common.trimmed_mean)
    assert low < 7.6 / 6.6 < high and high - low < 0.1
    few = common.bootstrap_ratio([r[:20] for r in ours], [r[:20] for r in cats],
                                 common.trimmed_mean)
    assert few[1] - few[0] > high - low
