"""The guidance benchmark runs at a tiny size and gives figures with baselines (no timing
asserted)."""

from tests.test_benchmarks_smoke import load_runner


def test_guidance_benchmark_at_a_tiny_size() -> None:
    runner = load_runner()
    figures = runner.run_one("guidance", runner.available()["guidance"], scale=0.01)
    assert [f.name.split(",")[0] for f in figures] == [
        "hook answer to a failed edit", "closest match at the 1 MiB read bound (1023 KiB)"]
    assert all(f.value > 0 and f.baseline and f.max_ratio for f in figures)
