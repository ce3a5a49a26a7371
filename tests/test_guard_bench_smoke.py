"""The guard benchmark runs at a tiny size and gives figures with baselines (no timing asserted)."""

import pytest

from tests.test_benchmarks_smoke import load_runner


@pytest.mark.slow
def test_guard_benchmark_at_a_tiny_size() -> None:
    runner = load_runner()
    figures = runner.run_one("guard", runner.available()["guard"], scale=0.05)
    assert [f.name.split(",")[0] for f in figures] == [
        "guard overhead per tool call (window 1", "guard cost per call", "first checkpoint",
        "checkpoint after 20 edits"]
    assert all(f.value > 0 and f.baseline and f.max_ratio for f in figures)
    assert "allow" in figures[0].note


@pytest.mark.slow
def test_sdk_benchmark_at_a_tiny_size() -> None:
    runner = load_runner()
    figures = runner.run_one("sdk", runner.available()["sdk"], scale=0.05)
    assert [f.name for f in figures] == [
        "SDK call against the core's (before + after)",
        "threads and descriptors gained over a long session",
        "resident memory gained over a long session"]
    assert figures[0].value > 0 and figures[0].baseline
    assert figures[1].value == 0, figures[1].note  # nothing leaked at any size
