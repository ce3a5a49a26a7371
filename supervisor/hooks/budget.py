"""How long one hook call may still take: the single owner of the remaining time (stdlib only).

An agent gives each hook a timeout (Claude Code's `timeout` of the entry, passed to us as
`--timeout`); a hook that runs past it is abandoned, and for a PreToolUse that means the call
runs unsupervised. So every wait on the hook path (holding a call for the operator, a lock, the
server's reply) must fit in what is left of that timeout. `Budget` is created once per call, when
the call starts (the client, or the server when the call arrives), and handed down; nothing else
computes a deadline of its own.
"""

import time

ANSWER_MARGIN_S = 10.0
"""A hold for the operator ends this long before the agent's timeout, so the hook always answers
by itself (with the policy's fallback) before the agent gives up on it."""
LAST_RESORT_S = ANSWER_MARGIN_S / 2
"""A hook still waiting this long before the timeout answers that the call is on hold."""
MIN_HOLD_S = 1.0
WAIT_MARGIN_S = 1.0
"""Every other wait (a lock, a git process, the server's reply) ends this long before the
agent's timeout: time left to answer with the fail-safe."""


class Budget:
    """The agent's hook timeout (`total_s`) counted from `started` (`time.monotonic()`)."""

    __slots__ = ("started", "total_s")

    def __init__(self, total_s: float, started: float | None = None) -> None:
        self.total_s = float(total_s)
        self.started = time.monotonic() if started is None else started

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def remaining(self) -> float:
        """Seconds left before the agent gives up on this call (never negative)."""
        return max(self.total_s - self.elapsed(), 0.0)

    def hold_s(self) -> float:
        """The longest an escalation raised now may wait for the operator before its fallback
        applies: what is left, less `ANSWER_MARGIN_S` (at least `MIN_HOLD_S`)."""
        return max(self.remaining() - ANSWER_MARGIN_S, MIN_HOLD_S)

    def deadline(self) -> float:
        """The `time.monotonic()` by which every wait of this call must end
        (`supervisor.store.waits.within`): `WAIT_MARGIN_S` before the agent's timeout (a
        quarter of a timeout shorter than four margins)."""
        return self.started + self.total_s - min(WAIT_MARGIN_S, self.total_s / 4)

    def wait_s(self) -> float:
        """How long a held call may still wait: until `LAST_RESORT_S` before the timeout (the
        escalation's deadline passes first, so its fallback is what the agent gets)."""
        return max(self.remaining() - LAST_RESORT_S, 0.5)

    def __repr__(self) -> str:
        return f"Budget(total_s={self.total_s:g}, remaining={self.remaining():.1f})"
