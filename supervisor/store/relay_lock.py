"""Whether a relay runs for a store root: the one test, light enough for the hook path.

A relay holds an exclusive `flock` on its lock file, `<root>/relay/<host>@<store>.lock`, while it
runs (`store/redis/relay.py`); the lock goes with its process, even a killed one. `supervisor
relay --status` asks it of each relay; the guard asks whether a relay runs, connected to its
store, before it waits for this host's share of a fleet budget (`guard/spend.py`).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

RELAY_DIR = "relay"


def relay_running(lock_path: Path) -> bool:
    """Whether a relay holds this lock right now."""
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def any_relay_connected(root: Path) -> bool:
    """Whether some relay of `root` (to any store, as any host) runs right now and its state
    file says it reaches its store: one that does not could bring nothing."""
    try:
        names = os.listdir(Path(root) / RELAY_DIR)
    except OSError:
        return False
    for name in names:
        lock = Path(root) / RELAY_DIR / name
        if name.endswith(".lock") and relay_running(lock):
            try:
                state = json.loads(lock.with_suffix(".json").read_bytes())
            except (OSError, ValueError):
                continue
            if isinstance(state, dict) and state.get("connected") is True:
                return True
    return False
