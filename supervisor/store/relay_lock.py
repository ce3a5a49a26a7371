"""Whether a relay runs for a store root: the one test, light enough for the hook path.

A relay holds an exclusive `flock` on its lock file, `<root>/relay/<host>@<store>.lock`, while it
runs (`store/redis/relay.py`); the lock goes with its process, even a killed one. `supervisor
relay --status` asks it of each relay; the guard asks whether any relay runs before it waits for
this host's share of a fleet budget (`guard/spend.py`).
"""

from __future__ import annotations

import fcntl
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


def any_relay_running(root: Path) -> bool:
    """Whether some relay of `root` (to any store, as any host) runs right now."""
    try:
        names = os.listdir(Path(root) / RELAY_DIR)
    except OSError:
        return False
    return any(relay_running(Path(root) / RELAY_DIR / n) for n in names if n.endswith(".lock"))
