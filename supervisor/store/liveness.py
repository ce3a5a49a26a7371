"""Is a session's agent still there? Judged only from what the agent itself left behind.

Two signs, each decisive when the session recorded it:

- **its process**: the guard records the agent's `pid` and the `host` it runs on (the host name
  and, on Linux, the process-id namespace, so two containers with one host name are told
  apart). On that same host the process decides: the agent is dead as soon as it is gone, and
  alive while it runs, whatever its heartbeats' time stamps say (they carry the agent's clock,
  which may be behind). A pid recorded elsewhere (or without a host, as in recordings) is never
  looked up here: it would name some unrelated process of this machine.
- **its heartbeats** (elsewhere): an agent that promised a heartbeat every `heartbeat_s`
  seconds is dead after `DEAD_AFTER_HEARTBEATS` missed ones (at least `DEAD_AFTER_MIN_S`),
  counted from the latest event the agent wrote itself: from when it reached the store when the
  store can say (`SessionSummary.last_heard_ts`: a Redis stream's entry id is the server's clock
  at arrival), else from its time stamp, which carries the agent's clock. Events that an
  operator's tool appended on its behalf (they carry `by`, e.g. an offline `supervisor
  rollback`) are no sign of life.

Agents that promise neither (hook-driven agents write nothing between tool calls) can never be
judged dead; they are `idle` when quiet.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEAD_AFTER_HEARTBEATS = 3
"""Missing this many promised heartbeats in a row: the agent is presumed dead."""
DEAD_AFTER_MIN_S = 15.0
"""...but never sooner than this many seconds of silence (a loaded machine delays threads)."""


def this_host() -> str:
    """Where pids recorded here can be looked up: `hostname` plus, when the system says, the
    pid namespace (`hostname/pid:[4026531836]`)."""
    name = os.uname().nodename  # the host name, without importing socket on the hook path
    try:
        return f"{name}/{os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return name


THIS_HOST = this_host()


def pid_alive(pid: int | None) -> bool:
    """True when a process with this id exists on this machine."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except (OSError, OverflowError):  # OverflowError: no pid is that large
        return False
    return not _zombie(pid)


def process_start(pid: int | None) -> int | None:
    """When process `pid` started (clock ticks since boot, Linux `/proc/<pid>/stat`), or None
    (no such process, or no `/proc`). A pid is reused; a pid with its start time is not: this
    is what tells the process a record names from one that got its pid since."""
    if not pid or pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return int(fields[19])  # field 22 of proc(5); the name before ")" may hold spaces
    except (OSError, IndexError, ValueError):
        return None


def _zombie(pid: int) -> bool:
    """True for a process that has exited but was not reaped yet (Linux `/proc`; elsewhere
    False): its agent is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]
    except OSError:
        return False


def dead_after(heartbeat_s: float) -> float:
    """Seconds of silence after which an agent promising `heartbeat_s` is presumed dead."""
    return max(DEAD_AFTER_HEARTBEATS * heartbeat_s, DEAD_AFTER_MIN_S)


@dataclass(frozen=True, slots=True)
class Liveness:
    """The verdict on one agent: `alive` is True, False (dead, or ended) or None (no way to
    tell: the agent promised no heartbeats and its process cannot be looked up here), and
    `reason` says why in words an operator can check."""

    alive: bool | None
    reason: str


def judge(
    *, end_status: str | None, pid: int | None, host: str | None,
    heartbeat_s: float | None, last_seen_ts: float | None, now: float,
) -> Liveness:
    """Liveness from a session's recorded facts at time `now` (see the module docstring)."""
    if end_status is not None:
        return Liveness(False, f"session ended: {end_status}")
    if pid and host and host == THIS_HOST:
        # its own process decides, whatever its events' time stamps say: they carry the agent's
        # clock, and one running 120 s behind looked silent for 120 s
        if not pid_alive(pid):
            return Liveness(False, f"its process {pid} is gone")
        return Liveness(True, f"its process {pid} is running")
    if heartbeat_s:
        if last_seen_ts is None:
            return Liveness(None, "it has written nothing yet")
        silent = max(0.0, now - last_seen_ts)
        if silent > dead_after(heartbeat_s):
            return Liveness(False, f"no heartbeat for {silent:.0f} s")
        return Liveness(True, f"heard from {silent:.0f} s ago (heartbeats every "
                              f"{heartbeat_s:g} s)")
    return Liveness(None, "it promised no heartbeats")
