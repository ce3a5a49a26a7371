"""Import throughput: foreign run files to protocol events, against a bare `json.load`.

The workload is every run file of the development corpus (`../shared/corpus`, else the test
fixtures), copied to a scratch directory and read once so the page cache holds it. The baseline
parses each file with `json.loads` (line by line for JSON Lines); ours runs `load_runs` on the
same files (parse, detect the format, map every step, hash every output). Both are timed over
the whole workload, repeated, best of interleaved runs; steps are tool calls. The targets are
on CPU time (`time.process_time`: the work is in-process and single-threaded, and on a loaded
machine the wall clock mostly measures the wait for a core: 2.8x to 4.7x for the same code
within half an hour at load 10); the wall-clock ratio is reported beside them. A third figure
times `supervisor import` writing the sessions to disk.
"""

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import REPO, Figure, work_dir

from supervisor.importers import load_runs
from supervisor.importers.document import read_document

TARGET_RATIO = 4.0
"""Mapping costs more than parsing: events are built, outputs hashed, long texts cut."""
SUFFIXES = (".traj", ".json", ".jsonl")


def corpus_files() -> list[Path]:
    for root in (REPO.parent / "shared" / "corpus", REPO.parent.parent / "shared" / "corpus",
                 REPO / "tests" / "data" / "importers"):
        if root.is_dir():
            files = sorted(p for p in root.rglob("*")
                           if p.is_file() and p.name.endswith(SUFFIXES))
            if files:
                return files
    raise RuntimeError("no run files found (corpus or tests/data/importers)")



def run(scale: float = 1.0) -> list[Figure]:
    files = corpus_files()
    scratch = work_dir("import")
    copies = []
    for index, path in enumerate(files):  # private copies in tmpfs-like scratch, warm cache
        copy = scratch / f"{index:03d}-{path.name}"
        shutil.copyfile(path, copy)
        copies.append(copy)
    steps = sum(run.steps for path in copies for run in load_runs(path))
    repeat = max(1, int(5 * scale))

    def baseline() -> None:
        for _ in range(repeat):
            for path in copies:
                text = path.read_text(encoding="utf-8")
                try:
                    json.loads(text)
                except ValueError:
                    for line in text.splitlines():
                        if line.strip():
                            json.loads(line)

    def parse_only() -> None:
        for _ in range(repeat):
            for path in copies:
                list(read_document(path).records())  # opened lazily: read every record

    def ours() -> None:
        for _ in range(repeat):
            for path in copies:
                load_runs(path)

    runs = 5 if scale >= 1 else 1
    (base, parse, full), (base_wall, _parse_wall, full_wall) = _best_of_both(
        runs, baseline, parse_only, ours)
    write = _time_cli_write(copies, steps)
    streamed = _streamed_memory(scratch, int(100_000 * scale) or 1_000)
    shutil.rmtree(scratch, ignore_errors=True)
    total = steps * repeat
    note = f"{len(copies)} files, {steps} steps, x{repeat}; CPU time, best of {runs}"
    return [
        Figure("load_runs time per step", full / total * 1e6, "us", base / total * 1e6,
               TARGET_RATIO, note=note),
        Figure("read_document time per step", parse / total * 1e6, "us", base / total * 1e6,
               1.5, note="CPU time"),
        Figure("load_runs wall time per step", full_wall / total * 1e6, "us",
               base_wall / total * 1e6, note="wall clock, same runs; no target"),
        Figure("import throughput (load_runs)", total / full, "steps/s", note="no target"),
        Figure("json.load throughput", total / base, "steps/s", note="the baseline"),
        Figure("import + write sessions", write, "steps/s", note="no target"),
        *streamed,
    ]


def _best_of_both(runs: int, *fns: Callable[[], object]
                  ) -> tuple[list[float], list[float]]:
    """`common.best_of` on CPU time and on the wall clock at once (the same runs)."""
    cpu, wall = [float("inf")] * len(fns), [float("inf")] * len(fns)
    for _ in range(runs):
        for index, fn in enumerate(fns):
            cpu_start, wall_start = time.process_time(), time.perf_counter()
            fn()
            cpu[index] = min(cpu[index], time.process_time() - cpu_start)
            wall[index] = min(wall[index], time.perf_counter() - wall_start)
    return cpu, wall


STREAM_STEP = json.dumps({"action": "ls -la src", "observation": "total 8\nmain.py",
                          "thought": "look around", "response": "", "state": "{}"})
MEASURE = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
           "p = subprocess.run(sys.argv[1:], capture_output=True); "
           "print(p.returncode, time.perf_counter() - t, "
           "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def _streamed_memory(scratch: Path, steps: int) -> list[Figure]:
    """Peak memory of `supervisor import` of one big SWE-agent trajectory, against a plain
    `json.load` of the same file, each in its own process (the kernel's peak RSS): the import
    streams the steps to the writer, so it must stay under what merely parsing the file takes;
    and at twice the steps its peak must barely move."""
    import subprocess
    import sys

    def traj(count: int) -> Path:
        path = scratch / f"stream-{count}.traj"
        with path.open("w") as f:
            f.write('{"environment": "swe_main", "info": {}, "history": [], "trajectory": [')
            f.write(",".join([STREAM_STEP] * count) + "]}")
        return path

    def peak(*argv: str) -> tuple[float, float]:
        done = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True,
                              text=True, check=True)
        status, seconds, kb = done.stdout.split()
        if status != "0":
            raise RuntimeError(f"{argv} exited {status}")
        return float(seconds), int(kb) / 1024

    big, half = traj(steps), traj(steps // 2)
    parse_s, parse_mb = peak(sys.executable, "-c", "import json, sys; json.load(open(sys.argv[1]))",
                             str(big))
    import_s, import_mb = peak(sys.executable, "-m", "supervisor", "import", str(big), "-o",
                               str(scratch / "stream-out"))
    _half_s, half_mb = peak(sys.executable, "-m", "supervisor", "import", str(half), "-o",
                            str(scratch / "stream-half"))
    note = f"{steps} steps, {big.stat().st_size // (1024 * 1024)} MB"
    return [
        Figure("streamed import peak RSS", import_mb, "MB", parse_mb, 1.0,
               note=f"{note}; baseline: json.load of the file"),
        Figure("streamed import peak growth (2x steps)", import_mb / half_mb, "x",
               max_value=1.1, note=f"{half_mb:.0f} MB at {steps // 2} steps"),
        Figure("streamed import time", import_s, "s", parse_s,
               note=f"{note}; baseline: json.load; parse, map, hash, write; no target"),
    ]


def _time_cli_write(files: list[Path], steps: int) -> float:
    """Steps per second of loading and writing every run as a session (the CLI's work)."""
    from supervisor.store.writer import event_writer

    out = Path(tempfile.mkdtemp(prefix="supervisor-bench-import-out-"))
    started = time.perf_counter()
    for index, path in enumerate(files):
        for number, imported in enumerate(load_runs(path)):
            with event_writer(out, f"r{index}-{number}") as writer:
                writer.append_many(imported.events)
    elapsed = time.perf_counter() - started
    shutil.rmtree(out, ignore_errors=True)
    return steps / elapsed
