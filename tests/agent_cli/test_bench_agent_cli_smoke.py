"""The agent CLI benchmark cannot rot: at a tiny size it runs every hook configuration through the
real Claude Code and gives its figures (no timing is asserted: benchmarks are not tests)."""

from pathlib import Path

from tests.test_benchmarks_smoke import load_runner


def test_agent_cli_benchmark_at_a_tiny_size_gives_its_figures(claude_executable: Path) -> None:
    runner = load_runner()
    figures = runner.run_one("agent_cli", runner.available()["agent_cli"], scale=0.2)
    assert len(figures) == 6 and figures[0].value > 0
    assert [f.max_ratio for f in figures] == [None, None, 1.2, None, 1.0, None]
    assert "supervisor (command) vs cat" in figures[2].name and figures[2].baseline
    assert "supervisor (command) vs python" in figures[3].name and figures[3].baseline
    assert "supervisor (http)" in figures[4].name and figures[4].baseline
