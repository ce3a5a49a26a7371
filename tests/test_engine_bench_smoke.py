"""The engine benchmark cannot rot: its cost part runs at a small size and gives figures.

No timing is asserted (benchmarks are not part of the test run).
"""

import importlib.util
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.slow
def test_engine_benchmark_at_a_small_size() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("bench_engine_smoke",
                                                      REPO / "benchmarks" / "bench_engine.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        figures = module.run(scale=0.01)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    names = [f.name for f in figures]
    assert any("per-step cost at step" in n for n in names)
    ratio = next(f for f in figures if "vs step 100" in f.name)
    assert ratio.baseline and ratio.max_ratio == 1.2 and ratio.value > 0
