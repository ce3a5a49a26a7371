"""A hostile import file cannot exhaust memory (issue 24, item 7): a 150 MB `.traj` with 2
million steps reached 4.9 GB and did not finish in 180 s. Now an import refuses a file over its
byte bound before reading it, and one holding more JSON objects and arrays than it parses before
parsing it, each with one line; the real `supervisor import`, its peak memory from the kernel."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import cli_env

pytestmark = pytest.mark.slow

STEP = json.dumps({"action": "ls", "observation": "a.py", "thought": "", "response": "ls",
                   "state": "{}"}) + ","


def _traj(path: Path, steps: int) -> Path:
    with path.open("w") as f:
        f.write('{"environment": "swe_main", "info": {}, "history": [], "trajectory": [')
        block = STEP * 10_000
        for _ in range(steps // 10_000):
            f.write(block)
        f.write(STEP.rstrip(",") + "]}")
    return path


def _import(tmp_path: Path, path: Path) -> tuple[subprocess.CompletedProcess[str], int, float]:
    measure = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], "
               "capture_output=True, text=True); sys.stderr.write(p.stderr); "
               "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", measure, sys.executable, "-m", "supervisor",
                           "import", str(path), "-o", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, env=cli_env())
    took = time.monotonic() - started
    status, peak_kb = (int(x) for x in done.stdout.split()[-2:])
    return subprocess.CompletedProcess(done.args, status, "", done.stderr), peak_kb, took


def test_a_huge_trajectory_is_refused_in_one_line_and_bounded_memory(tmp_path: Path) -> None:
    huge = _traj(tmp_path / "huge.traj", 2_000_000)
    assert huge.stat().st_size > 150 * 1024 * 1024
    done, peak_kb, took = _import(tmp_path, huge)
    assert done.returncode != 0
    [error] = [line for line in done.stderr.splitlines() if "error" in line]
    assert "file too large" in error
    assert peak_kb < 200 * 1024, f"{peak_kb // 1024} MB"
    assert took < 60


def test_a_file_of_millions_of_tiny_steps_is_refused_before_parsing(tmp_path: Path) -> None:
    dense = _traj(tmp_path / "dense.traj", 1_200_000)
    assert dense.stat().st_size < 128 * 1024 * 1024
    done, peak_kb, _took = _import(tmp_path, dense)
    assert done.returncode != 0
    assert "too many JSON objects and arrays" in done.stderr
    assert peak_kb < 600 * 1024, f"{peak_kb // 1024} MB"  # the bytes and their text, no more


def test_an_ordinary_trajectory_still_imports(tmp_path: Path) -> None:
    small = _traj(tmp_path / "small.traj", 20_000)
    done, _peak_kb, _took = _import(tmp_path, small)
    assert done.returncode == 0, done.stderr
