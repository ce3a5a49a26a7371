"""What every benchmark module returns: `Figure`s, each measured against a baseline in one run.

A figure passes when its ratio to the baseline is within `max_ratio` and its value within
`max_value` (either may be absent). Ratios measured in one run on one machine are what we
compare; absolute numbers only where the issue sets one (e.g. a lag under 200 ms).
"""

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # benchmarks run from a checkout, package installed or not
    sys.path.insert(0, str(REPO))


UNLIMITED_POLICY = """
[guard]
checkpoints = false
[limits.iterations_per_session]
limit = 10000000
[limits.consecutive_tool_calls]
limit = 10000000
[limits.iterations_per_cycle]
limit = 10000000
[limits.actions_per_task]
limit = 10000000
[limits.errors_per_session]
limit = 10000000
"""
"""A session policy for the hook benchmarks: no checkpoints and no per-session limit a long
measured run would reach, so every call is the same allowed step."""

@dataclass(frozen=True)
class Figure:
    """One measured figure, with its baseline and targets."""

    name: str
    value: float
    unit: str = ""
    baseline: float | None = None
    """The same quantity for the reference implementation, measured in the same run."""
    max_ratio: float | None = None
    max_value: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if self.baseline is None or self.baseline == 0:
            return None
        return self.value / self.baseline

    @property
    def target(self) -> str:
        parts = []
        if self.max_ratio is not None:
            parts.append(f"ratio <= {self.max_ratio:g}")
        if self.max_value is not None:
            parts.append(f"<= {self.max_value:g} {self.unit}".rstrip())
        return ", ".join(parts) or "-"

    @property
    def passed(self) -> bool | None:
        """True/False against the targets; None when the figure has no target."""
        checks = []
        if self.max_ratio is not None:
            checks.append(self.ratio is not None and self.ratio <= self.max_ratio)
        if self.max_value is not None:
            checks.append(self.value <= self.max_value)
        return all(checks) if checks else None


def percentile(values: list[float], pct: float) -> float:
    """The `pct`-th percentile (0-100) of `values`, by linear interpolation."""
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(pct) - 1]


def work_dir(name: str) -> Path:
    """A fresh scratch directory for one benchmark (under the system temp dir)."""
    return Path(tempfile.mkdtemp(prefix=f"supervisor-bench-{name}-"))


def best_of(runs: int, *fns: Callable[[], object]) -> list[float]:
    """Best time of each function; the runs are interleaved so a busy moment hits all alike."""
    best = [float("inf")] * len(fns)
    for _ in range(runs):
        for index, fn in enumerate(fns):
            started = time.perf_counter()
            fn()
            best[index] = min(best[index], time.perf_counter() - started)
    return best
