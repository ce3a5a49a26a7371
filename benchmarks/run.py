"""Run the benchmarks and print a table of figures.

    python benchmarks/run.py [NAME...] [--scale X] [--json]

NAME is a module `benchmarks/bench_<NAME>.py` (all of them when none is given). Each module
exposes `run(scale: float = 1.0) -> list[Figure]` (`scale` shrinks the workload, for the smoke
test; a module whose `run()` takes no argument is run at full size). The exit status is 1 when a
figure misses its target, 2 when a benchmark crashed.
"""

import argparse
import importlib.util
import inspect
import json
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from common import Figure  # noqa: E402  (after the path set-up above)


def available() -> dict[str, Path]:
    """Benchmark names and their files, by file name: `bench_<name>.py`."""
    return {p.stem.removeprefix("bench_"): p for p in sorted(HERE.glob("bench_*.py"))}


def load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_one(name: str, path: Path, scale: float) -> list[Figure]:
    module = load(name, path)
    if "scale" in inspect.signature(module.run).parameters:
        return list(module.run(scale=scale))
    return list(module.run())


def table(rows: list[tuple[str, Figure]]) -> str:
    headers = ["benchmark", "figure", "value", "baseline", "ratio", "target", "result"]
    lines = [headers]
    for bench, f in rows:
        lines.append([
            bench, f.name, _num(f.value, f.unit),
            _num(f.baseline, f.unit) if f.baseline is not None else "-",
            f"{f.ratio:.2f}x" if f.ratio is not None else "-",
            f.target,
            {True: "pass", False: "FAIL", None: "-"}[f.passed],
        ])
    widths = [max(len(row[i]) for row in lines) for i in range(len(headers))]
    out = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
           for row in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def _num(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    text = f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return f"{text} {unit}".rstrip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"of {sorted(available())}")
    parser.add_argument("--scale", type=float, default=1.0, help="workload size factor")
    parser.add_argument("--json", action="store_true", help="print figures as JSON lines")
    args = parser.parse_args(argv)
    benches = available()
    unknown = [n for n in args.names if n not in benches]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; available: {sorted(benches)}")
    rows: list[tuple[str, Figure]] = []
    crashed = False
    for name in args.names or list(benches):
        started = time.perf_counter()
        print(f"running {name}...", file=sys.stderr, flush=True)
        try:
            figures = run_one(name, benches[name], args.scale)
        except Exception:
            traceback.print_exc()
            crashed = True
            continue
        print(f"  {name}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
        rows += [(name, f) for f in figures]
    if args.json:
        for bench, f in rows:
            print(json.dumps({"benchmark": bench, "figure": f.name, "value": f.value,
                              "unit": f.unit, "baseline": f.baseline, "ratio": f.ratio,
                              "target": f.target, "passed": f.passed, "note": f.note}))
    else:
        print(table(rows))
        for bench, f in rows:
            if f.note:
                print(f"  {bench} / {f.name}: {f.note}")
    if crashed:
        return 2
    return 1 if any(f.passed is False for _, f in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
