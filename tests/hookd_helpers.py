"""Find and stop the resident hook servers a test started (`supervisor.hooks.server`)."""

import os
import signal
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """True while the process runs (a zombie has exited: it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is as good as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def settled(log: Path) -> bool:
    """True once every server start a client asked for has come to serve, lose or fail."""
    text = log.read_text(errors="replace") if log.exists() else ""
    asked = text.count("starting a server")
    done = sum(text.count(mark) for mark in ("serving on", "another server holds", "failed:"))
    return done >= asked


def wait_gone(pid: int, timeout: float = 30.0) -> None:
    """Return once the process has exited; fail after `timeout`. A server is not the test's
    child (a client started it, detached), so its end is seen, not waited for."""
    deadline = time.monotonic() + timeout
    while alive(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs"
        time.sleep(0.02)


def _files(base: Path, pattern: str) -> list[Path]:
    """The files under `base` matching `pattern`, walking past directories that vanish meanwhile
    (git's `incoming-*` quarantine of a checkpoint store comes and goes as the test runs)."""
    found: list[Path] = []
    for folder, _dirs, names in os.walk(base):  # os.walk skips a folder gone before its listing
        found += [Path(folder, n) for n in names if Path(folder, n).match(pattern)]
    return found


def server_pids(base: Path) -> list[int]:
    pids = []
    for pid_file in _files(base, "hook-*.sock.pid"):
        try:
            pids.append(int(pid_file.read_text()))
        except (OSError, ValueError):
            continue
    return pids


def stop_servers(base: Path, timeout: float = 10.0) -> None:
    """Wait for pending starts to settle, then SIGKILL every server under `base`."""
    logs = _files(base, "run/hookd.log")
    if not logs:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not all(settled(log) for log in logs):
        time.sleep(0.05)
    for pid in server_pids(base):
        if not alive(pid):
            continue
        os.kill(pid, signal.SIGKILL)
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
