"""The benchmark runner cannot rot: it finds the modules and runs the smallest at a tiny size.

No timing is asserted here (benchmarks are not part of the test run); only that the runner,
the plug-in contract and the figures work.
"""

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import REPO, cli_env


def load_runner():
    spec = importlib.util.spec_from_file_location("bench_runner", REPO / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_runner_discovers_benchmarks_by_file_name() -> None:
    runner = load_runner()
    assert {"ingest", "follower"} <= set(runner.available())


def test_ingest_at_a_tiny_size_gives_figures_with_baselines() -> None:
    runner = load_runner()
    figures = runner.run_one("ingest", runner.available()["ingest"], scale=0.001)
    assert figures and all(f.value > 0 for f in figures)
    ratio_figures = [f for f in figures if f.max_ratio is not None]
    assert ratio_figures and all(f.baseline and f.ratio is not None for f in ratio_figures)
    text = runner.table([("ingest", f) for f in figures])
    assert "parse_line per line" in text and "ratio <= 2" in text


def test_figure_pass_and_fail() -> None:
    runner = load_runner()
    figure = runner.Figure
    assert figure("x", 3.0, "ms", 2.0, max_ratio=2.0).passed is True
    assert figure("x", 5.0, "ms", 2.0, max_ratio=2.0).passed is False
    assert figure("x", 150.0, "ms", 100.0, 1.5, 200.0).passed is True
    assert figure("x", 250.0, "ms", 200.0, 1.5, 200.0).passed is False
    assert figure("x", 1.0).passed is None


def test_unknown_benchmark_is_a_clear_error() -> None:
    result = subprocess.run([sys.executable, str(REPO / "benchmarks" / "run.py"), "nosuch"],
                            capture_output=True, text=True, env=cli_env(), timeout=60)
    assert result.returncode == 2 and "unknown benchmark" in result.stderr


@pytest.mark.slow
def test_the_long_session_benchmark_leaves_no_scratch_folder(tmp_path, monkeypatch) -> None:
    """`open_long` writes a long session (tens of MB at full size) into a scratch folder: it
    is removed when the figures are taken, whatever happens."""
    import tempfile

    runner = load_runner()
    module = runner.load("dashboard", runner.available()["dashboard"])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    figures = module.open_long(scale=0.0)
    assert [f.unit for f in figures] == ["s", "s", "bytes"] and figures[0].value > 0
    assert list(tmp_path.iterdir()) == []
