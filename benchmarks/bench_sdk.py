"""The guard SDK (`Session`) as an agent loop uses it: what it adds to the core per call, and
whether a long session leaks threads, descriptors or memory.

- SDK against core: `Session.before_call` + `after_call` against the `Guard.pre_call` +
  `post_call` they wrap, in one session, the two sides alternating call by call (ABBA), each
  timed in CPU time of the calling thread; the median of each side. The SDK's own work is its
  checks of the arguments and its record of the calls in flight.
- A long session: 10,000 calls through `Session` (the tool wrapper, `before_call` by hand,
  usage every 50 calls; the heartbeat thread on, checkpoints off), the threads and open
  descriptors of the process after the 1,000th call and after the last (the difference, target
  0), and its resident memory between the same two points.
"""

import os
import shutil
import statistics
import threading
import time
from pathlib import Path

from common import Figure, work_dir

from supervisor.guard import GuardSettings, Session

CALLS = 3000
LONG = 10_000
POLICY = {
    "window": 1000,
    # No call-count limit may hold the run: every call goes through the whole check.
    "limits": {name: {"limit": 0} for name in (
        "consecutive_tool_calls", "iterations_per_session", "iterations_per_cycle",
        "actions_per_task")},
}
NO_CHECKPOINTS = GuardSettings(checkpoints=False, checkpoint_at_start=False, checkpoint_every=0)


def run(scale: float = 1.0) -> list[Figure]:
    base = work_dir("sdk")
    try:
        return [_against_core(base, max(100, int(CALLS * scale))),
                *_long_session(base, max(500, int(LONG * scale)))]
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _against_core(base: Path, count: int) -> Figure:
    sdk: list[float] = []
    core: list[float] = []
    with Session("bench", cwd=base, root=base / "store", session_id="ratio", policy=POLICY,
                 settings=NO_CHECKPOINTS, heartbeat_s=None, wait_timeout=0.0) as s:
        guard = s.guard
        for i in range(count):
            args = {"command": f"pytest -q -k t{i}"}
            for side in (sdk, core) if i % 2 == 0 else (core, sdk):
                started = time.thread_time()
                if side is sdk:
                    s.after_call(s.before_call("bash", args), f"{i} passed")
                else:
                    verdict = guard.pre_call("bash", args)
                    assert verdict.call_id is not None
                    guard.post_call(verdict.call_id, f"{i} passed")
                side.append(time.thread_time() - started)
    return Figure("SDK call against the core's (before + after)", statistics.median(sdk) * 1e6,
                  "us", baseline=statistics.median(core) * 1e6, max_ratio=1.1,
                  note=f"CPU time of the calling thread, median of {count} calls a side, "
                       "alternating")


def _long_session(base: Path, count: int) -> list[Figure]:
    work = base / "work"
    work.mkdir()
    for i in range(40):
        (work / f"m{i}.py").write_text(f"x = {i}\n")
    marks: list[tuple[int, int, int]] = []
    with Session("bench", task="t", cwd=work, root=base / "store", session_id="long",
                 policy=POLICY, settings=NO_CHECKPOINTS, heartbeat_s=1.0,
                 wait_timeout=0.0) as s:

        @s.tool
        def read(path: str) -> str:
            return (work / path).read_text()

        for i in range(count):
            if i % 2:
                read(f"m{i % 40}.py")
            else:
                v = s.before_call("grep", {"pattern": f"def f{i % 90}"})
                if v.proceed:
                    s.after_call(v, f"match {i}")
            if i % 50 == 0:
                s.usage(100, 10, cost_usd=0.0001)
            if i + 1 in (count // 10, count):
                marks.append((threading.active_count(), len(os.listdir("/proc/self/fd")),
                              _rss_kib()))
    (threads0, fds0, rss0), (threads1, fds1, rss1) = marks
    at = f"after call {count // 10:,} and call {count:,}"
    return [
        Figure("threads and descriptors gained over a long session", (threads1 - threads0)
               + (fds1 - fds0), max_value=0,
               note=f"{threads0} threads, {fds0} descriptors {at}: {threads1}, {fds1}"),
        Figure("resident memory gained over a long session", (rss1 - rss0) / 1024, "MB",
               max_value=4.0, note=f"{rss0 / 1024:.1f} MB {at}: {rss1 / 1024:.1f} MB"),
    ]


def _rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
