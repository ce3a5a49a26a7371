"""Bounded waits: the deadline of the call being handled, and the waits that honour it.

A hook call must answer before the agent's timeout, or the agent runs the call unsupervised
(and for a wedged lock, waits for the hook forever). So the hook runtime sets the call's
deadline once (`within`), and every wait below it on the same thread takes what is left:
`flock` (the session lock, the hook memory, the checkpoint lock, the event log's writer lock)
and `remaining()` (the git processes of checkpoints). Past the deadline they raise
`DeadlineExceeded`, which the runtime turns into its fail-safe answer. Outside a hook call
(the SDK, the CLI) there is no deadline and nothing changes: the waits block as before.

Stdlib only (`contextvars` keeps each server thread's deadline its own).
"""

import fcntl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from supervisor.store.errors import StoreError

_DEADLINE: ContextVar[float | None] = ContextVar("supervisor_deadline", default=None)
_FIRST_SLEEP_S = 0.002
_LONGEST_SLEEP_S = 0.05


class DeadlineExceeded(StoreError):
    """A wait outlived the time budget of the call being handled; the message says which.

    Not an `OSError` (nor `TimeoutError`) on purpose: code that tolerates a failing file
    operation (`except OSError`) must not take a spent budget for one and go on waiting."""


@contextmanager
def within(deadline: float | None) -> Iterator[None]:
    """Every bounded wait in this block (and this thread) ends by `deadline`
    (`time.monotonic()`); an inner deadline never extends an outer one."""
    outer = _DEADLINE.get()
    if deadline is not None and outer is not None:
        deadline = min(deadline, outer)
    token = _DEADLINE.set(deadline if deadline is not None else outer)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def remaining() -> float | None:
    """Seconds left before the current deadline (never negative), or None without one."""
    deadline = _DEADLINE.get()
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


def flock(fd: int, what: str, *, shared: bool = False) -> None:
    """Take an exclusive (or `shared`) `flock` on `fd`: at once if free; else wait, but with a
    deadline set only until it (then `DeadlineExceeded` naming `what`)."""
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    deadline = _DEADLINE.get()
    if deadline is None:
        fcntl.flock(fd, mode)
        return
    sleep = _FIRST_SLEEP_S
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded(
                f"{what} stayed locked by another process until the hook's time budget ran out")
        time.sleep(min(sleep, left))
        sleep = min(sleep * 2, _LONGEST_SLEEP_S)
