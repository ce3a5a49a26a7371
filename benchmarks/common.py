"""What every benchmark module returns: `Figure`s, each measured against a baseline in one run.

A figure passes when its ratio to the baseline is within `max_ratio` and its value within
`max_value` (either may be absent). Ratios measured in one run on one machine are what we
compare; absolute numbers only where the issue sets one (e.g. a lag under 200 ms).
"""

import random
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


TRIM = 0.1
"""The share of values `trimmed_mean` drops from each end."""


def trimmed_mean(values: list[float], cut: float = TRIM) -> float:
    """The mean of `values` without the `cut` share of them at each end (rounded down).

    For times a log stamps in whole milliseconds (a hook's start and end each rounded down to
    its millisecond, at a phase that falls anywhere in it), each logged duration is the true one
    rounded down or up, up with a probability equal to its fraction: the mean of the logged
    durations is the true mean, while their median can only be a whole or a half millisecond
    (on 7 ms, one step of it is 14 %). The trim keeps the calls that waited for a CPU from
    moving the figure as much as they move a plain mean."""
    ordered = sorted(values)
    drop = int(len(ordered) * cut)
    kept = ordered[drop:len(ordered) - drop] if drop else ordered
    return statistics.fmean(kept)


def bootstrap_ratio(ours: list[list[float]], theirs: list[list[float]],
                    estimate: Callable[[list[float]], float], draws: int = 2000,
                    seed: int = 0) -> tuple[float, float]:
    """The 5th and 95th percentiles of estimate(ours) / estimate(theirs) over `draws`
    resamplings, each round's calls drawn with replacement within that round (so each
    resample keeps the rounds' sizes: a round on a busier minute weighs what it weighed). The
    spread of the calls only: how much the rounds differ from each other is their own figure."""
    pick = random.Random(seed)
    ratios = []
    for _ in range(draws):
        mine = [value for found in ours for value in pick.choices(found, k=len(found))]
        other = [value for found in theirs for value in pick.choices(found, k=len(found))]
        ratios.append(estimate(mine) / estimate(other))
    ratios.sort()
    return ratios[int(0.05 * draws)], ratios[int(0.95 * draws) - 1]
