"""The hook benchmark cannot rot: at a tiny size it builds its sessions, runs the real hook and
gives its figures with baselines (no timing is asserted: benchmarks are not tests). Figures are
found by what they say, not by their count or order: each area adds its own."""

import pytest

from tests.test_benchmarks_smoke import load_runner


@pytest.mark.slow
def test_hook_benchmark_at_a_tiny_size_gives_its_figures() -> None:
    runner = load_runner()
    figures = runner.run_one("hook", runner.available()["hook"], scale=0.01)
    assert len({f.name for f in figures}) == len(figures)

    def one(*words: str):
        (found,) = [f for f in figures if all(w in f.name for w in words)]
        return found

    assert one("hook PreToolUse wall time (warm server)").max_ratio == 1.5
    assert one("hook wall time with", "vs 10 earlier events").max_ratio == 1.1
    assert one("hook cold first call").baseline
    assert one("DAEMON=0").baseline
    warm_memory = one("memory holds")
    assert warm_memory.max_ratio == 1.1 and warm_memory.ratio is not None
    droid = one("Factory Droid's PreToolUse and PostToolUse steps")
    assert droid.max_value == 2.0 and droid.baseline is None and droid.value > 0
    own = one("memory's part of a call")
    assert own.max_value == 1.0 and own.baseline is None and own.value > 0
    absolute = [f for f in figures if f.max_value is not None]  # a figure of its own
    assert all(f.value > 0 and f.baseline and f.ratio is not None
               for f in figures if f not in absolute)
