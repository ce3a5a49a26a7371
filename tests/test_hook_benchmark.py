"""The hook benchmark cannot rot: at a tiny size it builds its sessions, runs the real hook and
gives its figures with baselines (no timing is asserted: benchmarks are not tests)."""

from tests.test_benchmarks_smoke import load_runner


def test_hook_benchmark_at_a_tiny_size_gives_its_figures() -> None:
    runner = load_runner()
    figures = runner.run_one("hook", runner.available()["hook"], scale=0.01)
    assert len(figures) == 5
    assert all(f.value > 0 and f.baseline and f.ratio is not None for f in figures)
    assert [f.max_ratio for f in figures] == [1.5, 1.1, 1.1, None, None]
    assert "warm server" in figures[0].name and "earlier events" in figures[1].name
    assert "cold first call" in figures[3].name and "DAEMON=0" in figures[4].name
