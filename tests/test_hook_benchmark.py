"""The hook benchmark cannot rot: at a tiny size it builds its sessions, runs the real hook and
gives its figures with baselines (no timing is asserted: benchmarks are not tests)."""

from tests.test_benchmarks_smoke import load_runner


def test_hook_benchmark_at_a_tiny_size_gives_its_figures() -> None:
    runner = load_runner()
    figures = runner.run_one("hook", runner.available()["hook"], scale=0.01)
    by_name = {f.name: f for f in figures}
    assert len(by_name) == len(figures) == 8
    assert all(f.value > 0 for f in figures if "extra ms" not in f.name)  # a difference
    assert "warm server" in figures[0].name and "earlier events" in figures[1].name
    assert [f.max_ratio for f in figures[:3]] == [1.5, 1.1, 1.1]
    memory = [f for f in figures if "memory" in f.name]
    assert len(memory) == 2  # the warm call with a large memory, and the memory's own part
    assert memory[0].max_ratio == 1.1 and memory[0].ratio is not None
    assert memory[1].max_value == 1.0 and memory[1].baseline is None
    assert any("cold first call" in f.name for f in figures)
    assert any("DAEMON=0" in f.name for f in figures)
    absolute = [f for f in figures if f.max_value is not None]  # a figure of its own
    assert all(f.baseline and f.ratio is not None for f in figures if f not in absolute)
