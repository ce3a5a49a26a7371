"""The protocol every detector implements, and what it may read of the engine.

A detector is one module under `supervisor/engine/detectors/` holding one `Detector` subclass:
its name, a one-line summary (the docs table and `supervisor policy show` print it), its
policy defaults, and its memory: a named, JSON-serialisable dict in `State.memory[name]`, which
the engine snapshots with everything else. The engine calls it at fixed points:

- `record(st, step, mem)`: every completed step, whatever the policy says (for memories that
  must see the whole stream, such as the cycle detector's keys);
- `observe(st, step, mem, p)`: a completed step, when the detector is enabled for its tool;
  may return a `Finding` (level 1 nudge, 3 escalation; 4 stop);
- `refuse(st, step, mem, p)`: before a call runs; a `Finding` of level 2 or more refuses it
  (2 block, 3 escalate, 4 stop), level 0 with action `skip` hands back `cached_output`;
- `undo(step, mem)`: a call it refused ran anyway (a replay): its result counts, not its block;
- `clear(mem)`: an operator decision or a new context lifts the blocks it holds;
- `new_context(mem)`: a user message, a task boundary: what counted towards a loop restarts;
- `message(st, event, mem, p)`: an assistant message (for detectors of repeated text);
- `workspace_changed(mem, path)`: a file (or, with None, anything) may have changed.

Detectors read the `State` (the completed steps in `st.hist`, the pending ones in
`st.pending`, the workspace version `st.ws`) and never change anything but their own memory.
Every method must cost O(look-back), never O(session).
"""

from collections.abc import Iterator, Mapping
from itertools import islice
from typing import Any, ClassVar, Generic, TypeVar

from supervisor.engine.state import State
from supervisor.engine.step import StepRecord
from supervisor.engine.types import ACTION_BY_LEVEL, Finding

Params = Mapping[str, Any]
"""A detector's policy parameters for one tool (defaults < category < per-tool overrides): at
run time a plain dict, read from and written to the policy file as it is; each detector names
its keys and their types in a TypedDict (`ExactRepeatParams`, ...)."""
P = TypeVar("P", bound=Params)
Memory = dict[str, Any]


class Detector(Generic[P]):
    """Base class: every hook does nothing; a detector overrides what it needs. `P` is the
    TypedDict of its parameters."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    """One line: when it fires (for the docs table and `supervisor policy show`)."""
    defaults: ClassVar[Params] = {
        "enabled": True,
    }
    """Its policy parameters and their defaults (documented in docs/policy.md): a `P`."""
    loop: ClassVar[bool] = True
    """It detects loops (`supervisor analyze` counts its evidence as loop steps)."""
    skips: ClassVar[bool] = False
    """Its refusals are skips with cached content: they come before an operator's approval of
    repeats is spent (an approval allows repeats; it does not force a re-read)."""

    def memory(self) -> Memory:
        """A fresh memory (JSON values only)."""
        return {}

    def record(self, st: State, step: StepRecord, mem: Memory) -> None:
        return None

    def observe(self, st: State, step: StepRecord, mem: Memory, p: P) -> Finding | None:
        return None

    def refuse(self, st: State, step: StepRecord, mem: Memory, p: P) -> Finding | None:
        return None

    def undo(self, step: StepRecord, mem: Memory) -> None:
        return None

    def clear(self, mem: Memory) -> None:
        return None

    def new_context(self, mem: Memory) -> None:
        return None

    def message(self, st: State, event: dict[str, Any], mem: Memory, p: P
                ) -> Finding | None:
        return None

    def workspace_changed(self, mem: Memory, path: str | None) -> None:
        return None


def finding(detector: str, level: int, signature: str, evidence: list[int], message: str,
            step: int, action: str | None = None) -> Finding:
    """A finding with at most the last 20 evidence seqs; the action follows the level."""
    return Finding(detector, level, signature, evidence[-20:], message,
                   action or ACTION_BY_LEVEL[level], step)  # type: ignore[arg-type]


def batches(steps: list[StepRecord]) -> int:
    """How many decisions the steps were: a batch of parallel calls (issued in one model turn,
    none seeing another's result) is one."""
    return len({s["batch"] or f"step:{s['index']}" for s in steps})


def recent(st: State, n: int) -> Iterator[StepRecord]:
    """The last `n` completed steps, newest first."""
    return islice(reversed(st.hist), n)
