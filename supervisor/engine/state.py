"""The engine's whole mutable state, as JSON-able values, bounded by the policy's window.

Everything lives in plain dicts, lists and deques of dicts so `snapshot()` is a shallow walk and
`restore()` rebuilds an identical state (dict insertion order included, which keeps iteration,
and therefore every later verdict, the same).
"""

from collections import deque
from typing import Any

SNAPSHOT_VERSION = 1

_DEQUES = {"hist": "lookback", "outs": "window", "keys": "lookback", "texts": "text_lookback"}
"""Deque fields and the policy size that bounds each."""


class State:
    """Counters, step history and detector memories of one session."""

    def __init__(self, window: int, lookback: int, text_lookback: int) -> None:
        self.sizes = {"window": window, "lookback": lookback, "text_lookback": text_lookback}
        self.step_count = 0
        """Tool calls seen so far (the next call's 0-based step index)."""
        self.hist: deque[dict[str, Any]] = deque(maxlen=lookback)
        """Completed steps in completion order, the detectors' look-back."""
        self.outs: deque[str] = deque(maxlen=window)
        """Output hashes of the completed steps in the window (what counts as seen before)."""
        self.keys: deque[str] = deque(maxlen=lookback)
        """Cycle keys (call, outcome, workspace) of completed steps."""
        self.texts: deque[list[str]] = deque(maxlen=text_lookback)
        """Chunk hashes of recent assistant messages."""
        self.pending: dict[str, dict[str, Any]] = {}
        """Steps whose result has not arrived (call_id -> step), oldest first."""
        self.last_checked: str | None = None
        self.ws = 0
        """Workspace (and context) version: bumped by a successful mutating call, a changed
        checkpoint tree, a rollback, a user message or a task boundary."""
        self.level = 0
        self.fresh_cycle = False
        """A new conversation cycle started and no tool call or finding came since."""
        self.progress_streak = 0
        self.seen_out: dict[str, int] = {}
        """Output hashes of completed steps in the window, with their counts."""
        self.counters: dict[str, float] = {
            "iterations": 0, "errors": 0, "consecutive": 0, "cycle": 0, "task": 0,
            "resets": 0, "tokens": 0, "cost_usd": 0.0,
        }
        self.start_ts: float | None = None
        self.last_ts: float | None = None
        self.baselines: dict[str, float] = {}
        """Per-limit offsets granted by operator approvals of a limit escalation."""
        self.limits_hit: dict[str, bool] = {}
        self.approvals: dict[str, int] = {}
        self.escalation: dict[str, Any] | None = None
        self.escalated_at: dict[str, float] = {}
        self.cycle: dict[str, Any] | None = None
        self.cycle_runs: dict[str, int] = {}
        self.similar_flags: list[dict[str, Any]] = []
        self.same_error: dict[str, Any] | None = None
        self.error_rate: dict[str, int] = {"fired": 0, "cooldown": 0}
        self.no_progress = 0
        self.no_progress_fired = 0
        self.text_streak: list[int] = []
        self.empty_replies: list[int] = []
        """Seqs of empty assistant messages since the last tool call or real message."""
        self.text_mark = ""
        """Workspace version and new-output count when the text streak started."""
        self.novel_count = 0
        """Completed steps whose output had not been seen before (ever growing)."""
        self.polls: dict[str, dict[str, Any]] = {}
        self.cache: dict[str, dict[str, Any]] = {}
        """File cache: read-call signature -> {path, output, step, seq, bytes}."""
        self.cache_bytes = 0
        self.last_commit: str | None = None
        self.read_first: list[str] = []
        """Paths whose edit failed because the tool wants them read first."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in vars(self).items():
            out[name] = list(value) if isinstance(value, deque) else value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "State":
        sizes = d["sizes"]
        state = cls(sizes["window"], sizes["lookback"], sizes["text_lookback"])
        for name, value in d.items():
            if name in _DEQUES:
                getattr(state, name).extend(value)
            elif hasattr(state, name):
                setattr(state, name, value)
        return state
