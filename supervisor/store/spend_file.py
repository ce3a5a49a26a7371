"""The store's daily spend file, `<root>/spend/<YYYY-MM-DD>.json`, and its lock.

Two writers share it: the guard of every session of the root (`guard/spend.py`: it counts each
`usage`, reserves each call's expected cost and checks the daily budgets) and, in a fleet, the
host's relay (`store/redis/budget_sync.py`: it writes what share of each fleet budget Redis
granted this host). Both change it only under an exclusive `flock` on `<root>/spend/lock`, read,
change and write in one step, so the file is the one place the two meet and neither imports the
other.

The day is the host's local date. The keys of the file (each of them optional; a missing or
unreadable one reads as empty) are described where they are written: `guard/spend.py` for
`totals`, `sessions`, `last`, `reserved`, `raised`, `warned`, `seen`, `keys` and `fleet`;
`budget_sync.py` for `grants`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from supervisor.store import waits
from supervisor.store.paths import write_private

SPEND_DIR = "spend"
LOCK_FILE = "lock"


def day_of(now: float) -> str:
    """The local date of `now`, as the spend files are named."""
    return time.strftime("%Y-%m-%d", time.localtime(now))


def empty() -> dict[str, Any]:
    return {"totals": {}, "sessions": {}, "last": {}, "reserved": {}, "raised": {},
            "warned": [], "seen": {}, "keys": {}, "fleet": {}, "grants": {}}


def load(path: Path) -> dict[str, Any] | None:
    """The day's summary, or None when there is none (missing, unreadable, not an object)."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    day = empty()
    for key, default in day.items():
        if isinstance(data.get(key), type(default)):
            day[key] = data[key]
    return day


@contextlib.contextmanager
def locked_day(root: Path, date: str,
               rebuild: Callable[[], dict[str, Any]] | None) -> Iterator[dict[str, Any] | None]:
    """The day's summary under the exclusive lock, written back when it changed. Without a
    file, `rebuild()` gives it (and it is written); with no `rebuild`, None is given and
    nothing is written."""
    directory = Path(root) / SPEND_DIR
    path = directory / f"{date}.json"
    if rebuild is None and not path.exists():
        yield None
        return
    directory.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(directory / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        waits.flock(fd, "the store's daily spend")
        day = load(path)
        if day is None and rebuild is None:
            yield None
            return
        if day is None:
            day = rebuild() if rebuild else empty()
        before = json.dumps(day, sort_keys=True)
        yield day
        after = json.dumps(day, sort_keys=True)
        if after != before or not path.exists():
            write_private(path, after.encode("utf-8"))
    finally:
        os.close(fd)
