"""The replay benchmark cannot rot: it runs at a small size and gives its one figure.

No timing is asserted (benchmarks are not part of the test run); its session must still be one
the engine reads as a real run (results for its calls, shell lines parsed, a few findings).
"""

import importlib.util
import sys

from tests.conftest import REPO


def test_replay_benchmark_at_a_small_size() -> None:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        spec = importlib.util.spec_from_file_location("bench_replay_smoke",
                                                      REPO / "benchmarks" / "bench_replay.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        lines = module.session_lines(400)
        figures = module.run(scale=0.02)
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    assert len(lines) == 400
    (figure,) = figures
    assert figure.baseline and figure.value > 0 and figure.max_ratio == module.MAX_RATIO
    assert "400 events" in figure.note
