"""The engine's whole mutable state, as JSON-able values, bounded by the policy's window.

Everything lives in plain dicts, lists and deques of dicts so `snapshot()` is a shallow walk and
`restore()` rebuilds an identical state (dict insertion order included, which keeps iteration,
and therefore every later verdict, the same). What each detector remembers is its own named
part, `memory[<detector name>]`.
"""

from collections import deque
from typing import Any

from supervisor.engine import workspace
from supervisor.engine.step import StepRecord

SNAPSHOT_VERSION = 2

_DEQUES = {"hist": "lookback", "outs": "window"}
"""Deque fields and the size that bounds each."""


class State:
    """Counters, step history and detector memories of one session."""

    def __init__(self, window: int, lookback: int, file_cache_bytes: int = 262_144) -> None:
        self.sizes = {"window": window, "lookback": lookback,
                      "file_cache_bytes": file_cache_bytes}
        self.step_count = 0
        """Tool calls seen so far (the next call's 0-based step index)."""
        self.hist: deque[StepRecord] = deque(maxlen=lookback)
        """Completed steps in completion order, the detectors' look-back."""
        self.outs: deque[str] = deque(maxlen=window)
        """Output hashes of the completed steps in the window (what counts as seen before)."""
        self.pending: dict[str, StepRecord] = {}
        """Steps whose result has not arrived (call_id -> step), oldest first."""
        self.last_checked: str | None = None
        self.workspace: dict[str, Any] = workspace.new_memory()
        """What the files hold (see `workspace.py`)."""
        self.ws = workspace.version(self.workspace)
        """The workspace version: derived from the content of every file the session
        touched, plus an epoch moved by what nobody can see into (a changed checkpoint tree,
        a rollback, a user message, a task boundary, an unknown mutating command)."""
        self.level = 0
        self.fresh_cycle = False
        """A new conversation cycle started and no tool call or finding came since."""
        self.progress_streak = 0
        self.seen_out: dict[str, int] = {}
        """Output hashes of completed steps in the window, with their counts."""
        self.novel_count = 0
        """Completed steps whose output had not been seen before (ever growing)."""
        self.counters: dict[str, float] = {
            "iterations": 0, "errors": 0, "consecutive": 0, "cycle": 0, "task": 0,
            "resets": 0, "tokens": 0, "cost_usd": 0.0,
        }
        self.start_ts: float | None = None
        self.last_ts: float | None = None
        self.work_s = 0.0
        """The agent's working time so far (what `duration_s` counts; see `Engine._touch`)."""
        self.waiting: str | None = None
        """Whom the agent waits for since its last event: `user` (its turn ended) or
        `operator` (an escalation or a pause is held); None while it works."""
        self.baselines: dict[str, float] = {}
        """Per-limit offsets: a limit's episode starts again from its value when answered."""
        self.limits_hit: dict[str, bool] = {}
        self.approvals: dict[str, int] = {}
        self.escalation: dict[str, Any] | None = None
        self.escalated_at: dict[str, float] = {}
        self.last_commit: str | None = None
        self.read_first: list[str] = []
        """Paths whose edit failed because the tool wants them read first."""
        self.memory: dict[str, dict[str, Any]] = {}
        """Each detector's own memory, by detector name (see `detectors.base`)."""
        self.prompt = ""
        """The person's latest prompt as `asked.prompt_text` keeps it (what it asks to run)."""
        self.asked: list[str] = []
        """The shell lines of the prompt already run (each is asked for once)."""
        self.quiet: list[dict[str, Any]] = []
        """Operators' quiets in force: `detector`, `signature` (None: all of its findings),
        `until` (the first step index no longer quiet; None: until the session ends)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in vars(self).items():
            out[name] = list(value) if isinstance(value, deque) else value
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "State":
        sizes = d["sizes"]
        state = cls(sizes["window"], sizes["lookback"], sizes["file_cache_bytes"])
        for name, value in d.items():
            if name in _DEQUES:
                getattr(state, name).extend(value)
            elif hasattr(state, name):
                setattr(state, name, value)
        return state
