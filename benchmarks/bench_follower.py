"""Follower lag: 50 sessions appending at once; time from append to delivery, p50 and p95.

A writer process appends one event to each of 50 sessions every 50 ms (1,000 events/s). The lag
of an event is the wall time at which the consumer holds it minus the `ts` the writer stamped.
Our `Follower` is compared with a bare loop in the same run: watchfiles' `awatch` with the same
step and debounce, `readline` on each changed file, `json.loads` per line, nothing else. The two
are run twice each (A B B A) and their lags pooled, so a busy moment of the machine hits both.
"""

import asyncio
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from common import REPO, Figure, percentile, work_dir

from supervisor.store.follower import Follower, SessionBatch
from supervisor.store.writer import event_writer

SESSIONS = 50
ROUNDS = 100
INTERVAL_S = 0.05
STEP_MS, DEBOUNCE_MS = 50, 100
SETTLE_S = 0.5
DRAIN_S = 10.0

WRITER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from supervisor.store.writer import event_writer
root, sessions = Path(sys.argv[2]), int(sys.argv[3])
rounds, interval = int(sys.argv[4]), float(sys.argv[5])
writers = [event_writer(root, f"s{i:03d}") for i in range(sessions)]
sys.stdin.readline()
tick = time.monotonic()
for _ in range(rounds):
    for w in writers:
        w.append({"type": "heartbeat"})
    tick += interval
    time.sleep(max(0.0, tick - time.monotonic()))
"""


def prepare(root: Path, sessions: int) -> None:
    for i in range(sessions):
        with event_writer(root, f"s{i:03d}") as w:
            w.append({"type": "session_start", "agent": "bench", "task": None})


async def drive(root: Path, sessions: int, rounds: int, lags: list[float]) -> int:
    """Run the writer once the reader has settled; wait for delivery; return events missing."""
    await asyncio.sleep(SETTLE_S)
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(REPO), str(root), str(sessions), str(rounds),
         str(INTERVAL_S)], stdin=subprocess.PIPE, text=True)
    await asyncio.sleep(0.3)  # the writer's imports
    start_count = len(lags)
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.close()
    expected = sessions * rounds
    await asyncio.to_thread(proc.wait)
    deadline = time.monotonic() + DRAIN_S
    while len(lags) - start_count < expected and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return expected - (len(lags) - start_count)


async def ours(root: Path, sessions: int, rounds: int, lags: list[float]) -> int:
    async def consumer(batches: list[SessionBatch]) -> None:
        now = time.time()
        lags.extend(now - e.ts for b in batches for e in b.events if e.type == "heartbeat")

    stop = asyncio.Event()
    follower = Follower(root, step_ms=STEP_MS, debounce_ms=DEBOUNCE_MS)
    task = asyncio.create_task(follower.run(consumer, stop))
    try:
        return await drive(root, sessions, rounds, lags)
    finally:
        stop.set()
        await task


async def bare(root: Path, sessions: int, rounds: int, lags: list[float]) -> int:
    from watchfiles import awatch

    stop = asyncio.Event()
    files: dict[str, IO[bytes]] = {}
    for path in sorted((root / "sessions").glob("*/events.jsonl")):
        f = open(path, "rb")  # noqa: SIM115 (kept open for the whole loop)
        f.seek(0, 2)
        files[str(path)] = f

    async def loop() -> None:
        async for changes in awatch(root / "sessions", step=STEP_MS, debounce=DEBOUNCE_MS,
                                    stop_event=stop, recursive=True):
            events = []
            for _, path in changes:
                f = files.get(path)
                if f is None:
                    continue
                for line in iter(f.readline, b""):
                    events.append(json.loads(line))
            now = time.time()
            lags.extend(now - e["ts"] for e in events if e["type"] == "heartbeat")

    task = asyncio.create_task(loop())
    try:
        return await drive(root, sessions, rounds, lags)
    finally:
        stop.set()
        await task
        for f in files.values():
            f.close()


def run(scale: float = 1.0) -> list[Figure]:
    sessions = max(2, int(SESSIONS * scale))
    rounds = max(5, int(ROUNDS * scale))
    ours_lags: list[float] = []
    bare_lags: list[float] = []
    lost = 0
    for which in ("ours", "bare", "bare", "ours"):
        root = work_dir("follower")
        try:
            prepare(root, sessions)
            if which == "ours":
                lost += asyncio.run(ours(root, sessions, rounds, ours_lags))
            else:
                asyncio.run(bare(root, sessions, rounds, bare_lags))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    ms = 1000.0
    o50, o95 = percentile(ours_lags, 50) * ms, percentile(ours_lags, 95) * ms
    b50, b95 = percentile(bare_lags, 50) * ms, percentile(bare_lags, 95) * ms
    note = (f"{sessions} sessions x {rounds} rounds every {INTERVAL_S * 1000:g} ms, twice each; "
            f"step {STEP_MS} ms, debounce {DEBOUNCE_MS} ms for both")
    return [
        Figure("lag p50", o50, "ms", b50, 1.5, note=note),
        Figure("lag p95", o95, "ms", b95, 1.5, 200.0),
        Figure("events lost by the Follower", float(lost), "", max_value=0.0),
    ]
