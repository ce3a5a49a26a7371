"""The guard core: one session's steps, decisions, escalations and checkpoints.

`Guard` is used two ways with the same code:

- in-process (the SDK, `supervisor.guard.sdk`): one `Guard` object lives as long as the agent's
  session and keeps its state in memory, saving `state.json` now and then (always after a
  decision, an escalation or the end);
- one step per process (the Claude Code hook): each process opens the guard, applies one step
  and closes it, which saves the state:

      with Guard.open(root, session_id, cwd=cwd) as guard:   # takes the session lock
          if not guard.started:
              guard.start(agent="claude-code", task=None, heartbeat_s=None)
          verdict = guard.pre_call("Bash", {"command": "pytest"}, call_id="toolu_1")
          if verdict.action == "pause":                      # escalated: wait for the operator
              verdict = guard.wait(timeout=550, heartbeat_s=5)
          print(verdict.action, verdict.message)

Every public method takes the session lock (re-entrant), reloads the state if another process
saved it meanwhile, applies the step, writes the protocol events with `supervisor.store.writer`
(plain dicts; no pydantic on this path) and saves the state atomically when it must. Its cost
per step stays flat as the session grows: the engine keeps a bounded window, operator decisions
are read from a persisted byte offset (one `os.stat` when there is nothing new), and the event
log is only ever appended to.

Operator commands (`control.jsonl`) are consumed at each `pre_call`, `poll` and `wait`: the first
valid decision for the pending escalation is applied exactly once (`decision_applied`); every
other decision gets `decision_ignored` with the reason. Commands not tied to an escalation
(pause, guidance, rollback, reset, abort, skip) take effect at the next tool call.

`Guard` itself is the facade of three parts (docs/guard.md, "Inside the guard"): the
`SessionJournal` (`journal.py`: lock, state, engine, events, tasks, escalations, checkpoints),
the `CallGate` (`gate.py`: the tool call path) and the `OperatorDesk` (`desk.py`: operators'
decisions). Each public method opens one journal step and hands the work to one of them.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervisor.engine import Engine
from supervisor.engine.types import LimitGauge
from supervisor.guard import loop_cost, plans
from supervisor.guard.checkpoints import CheckpointCommit, CheckpointStore
from supervisor.guard.desk import ROLLBACK_ATTEMPTS, OperatorDesk
from supervisor.guard.gate import CallGate
from supervisor.guard.journal import PolicyArg, SessionJournal
from supervisor.guard.memory import SessionMemory
from supervisor.guard.settings import GuardSettings
from supervisor.guard.spend import UNITS, WARN_AT
from supervisor.guard.state import GuardState
from supervisor.guard.verdict import Verdict, _merge, pause_verdict
from supervisor.protocol.bounded import escape_text, writable
from supervisor.protocol.decisions import holding

__all__ = ["ROLLBACK_ATTEMPTS", "Guard", "Verdict"]


class Guard:
    """One session's guard. Build with `Guard.open`; close (or use as a context manager)."""

    def __init__(
        self,
        root: Path,
        session_id: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        policy: PolicyArg = None,
        settings: GuardSettings | None = None,
        save_every_s: float = 0.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Prefer `Guard.open`. `save_every_s`: 0 saves the state after every step (one step
        per process); the SDK passes a positive interval and relies on `close`."""
        self.journal = SessionJournal(root, session_id, cwd=cwd, policy=policy,
                                      settings=settings, save_every_s=save_every_s, clock=clock)
        self.desk = OperatorDesk(self.journal)
        self.gate = CallGate(self.journal, self.desk)
        self.root = self.journal.root
        self.session_id = session_id
        self.files = self.journal.files
        self.dir = self.journal.dir
        self.clock = clock

    @classmethod
    def open(cls, root: Path, session_id: str, **kwargs: Any) -> Guard:
        return cls(root, session_id, **kwargs)

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- properties ----------------------------------------------------------------------

    @property
    def state(self) -> GuardState:
        """The session's state as of the last step (replaced when another process saved)."""
        return self.journal.state

    @property
    def engine(self) -> Engine:
        return self.journal.engine

    @property
    def settings(self) -> GuardSettings:
        return self.journal.settings

    @property
    def started(self) -> bool:
        return bool(self.state.started)

    @property
    def ended(self) -> str | None:
        """The session's end status, or None while it runs."""
        return self.journal.ended

    @property
    def pending(self) -> dict[str, Any] | None:
        """The pending escalation (its event fields plus guard bookkeeping), or None."""
        return self.journal.pending

    @property
    def cwd(self) -> str | None:
        return self.journal.cwd

    @property
    def checkpoints(self) -> CheckpointStore | None:
        """The session's checkpoint store, or None when checkpoints are off or there is no
        working directory."""
        return self.journal.checkpoints

    def saving_later(self) -> contextlib.AbstractContextManager[None]:
        """Records made inside save no state; the next step or `close` does, once
        (`SessionJournal.saving_later`)."""
        return self.journal.saving_later()

    # -- session lifecycle ---------------------------------------------------------------

    def start(
        self, agent: str, task: str | None = None, *, pid: int | None = None,
        heartbeat_s: float | None = None, extra: dict[str, Any] | None = None,
    ) -> None:
        """Write `session_start` (and `task_start` for `task`), take the first checkpoint."""
        agent, task, extra = writable(agent), writable(task), writable(extra)
        with self.journal.step():
            self.journal.start(agent, task, pid, heartbeat_s, extra)

    def end(self, status: str = "completed", reason: str | None = None) -> None:
        """Write `session_end` once (later calls do nothing)."""
        with self.journal.step():
            self.journal.end(status, reason)

    def close(self) -> None:
        """Save the state and release files. The session itself stays open (see `end`)."""
        self.journal.close()

    # -- steps -----------------------------------------------------------------------------

    def pre_call(
        self, tool: str, args: dict[str, Any] | None = None, *, call_id: str | None = None,
        batch: str | None = None,
    ) -> Verdict:
        """Record a tool call and decide on it, after applying any pending operator commands.
        `batch`: calls issued together in one model turn share it (they count as one decision
        when the engine counts repeats).

        Returns `pause` when the call escalated (or an escalation is still pending): the caller
        then waits with `wait()`. Text that cannot be encoded (lone surrogates, from file names
        that are not UTF-8) is kept as escapes, NaN as text: never an error (`writable`)."""
        tool, args, call_id = writable(tool), writable(args), writable(call_id)
        with self.journal.step():
            return self.gate.settle(self.gate.pre_call(tool, args, call_id, batch))

    def post_call(
        self, call_id: str, output: str = "", *, ok: bool = True, error: str | None = None,
        duration_ms: float | None = None, tool: str | None = None, unknown: bool = False,
        verdict_known: bool = True,
    ) -> list[dict[str, Any]]:
        """Record a tool's outcome; returns the detections it caused (as events). `unknown`:
        the agent reports no outcome for this call (it ran; `outcome: "unknown"` says so).
        `verdict_known=False`: the agent did not have our verdict on the call before it ended
        (a call judged after the fact, or one the agent refused itself), so a result is never
        disobedience of a refusal of ours."""
        text = escape_text(output if isinstance(output, str) else str(output))
        call_id, error, tool = writable(call_id), writable(error), writable(tool)
        duration_ms = duration_ms if duration_ms is None or math.isfinite(duration_ms) else None
        with self.journal.step():
            return self.gate.post_call(call_id, text, ok, error, duration_ms, tool, unknown,
                                       verdict_known)

    def message(
        self, role: str, text: str, *, extra: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Record a message of the conversation (`assistant`, `user` or `system`); `extra`
        adds fields of the agent's own (e.g. its turn id)."""
        text, extra = escape_text(text), writable(extra)
        with self.journal.step():
            return self.journal.observe({**(extra or {}), "type": "message", "role": role,
                                         "text": text})

    def usage(
        self, input_tokens: int, output_tokens: int, cost_usd: float | None = None, *,
        cache_read_tokens: int | None = None, cache_write_tokens: int | None = None,
        model: str | None = None, answer: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> list[dict[str, Any]]:
        """Record token usage (and cost; None: unknown) of one model call. `input_tokens` are
        those not read from the provider's cache; cache reads and writes are apart. `answer`
        is the agent's id of the answer (the usages of one answer read in parts share it, and
        a call is charged all of them: `protocol.charge`)."""
        event: dict[str, Any] = {**(writable(extra) or {}), "type": "usage",
                                 "input_tokens": int(input_tokens),
                                 "output_tokens": int(output_tokens), "cost_usd": cost_usd}
        if cache_read_tokens is not None:
            event["cache_read_tokens"] = int(cache_read_tokens)
        if cache_write_tokens is not None:
            event["cache_write_tokens"] = int(cache_write_tokens)
        if model is not None:
            event["model"] = writable(model)
        if answer is not None:
            event["answer"] = writable(answer)
        with self.journal.step():
            found = self.journal.observe(event)
            loop_cost.record(self.state, self.state.last_seq,
                             int(input_tokens) + int(output_tokens), cost_usd,
                             event.get("answer"))
            spending = self.journal.spending
            if spending is not None and not self.journal.ended:
                now = self.journal.clock()
                for rule, spent, limit in spending.add(
                        self.state.last_seq, int(input_tokens) + int(output_tokens), cost_usd,
                        now):
                    self.journal.limit_warning(f"budget:{rule.name}", spent, limit, rule.unit)
            if not self.journal.ended:
                self._warn_session_limits()
            return found

    def _warn_session_limits(self) -> None:
        """Notify once a session when its `tokens` or `cost_usd` limit reaches `WARN_AT` of
        its cap (as a daily budget's `warn_at`), before the limit itself holds a call."""
        warned = self.state.limits_warned or []
        unwarned = [name for name in UNITS if name not in warned]
        if not unwarned:
            return
        for gauge in self.engine.gauges(self.journal.clock(), only=unwarned):
            if gauge.limit and gauge.value >= WARN_AT * gauge.limit:
                warned = [*warned, gauge.name]
                self.state.limits_warned = warned
                self.journal.must_save = True
                self.journal.limit_warning(gauge.name, gauge.value, gauge.limit, gauge.name)

    def task_start(self, title: str, task_id: str | None = None) -> str:
        """Start a task (ending the current one as done); return its id."""
        title, task_id = writable(title), writable(task_id)
        with self.journal.step():
            if self.state.task is not None:
                self.journal.task_end("done")
            return self.journal.task_start(title, task_id)

    def task_end(self, status: str = "done") -> None:
        with self.journal.step():
            if self.state.task is not None:
                self.journal.task_end(status)

    def next_task(self) -> str | None:
        """The operator's plan (a `split`, docs/plans.md): end the current sub-task as done and
        start the next; returns its instruction for the agent, or None when the plan is
        finished (or there is none, or the session has ended)."""
        with self.journal.step():
            if self.ended or self.pending is not None:  # waiting for an operator: not now
                return None
            text = plans.advance(self.journal)
            if self.state.plan is not None:  # (a plan's steps are not redone from the log)
                self.journal.must_save = True
            return text

    @property
    def plan(self) -> dict[str, Any] | None:
        """The session's plan (its steps and their status), or None when there has been none."""
        return self.state.plan

    def recall(self) -> str | None:
        """The pitfalls of this project's failure memory to offer the agent at its start
        (docs/memory.md), recorded as a `memory` event; None when there are none or memory
        is off."""
        with self.journal.step():
            return SessionMemory(self.journal).at_start()

    def new_cycle(self) -> None:
        """A new conversation cycle (a new user prompt): per-cycle counters start over."""
        with self.journal.step():
            self.engine.new_cycle()

    def checkpoint(self, label: str) -> CheckpointCommit | None:
        """Take a checkpoint now; returns it (None when checkpoints are off)."""
        with self.journal.step():
            return self.journal.checkpoint(label)

    def checkpoint_ahead(self) -> CheckpointCommit | None:
        """Take the checkpoint the next tool call is due before it runs, now, between calls
        (`gate.CallGate.checkpoint_ahead`); None when none is due."""
        with self.journal.step():
            return self.gate.checkpoint_ahead()

    def heartbeat(self) -> None:
        """Write a `heartbeat` (nothing else changes)."""
        with self.journal.step():
            self.journal.write({"type": "heartbeat"})

    def gauges(self) -> list[LimitGauge]:
        """Every hard limit's current value (the engine's gauges)."""
        with self.journal.step():
            return list(self.engine.gauges(self.clock()))

    def poll(self) -> list[Verdict]:
        """Apply operator decisions that arrived (cheap when none did) and the deadline of a
        pending escalation. Returns what the agent must be told, if anything."""
        with self.journal.step():
            return self.desk.consume(self.clock(), None)

    def wait(
        self, timeout: float | None = None, *, escalation_id: str | None = None,
        heartbeat_s: float | None = None, stop: Callable[[], bool] | None = None,
    ) -> Verdict:
        """Wait for an escalation (`escalation_id`, default: the pending one) to be decided or
        to reach its deadline; return the resulting verdict. Whichever process of the session
        applies the decision, every waiter gets its verdict. Writes a `heartbeat` every
        `heartbeat_s` while waiting (None: the caller writes its own). After `timeout`
        seconds (or when `stop()` is true) returns `pause` if still undecided."""
        verdict = self._wait(timeout, escalation_id, heartbeat_s, stop)
        with self.journal.step():  # the held call may run now, or stays refused
            return self.gate.settle(verdict, answer=True)

    def _wait(self, timeout: float | None, escalation_id: str | None,
              heartbeat_s: float | None, stop: Callable[[], bool] | None) -> Verdict:
        from supervisor.guard.waiting import ChangeWaiter

        waiter = ChangeWaiter(self.files.control)
        started = time.monotonic()
        last_beat = started
        held: list[Verdict] = []
        waited = escalation_id
        try:
            while True:
                with self.journal.step():
                    if waited is None and self.pending is not None:
                        waited = self.pending["escalation_id"]
                    notes = self.desk.consume(self.clock(), None)
                    held += [n for n in notes if n.escalation_id != waited or waited is None]
                    pending = self.pending
                    if pending is None or pending["escalation_id"] != waited:
                        return _merge(held, self.desk.resolution(waited))
                    call_id = pending.get("call_id")
                    deadline = pending.get("deadline_ts")
                if stop is not None and stop():
                    return pause_verdict(self.pending, call_id)
                mono = time.monotonic()
                if timeout is not None and mono - started >= timeout:
                    return pause_verdict(self.pending, call_id)
                if heartbeat_s and mono - last_beat >= heartbeat_s:
                    self.heartbeat()
                    last_beat = mono
                budget = 0.5
                if deadline is not None:
                    budget = min(budget, max(0.0, deadline - self.clock()) + 0.01)
                if heartbeat_s:
                    budget = min(budget, max(0.01, heartbeat_s - (mono - last_beat)))
                if timeout is not None:
                    budget = min(budget, max(0.01, timeout - (mono - started)))
                waiter.wait(budget)
        finally:
            waiter.close()

    def pause(self, reason: str = "paused by the agent's own request") -> None:
        """Hold the agent now, in an escalation of the registry's holding kind (`pause`), as
        the operator's `pause` command does."""
        with self.journal.step():
            if self.pending is None and not self.ended:
                self.desk.hold(holding().name, reason, None)

    # -- engine and policy ---------------------------------------------------------------

    def engine_policy_dict(self) -> dict[str, Any] | None:
        return self.journal.engine_policy_dict()
