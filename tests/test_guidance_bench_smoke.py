"""The guidance benchmark runs at a tiny size and gives figures with baselines (no timing
asserted)."""

import pytest

from tests.test_benchmarks_smoke import load_runner


def test_guidance_benchmark_at_a_tiny_size() -> None:
    runner = load_runner()
    figures = runner.run_one("guidance", runner.available()["guidance"], scale=0.01)
    assert [f.name.split(",")[0] for f in figures] == [
        "hook answer to a failed edit", "closest match at the 1 MiB read bound (1023 KiB)"]
    assert all(f.value > 0 and f.baseline and f.max_ratio for f in figures)


@pytest.mark.slow
def test_the_quality_benchmarks_guidance_section_on_the_corpora() -> None:
    """`benchmarks/run.py quality` reports the closest match of failed edits on the corpora
    (target >= 80 %); without a corpus on the machine it says so and measures nothing."""
    load_runner()  # puts benchmarks/ on the path, as the runner does
    import quality_closest

    if not quality_closest.corpora():
        lines, figures = quality_closest.section()
        assert figures == [] and "nothing measured" in lines[0]
        pytest.skip("no corpus on this machine")
    lines, figures = quality_closest.section()
    assert lines[0].startswith("closest match of failed edits (")
    assert "the region shown holds what the agent needed: " in lines[1]
    assert [f.name for f in figures] == [
        "failed edits: region misses what the agent needed (1 - share)"]
    assert figures[0].passed is True  # >= 80 % of the judged failures
