"""The import benchmark runs (tiny size) and reports its figures against `json.load`."""

import importlib.util

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_import_benchmark_gives_ratio_figures() -> None:
    spec = importlib.util.spec_from_file_location("bench_runner", REPO / "benchmarks" / "run.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    figures = runner.run_one("import", runner.available()["import"], scale=0.01)
    names = {f.name for f in figures}
    assert {"load_runs time per step", "import throughput (load_runs)"} <= names
    (main,) = [f for f in figures if f.name == "load_runs time per step"]
    assert main.baseline and main.baseline > 0 and main.value > 0 and main.max_ratio == 4.0
