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
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supervisor.engine.decisions import Effect, effect_of
from supervisor.engine.detectors import NAMES as DETECTOR_NAMES
from supervisor.engine.edit_hint import HINT_CHARS, with_hint
from supervisor.engine.fingerprint import output_hash
from supervisor.engine.recovery import region_room
from supervisor.guard import control, disk, plans, recovery, store_protect
from supervisor.guard.announce import announce
from supervisor.guard.checkpoints import (
    CheckpointError,
    CheckpointStore,
    RestoreInterrupted,
    RestoreResult,
    WorkTreeTooBig,
    checkpoint_changes,
)
from supervisor.guard.edit_guidance import EditGuidance
from supervisor.guard.settings import GuardSettings
from supervisor.guard.state import SessionLock, StateFile
from supervisor.protocol.bounded import escape_text, writable
from supervisor.protocol.decisions import ESCALATION_OPTIONS, KINDS, Context, Ignored, Result
from supervisor.protocol.names import HINT
from supervisor.protocol.policy_audit import switched_off
from supervisor.store import provenance, waits
from supervisor.store.liveness import THIS_HOST
from supervisor.store.paths import ensure_session_dir, session_files
from supervisor.store.writer import LineWriter

OUTPUT_KEEP = 8 * 1024
"""Characters of a tool's output kept in its `tool_result` event (the hash covers all of it)."""
_CALLS_KEPT = 64
CHECKPOINT_SHARE = 0.4
ROLLBACK_ATTEMPTS = 3
"""A rollback whose git is killed at the deadline is continued at the next tool calls, each
with a share of its own budget (`CHECKPOINT_SHARE`), at most this many attempts in all: a tree
too big to restore in time holds up three calls, never every later one."""
"""In a hook call, a checkpoint may use at most this share of the time left: the escalation
it is taken for must still be recorded and held (a broad work tree used to take it all)."""
_RESOLUTIONS_KEPT = 16
_SEVERITY = {"allow": 0, "nudge": 1, "skip": 2, "block": 3, "pause": 4, "stop": 5}


@dataclass(slots=True)
class Verdict:
    """What the agent must do with a tool call, and what it must be told.

    `action`: `allow` (run it), `nudge` (run it, show `message`), `skip` (do not run it; use
    `cached_output` if given, else move on), `block` (do not run it; re-plan with `message`),
    `pause` (only from `Guard.pre_call`: an escalation is pending, call `Guard.wait`), `stop`
    (the session is over). `decision` names the operator's decision that produced it, if any."""

    action: str
    level: int = 0
    message: str | None = None
    reason: str | None = None
    call_id: str | None = None
    escalation_id: str | None = None
    decision: str | None = None
    cached_output: str | None = None
    changed_files: list[str] = field(default_factory=list)

    @property
    def proceed(self) -> bool:
        """True when the call should run (`allow` or `nudge`)."""
        return self.action in ("allow", "nudge")


class Guard:
    """One session's guard. Build with `Guard.open`; close (or use as a context manager)."""

    def __init__(
        self,
        root: Path,
        session_id: str,
        *,
        cwd: str | os.PathLike[str] | None = None,
        policy: Any = None,
        settings: GuardSettings | None = None,
        save_every_s: float = 0.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Prefer `Guard.open`. `save_every_s`: 0 saves the state after every step (one step
        per process); the SDK passes a positive interval and relies on `close`."""
        self.root = Path(root)
        self.session_id = session_id
        self.files = session_files(self.root, session_id)
        self.dir = ensure_session_dir(self.root, session_id)
        self.clock = clock
        self.save_every_s = save_every_s
        self._lock = SessionLock(self.dir)
        self._state_file = StateFile(self.dir)
        self._events = LineWriter(self.files.events, clock=clock)
        self._control_path = self.files.control
        self._policy_arg = policy
        self._settings_arg = settings
        self._cwd_arg = str(Path(cwd).resolve()) if cwd is not None else None
        self._dirty = False
        self._must_save = False
        self._abandoned = False
        self._last_save = 0.0
        self.state: dict[str, Any] = {}
        self.engine: Any = None
        self.settings = settings or GuardSettings()
        self._checkpoints: CheckpointStore | None = None
        with self._lock.held():
            self._load()

    @classmethod
    def open(cls, root: Path, session_id: str, **kwargs: Any) -> Guard:
        return cls(root, session_id, **kwargs)

    def __enter__(self) -> Guard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- properties ----------------------------------------------------------------------

    @property
    def started(self) -> bool:
        return bool(self.state.get("started"))

    @property
    def ended(self) -> str | None:
        """The session's end status, or None while it runs."""
        return self.state.get("ended")

    @property
    def pending(self) -> dict[str, Any] | None:
        """The pending escalation (its event fields plus guard bookkeeping), or None."""
        return self.state.get("pending")

    @property
    def cwd(self) -> str | None:
        return self.state["meta"].get("cwd")

    @property
    def checkpoints(self) -> CheckpointStore | None:
        """The session's checkpoint store, or None when checkpoints are off or there is no
        working directory."""
        if self.state["meta"].get("checkpoints_off"):
            return None  # the work tree is too big or too broad (said once, when found)
        if self._checkpoints is None and self.settings.checkpoints and self.cwd:
            self._checkpoints = CheckpointStore(
                self.files.checkpoints, Path(self.cwd),
                max_file_bytes=self.settings.checkpoint_max_file_bytes,
                exclude_paths=[self.root],
            )
        return self._checkpoints

    # -- session lifecycle ---------------------------------------------------------------

    def start(
        self, agent: str, task: str | None = None, *, pid: int | None = None,
        heartbeat_s: float | None = None, extra: dict[str, Any] | None = None,
    ) -> None:
        """Write `session_start` (and `task_start` for `task`), take the first checkpoint."""
        agent, task, extra = writable(agent), writable(task), writable(extra)
        with self._step():
            if self.state["started"]:
                return
            self.state["started"] = True
            self.state["meta"].update(agent=agent, heartbeat_s=heartbeat_s)
            event = {
                "type": "session_start", "agent": agent, "task": task, "cwd": self.cwd,
                "pid": pid, "policy": self.engine_policy_dict(), "heartbeat_s": heartbeat_s,
                "guard": self.settings.to_dict(), **(extra or {}),
            }
            if pid is not None:  # where the pid means something (see store.liveness)
                event.setdefault("host", THIS_HOST)
            self._record(event)
            for warning in switched_off(event["policy"]):  # shown with the session
                self._write({"type": "message", "role": "system",
                             "text": f"warning: this session's policy leaves the agent "
                                     f"unsupervised: {warning}"})
            if task:
                self._task_start(task, None)
            if self.settings.checkpoint_at_start:
                self._checkpoint("session start")
            self._must_save = True

    def end(self, status: str = "completed", reason: str | None = None) -> None:
        """Write `session_end` once (later calls do nothing)."""
        with self._step():
            self._end(status, reason)

    def close(self) -> None:
        """Save the state and release files. The session itself stays open (see `end`)."""
        if self._events is None:
            return
        with self._lock.held():
            if self._dirty:
                self._save()
        self._events.close()
        self._lock.close()
        self._events = None  # type: ignore[assignment]

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
        with self._step():
            now = self.clock()
            call_id = call_id or f"c{self.state['actions'] + 1}"
            if self.ended:
                return self._stopped(call_id)
            unfinished = self.state.get("rollback_retry")  # from an earlier call
            notes = self._consume(now, call_id)
            if self.ended:
                return _merge(notes, self._stopped(call_id))
            if self.pending is not None:
                return _merge(notes, self._pause_verdict(call_id))
            self.state["actions"] += 1
            if unfinished and self.state.get("rollback_retry") is unfinished:
                notes.append(self._continue_rollback(call_id))
            early = [n for n in notes if not n.proceed]
            if early:
                # An operator command refuses this call (rollback, skip): recorded as refused,
                # counted by the engine as an attempt, not checked.
                verdict = _merge(notes, early[0])
                self._record({"type": "tool_call", "call_id": call_id, "tool": tool,
                              "args": args or {}, "refused_by": "operator"})
                self._write(_verdict_event(verdict, call_id))
                return verdict
            protected = store_protect.refusal(tool, args or {}, self.root, self.cwd,
                                              self.engine.policy)
            if protected is not None:  # the agent would change the supervisor's own files
                verdict = _merge(notes, Verdict("block", self.engine.level,
                                                f"Refused by the supervisor: {protected}.",
                                                "store_protected", call_id))
                self._record({"type": "tool_call", "call_id": call_id, "tool": tool,
                              "args": args or {}, "refused_by": "supervisor"})
                self._write(_verdict_event(verdict, call_id))
                return verdict
            self.state["since_checkpoint"] += 1
            every = self.settings.checkpoint_every
            if every and self.state["since_checkpoint"] >= every:
                self._checkpoint(f"auto: every {every} actions")
            call = self._write({"type": "tool_call", "call_id": call_id, "tool": tool,
                                "args": args or {}, **self._on_disk(tool, args or {}, batch)})
            calls = self.state["calls"]
            calls[call_id] = call["seq"]
            if len(calls) > _CALLS_KEPT:
                del calls[next(iter(calls))]
            edits = self._edit_guidance()
            edits.on_call(call_id, call["seq"], tool, args or {})
            check = self.engine.check(call, call["ts"])
            verdict = _merge(notes, Verdict(check.action, check.level, check.message,
                                            check.reason, call_id,
                                            cached_output=check.cached_output))
            if verdict.action == "block":  # a refused edit: where its text really is
                verdict.message = with_hint(verdict.message,
                                            edits.refused_edit_hint(tool, args or {}))
            elif verdict.proceed:  # an edit that will fail: where its text is, with the call
                hint = edits.before_run_hint(call_id)
                if hint:
                    verdict.message = with_hint(verdict.message, hint)
                    verdict.action = "nudge"  # run it, and tell the agent
            events = [f.to_event() for f in check.findings]
            events += [hit.to_event() for hit in check.limits]
            events.append(_verdict_event(verdict, call_id, self.engine.gauges(now)))
            self._write_many(events)
            if check.action == "pause":
                esc = check.escalation
                kind = esc.kind if esc is not None else "detection"
                reason = esc.reason if esc is not None else (check.reason or "escalated")
                evidence = list(esc.evidence) if esc is not None else [call["seq"]]
                signature = (esc.signature if esc is not None else None) or check.signature
                self._escalate(kind, reason, evidence, call_id, signature, check.level)
                return self._pause_verdict(call_id)
            if check.action == "stop":
                self._end("terminated", check.reason or "a hard limit was reached")
            return verdict

    def post_call(
        self, call_id: str, output: str = "", *, ok: bool = True, error: str | None = None,
        duration_ms: float | None = None, tool: str | None = None, unknown: bool = False,
    ) -> list[dict[str, Any]]:
        """Record a tool's outcome; returns the detections it caused (as events). `unknown`:
        the agent reports no outcome for this call (it ran; `outcome: "unknown"` says so)."""
        text = escape_text(output if isinstance(output, str) else str(output))
        call_id, error, tool = writable(call_id), writable(error), writable(tool)
        duration_ms = duration_ms if duration_ms is None or math.isfinite(duration_ms) else None
        with self._step():
            event = {
                "type": "tool_result", "call_id": call_id, "ok": bool(ok),
                "output": text[:OUTPUT_KEEP], "output_bytes": len(text.encode("utf-8",
                                                                              "replace")),
                "output_hash": output_hash(text), "error": error, "duration_ms": duration_ms,
            }
            if tool is not None:
                event["tool"] = tool
            if unknown:
                event["outcome"] = "unknown"
            written = self.engine.touched_paths(call_id)
            if written:  # what the files it may have written hold now (see guard.disk)
                event["files"] = disk.digests(written, self.cwd)
            self.state["calls"].pop(call_id, None)
            detections = self._observe(event)
            # told with a recovery turn, the file region fits in what the turn leaves
            room = region_room((d.get("message") for d in detections), HINT_CHARS)
            hint = self._edit_guidance().on_result(call_id, bool(ok), text, error, room)
            if hint:
                detections.append(self._write({"type": HINT, "call_id": call_id,
                                               "kind": "failed_edit", "message": hint}))
            return detections

    def message(
        self, role: str, text: str, *, extra: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Record a message of the conversation (`assistant`, `user` or `system`); `extra`
        adds fields of the agent's own (e.g. its turn id)."""
        text, extra = escape_text(text), writable(extra)
        with self._step():
            return self._observe({**(extra or {}), "type": "message", "role": role, "text": text})

    def usage(
        self, input_tokens: int, output_tokens: int, cost_usd: float | None = None,
    ) -> list[dict[str, Any]]:
        """Record token usage (and cost) of one model call."""
        with self._step():
            return self._observe({"type": "usage", "input_tokens": int(input_tokens),
                                  "output_tokens": int(output_tokens), "cost_usd": cost_usd})

    def task_start(self, title: str, task_id: str | None = None) -> str:
        """Start a task (ending the current one as done); return its id."""
        title, task_id = writable(title), writable(task_id)
        with self._step():
            if self.state["task"] is not None:
                self._task_end("done")
            return self._task_start(title, task_id)

    def task_end(self, status: str = "done") -> None:
        with self._step():
            if self.state["task"] is not None:
                self._task_end(status)

    def next_task(self) -> str | None:
        """The operator's plan (a `split`, docs/plans.md): end the current sub-task as done and
        start the next; returns its instruction for the agent, or None when the plan is
        finished (or there is none, or the session has ended)."""
        with self._step():
            if self.ended or self.pending is not None:  # waiting for an operator: not now
                return None
            text = plans.advance(self)
            if plans.active(self.state) is None:
                self._must_save = True
            return text

    @property
    def plan(self) -> dict[str, Any] | None:
        """The session's plan (its steps and their status), or None when there has been none."""
        return self.state.get("plan")

    def new_cycle(self) -> None:
        """A new conversation cycle (a new user prompt): per-cycle counters start over."""
        with self._step():
            self.engine.new_cycle()

    def checkpoint(self, label: str) -> Any:
        """Take a checkpoint now; returns it (None when checkpoints are off)."""
        with self._step():
            return self._checkpoint(label)

    def heartbeat(self) -> None:
        """Write a `heartbeat` (nothing else changes)."""
        with self._step():
            self._write({"type": "heartbeat"})

    def gauges(self) -> list[Any]:
        """Every hard limit's current value (the engine's gauges)."""
        with self._step():
            return list(self.engine.gauges(self.clock()))

    def poll(self) -> list[Verdict]:
        """Apply operator decisions that arrived (cheap when none did) and the deadline of a
        pending escalation. Returns what the agent must be told, if anything."""
        with self._step():
            now = self.clock()
            notes = self._consume(now, None)
            return notes

    def wait(
        self, timeout: float | None = None, *, escalation_id: str | None = None,
        heartbeat_s: float | None = None, stop: Callable[[], bool] | None = None,
    ) -> Verdict:
        """Wait for an escalation (`escalation_id`, default: the pending one) to be decided or
        to reach its deadline; return the resulting verdict. Whichever process of the session
        applies the decision, every waiter gets its verdict. Writes a `heartbeat` every
        `heartbeat_s` while waiting (None: the caller writes its own). After `timeout`
        seconds (or when `stop()` is true) returns `pause` if still undecided."""
        from supervisor.guard.waiting import ChangeWaiter

        waiter = ChangeWaiter(self._control_path)
        started = time.monotonic()
        last_beat = started
        held: list[Verdict] = []
        waited = escalation_id
        try:
            while True:
                with self._step():
                    if waited is None and self.pending is not None:
                        waited = self.pending["escalation_id"]
                    notes = self._consume(self.clock(), None)
                    held += [n for n in notes if n.escalation_id != waited or waited is None]
                    pending = self.pending
                    if pending is None or pending["escalation_id"] != waited:
                        return _merge(held, self._resolution(waited))
                    call_id = pending.get("call_id")
                    deadline = pending.get("deadline_ts")
                if stop is not None and stop():
                    return self._pause_verdict(call_id)
                mono = time.monotonic()
                if timeout is not None and mono - started >= timeout:
                    return self._pause_verdict(call_id)
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
        """Escalate now (kind `pause`), as the `pause` operator command does."""
        with self._step():
            if self.pending is None and not self.ended:
                self._escalate("pause", reason, [], None, None, 3)

    # -- engine and policy ---------------------------------------------------------------

    def engine_policy_dict(self) -> dict[str, Any] | None:
        policy = getattr(self.engine, "policy", None)
        to_dict = getattr(policy, "to_dict", None)
        return to_dict() if to_dict else None

    # -- internals: state ------------------------------------------------------------------

    def _edit_guidance(self) -> EditGuidance:
        return EditGuidance(self.state, self.files.reads, self.cwd, self.engine.policy)

    def _step(self) -> _Step:
        return _Step(self)

    def _load(self) -> None:
        from supervisor.engine import Engine, Policy

        self.state = self._state_file.load()
        meta = self.state["meta"]
        if self._cwd_arg and not meta.get("cwd"):
            meta["cwd"] = self._cwd_arg
        if self._settings_arg is not None:
            meta["settings"] = self._settings_arg.to_dict()
        self.settings = GuardSettings.from_dict(meta.get("settings") or {})
        if self.state["engine"] is not None:
            # the engine takes the freshly parsed snapshot over: copying it cost more than the
            # rest of a hook step once the engine's window had filled (issue 28)
            self.engine = Engine.resume(self.state["engine"], copy=False)
        else:
            policy = self._policy_arg
            if policy is None:
                policy = Policy.profile("default")
            elif isinstance(policy, str):
                policy = Policy.profile(policy)
            elif isinstance(policy, dict):
                policy = Policy.from_dict(policy)
            self.engine = Engine(policy)
            if self._settings_arg is None:
                guard_table = policy.to_dict().get("guard")
                if isinstance(guard_table, dict):
                    meta["settings"] = GuardSettings.from_dict(guard_table).to_dict()
                    self.settings = GuardSettings.from_dict(meta["settings"])
            self._dirty = True
        self._catch_up()

    def _catch_up(self) -> None:
        """Learn from the event log what the state does not know (`supervisor.guard.recovery`):
        the decisions already applied or ignored (never applied again), the escalation and task
        numbers used, the end of the session. Past the state's `log_offset` there is normally
        nothing of ours; a decision applied there was applied by a step killed before it saved
        the state, so its recorded effect is applied to the engine now, exactly once."""
        path = self.files.events
        try:
            size = os.stat(path).st_size
        except OSError:
            return
        start = self.state["log_offset"]
        fresh = start is None or start > size  # never saved with a position, or log replaced
        if not fresh and size <= start:
            return
        facts = recovery.scan(path, 0 if fresh else start)
        state = self.state
        seen, logged = set(state["seen_decisions"]), state["logged_decisions"]
        new = [d for d in dict.fromkeys(facts.handled) if d not in seen and d not in logged]
        logged.extend(new)
        for event in facts.applied:
            esc = event.get("escalation_id")
            if isinstance(esc, str):
                state["decided"].setdefault(esc, event["decision_id"])
            if fresh or event["decision_id"] not in new:
                continue  # a fresh state's engine starts over: old effects are not its own
            ts = event.get("ts")
            self.engine.observe(event, ts if isinstance(ts, int | float) else self.clock())
            pending = state["pending"]
            if pending is not None and pending.get("escalation_id") == esc:
                state["pending"] = None
        state["escalations"] = max(state["escalations"], facts.escalations)
        state["tasks_started"] = max(state["tasks_started"], facts.tasks)
        if facts.ended and not state["ended"]:
            state["ended"], state["pending"] = facts.ended, None
        state["log_offset"] = size
        self._dirty = True

    def _refresh(self) -> None:
        if self._abandoned or self._state_file.changed_since_ours():
            self._abandoned = False
            self._load()

    def _abandon(self) -> None:
        """A step that ran out of its time budget (`waits.DeadlineExceeded`) stops as if it
        had been killed: its half-done state is not saved (the next step reloads the saved one
        and learns from the log what this one recorded, `_catch_up`), so an operator decision
        it could not finish is applied by a later call, once."""
        self._dirty = False
        self._must_save = False
        self._abandoned = True

    def _save(self) -> None:
        # shares the engine's live state: serialised below, before the engine changes again
        self.state["engine"] = self.engine.snapshot(copy=False)
        try:  # how far into the log this state is up to date (see `_catch_up`)
            self.state["log_offset"] = os.stat(self.files.events).st_size
        except OSError:
            self.state["log_offset"] = None
        self._state_file.save(self.state)
        self._dirty = False
        self._must_save = False
        self._last_save = time.monotonic()

    def _after_step(self) -> None:
        if not self._dirty:
            return
        if (
            self._must_save or self.save_every_s <= 0
            or time.monotonic() - self._last_save >= self.save_every_s
        ):
            self._save()

    # -- internals: events -----------------------------------------------------------------

    def _write(self, event: dict[str, Any]) -> dict[str, Any]:
        written = self._events.append(event)
        self.state["last_seq"] = written["seq"]
        self._dirty = True
        return written

    def _write_many(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        written = self._events.append_many(events)
        if written:
            self.state["last_seq"] = written[-1]["seq"]
        self._dirty = True
        return written

    def _observe(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        if self.ended:
            self._write(event)
            return []
        return self._record(event)

    def _record(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Write an event and let the engine see it; write the detections it causes."""
        written = self._write(event)
        findings = self.engine.observe(written, written["ts"])
        detections = [f.to_event() for f in findings]
        if detections:
            self._write_many(detections)
        return detections

    def _task_start(self, title: str, task_id: str | None,
                    extra: dict[str, Any] | None = None) -> str:
        self.state["tasks_started"] += 1
        task_id = task_id or f"t{self.state['tasks_started']}"
        self.state["task"] = {"task_id": task_id, "title": title}
        self._record({"type": "task_start", "task_id": task_id, "title": title, **(extra or {})})
        return task_id

    def _task_end(self, status: str, extra: dict[str, Any] | None = None) -> None:
        task = self.state["task"]
        self.state["task"] = None
        plans.task_ended(self.state, task["task_id"], status)
        self._record({"type": "task_end", "task_id": task["task_id"], "status": status,
                      **(extra or {})})

    def _end(self, status: str, reason: str | None) -> None:
        if self.ended:
            return
        if self.state["task"] is not None:
            self._task_end({"completed": "done", "failed": "failed"}.get(status, "skipped"))
        self.state["ended"] = status
        self.state["pending"] = None
        self._write({"type": "session_end", "status": status, "reason": reason})
        self._must_save = True

    def _on_disk(self, tool: str, args: dict[str, Any], batch: str | None) -> dict[str, Any]:
        """Extension fields of a `tool_call`: its batch, the state on disk of a file it reads
        (for the file cache's freshness check) and the digests of the files it may write,
        before it runs (so an undo is seen as one); see guard.disk."""
        extra: dict[str, Any] = {"batch": batch} if batch else {}
        read = self.engine.read_path(tool, args)
        if read:
            extra["file"] = disk.file_state(read, self.cwd)
        written = self.engine.planned_paths(tool, args)
        if written:
            extra["files_before"] = disk.digests(written, self.cwd)
        return extra

    def _stopped(self, call_id: str | None) -> Verdict:
        return Verdict("stop", 4, f"the session has ended ({self.ended})",
                       f"The session has ended ({self.ended}). Stop working.", call_id)

    # -- internals: checkpoints -----------------------------------------------------------

    def _checkpoint(self, label: str) -> Any:
        store = self.checkpoints
        if store is None:
            return None
        left = waits.remaining()  # a hold must still be answered: the checkpoint gets a share
        try:
            with waits.within(None if left is None else time.monotonic()
                              + left * CHECKPOINT_SHARE):
                cp = store.create(label, at_seq=self.state["last_seq"])
        except WorkTreeTooBig as exc:
            self.state["meta"]["checkpoints_off"] = str(exc)
            self._checkpoints = None
            self._write({"type": "message", "role": "system",
                         "text": f"checkpoints are off for this session: {exc}"})
            return None
        except (CheckpointError, waits.DeadlineExceeded) as exc:
            self._write({"type": "message", "role": "system",
                         "text": f"checkpoint '{label}' failed: {exc}"})
            return None
        self.state["since_checkpoint"] = 0
        self._record({"type": "checkpoint", "checkpoint_id": cp.checkpoint_id, "label": cp.label,
                      "commit": cp.commit, "at_seq": cp.at_seq, "files": cp.files,
                      "changed": cp.changed, **checkpoint_changes(cp), **_nested(cp)})
        return cp

    # -- internals: escalations and decisions --------------------------------------------

    def _escalate(
        self, kind: str, reason: str, evidence: list[int], call_id: str | None,
        signature: str | None, level: int,
    ) -> None:
        cp = self._checkpoint(f"before escalation {self.state['escalations'] + 1}")
        self.state["escalations"] += 1
        esc_id = f"esc-{self.state['escalations']}"
        now = self.clock()
        deadline_s = (self.settings.pause_deadline_s if kind == "pause"
                      else self.settings.escalation_deadline_s)
        options = [name for name in ESCALATION_OPTIONS
                   if name != "rollback" or self.checkpoints is not None]
        event = {
            "type": "escalation", "escalation_id": esc_id, "level": 3,
            "reason": reason, "evidence": evidence, "options": options,
            "deadline_ts": now + deadline_s if deadline_s else None,
            "fallback": self.settings.fallback, "kind": kind,
            "checkpoint_id": cp.checkpoint_id if cp is not None else None,
            "call_id": call_id,
        }
        self._write(event)
        self.state["pending"] = {**event, "signature": signature}
        self._must_save = True
        if kind != "pause":  # an operator's own pause is no news to the operators
            announce(self.root, self.session_id, esc_id)

    def _pause_verdict(self, call_id: str | None) -> Verdict:
        pending = self.pending or {}
        return Verdict(
            "pause", 3, "Waiting for the operator's decision.", pending.get("reason"), call_id,
            escalation_id=pending.get("escalation_id"),
        )

    def _resolution(self, escalation_id: str | None) -> Verdict:
        """The verdict the decision of an escalation left for whoever waited on it."""
        found = self.state["resolutions"].get(escalation_id or "")
        if found is not None:
            return _verdict_from(found)
        if self.ended:
            return self._stopped(None)
        return Verdict("allow", self.engine.level, None, None)

    def _consume(self, now: float, call_id: str | None) -> list[Verdict]:
        """Apply new operator decisions, then the pending escalation's deadline."""
        notes: list[Verdict] = []
        offset = self.state["control_offset"]
        if control.has_news(self._control_path, offset):
            lines, offset = control.read_from(self._control_path, offset)
            self.state["control_offset"] = offset
            self._must_save = True
            self._dirty = True
            for line in lines:
                try:
                    note = self._decide(line, now, call_id)
                except waits.DeadlineExceeded:
                    raise  # no time left in this hook call: the next one applies it
                except Exception as exc:  # never into the agent: recorded as ignored
                    self._failed(line.decision_id, exc)
                    continue
                if note is not None:
                    notes.append(note)
        pending = self.pending
        deadline = pending.get("deadline_ts") if pending is not None else None
        if pending is not None and deadline is not None and now >= deadline:
            fallback = pending.get("fallback") or "skip"
            try:
                note = self._apply(
                    {"decision_id": "fallback", "action": fallback, "text": None,
                     "checkpoint_id": None, "operator": "guard"},
                    pending, call_id, outcome_prefix="deadline passed: ",
                )
                if note is not None:
                    notes.append(note)
            except Exception as exc:
                self._failed("fallback", exc)
        return notes

    def _failed(self, decision_id: str, exc: Exception) -> None:
        """A decision whose application raised: recorded as `decision_ignored` with the reason
        (best effort: if even that cannot be written, the agent still gets no exception)."""
        with contextlib.suppress(Exception):  # the log itself fails (a full disk)
            self._ignore(decision_id, f"failed: {type(exc).__name__}: {exc}")

    def _decide(self, line: control.ControlLine, now: float, call_id: str | None) -> Verdict | None:
        seen = self.state["seen_decisions"]
        logged = self.state["logged_decisions"]
        if line.decision_id in logged:  # its outcome is in the log already: never again
            logged.remove(line.decision_id)
            seen.append(line.decision_id)
            return None
        decision = line.decision
        if decision is None:
            self._ignore(line.decision_id, f"malformed: {line.problem}")
            return None
        dec_id = decision["decision_id"]
        if not provenance.is_sealed(self.root, self.session_id, decision):
            self._ignore(dec_id, "rejected: not written by an operator command, the dashboard "
                         "or the relay (no valid seal); it may come from the agent itself")
            return None
        if dec_id in seen or dec_id == "fallback":
            self._ignore(dec_id, "duplicate: this decision id was already handled")
            return None
        seen.append(dec_id)
        if self.ended:
            self._ignore(dec_id, f"late: the session has ended ({self.ended})")
            return None
        esc_id = decision.get("escalation_id")
        pending = self.pending
        kind = KINDS[decision["action"]]
        if esc_id is not None:
            if pending is not None and esc_id == pending["escalation_id"]:
                refused = kind.answer_refusal(esc_id, pending["options"])
                if refused:
                    self._ignore(dec_id, refused)
                    return None
                return self._apply(decision, pending, call_id)
            decided = self.state["decided"].get(esc_id)
            if decided is not None:
                self._ignore(dec_id, f"late: {esc_id} was already decided ({decided})")
            else:
                self._ignore(dec_id, f"unknown escalation: {esc_id}")
            return None
        # An operator command not tied to an escalation.
        if pending is not None and kind.name in pending["options"]:
            return self._apply(decision, pending, call_id)
        return self._command(decision, call_id)

    def _ignore(self, decision_id: str, reason: str) -> None:
        self._write({"type": "decision_ignored", "decision_id": decision_id, "reason": reason})

    def _applied(self, esc_id: str | None, decision: dict[str, Any], outcome: str,
                 effect: Effect) -> None:
        """Apply `effect` to the engine and record it with the decision (`decision_applied`).

        The engine is not shown this event: it already applied the effect, exactly as a replay
        does when it observes the event (`supervisor.engine.decisions`)."""
        now = self.clock()
        self.engine.apply_effect(effect, now)
        event = {"type": "decision_applied", "ts": now, "escalation_id": esc_id,
                 "decision_id": decision["decision_id"], "action": decision["action"],
                 "outcome": outcome, "effect": effect.to_dict(), "level": self.engine.level}
        if decision.get("operator"):
            event["operator"] = decision["operator"]
        if decision.get("tasks") is not None:  # a split: its plan, for every reader
            event["tasks"] = decision["tasks"]
        self._write(event)
        self._must_save = True

    def _apply(
        self, decision: dict[str, Any], pending: dict[str, Any], call_id: str | None,
        outcome_prefix: str = "",
    ) -> Verdict | None:
        """Resolve the pending escalation with `decision` (its kind carries it out); return the
        verdict for the agent."""
        esc_id = pending["escalation_id"]
        kind = KINDS[decision["action"]]
        call_id = call_id or pending.get("call_id")
        # an operator pause is the guard's own escalation: the engine has none to answer
        effect = effect_of(self.engine, kind.effect, answering=pending.get("kind") != "pause",
                           decision=decision)
        self.state["pending"] = None
        self.state["decided"][esc_id] = decision["decision_id"]
        ctx = Context(esc_id, pending.get("kind"), pending.get("reason"), bool(outcome_prefix),
                      decision.get("operator"), call_id)
        result = kind.carry_out(DeskOps(self), decision, ctx, effect)
        if isinstance(result, Ignored):  # the escalation still waits for a decision
            self.state["pending"] = pending
            del self.state["decided"][esc_id]
            self._ignore(decision["decision_id"], result.reason)
            return None
        if not result.carried_out:
            effect = effect.not_carried_out()
        self._applied(esc_id, decision, outcome_prefix + result.outcome, effect)
        verdict = Verdict(result.verdict or "allow", self.engine.level, result.message,
                          result.outcome, call_id, escalation_id=esc_id, decision=kind.name,
                          changed_files=list(result.changed_files))
        resolutions = self.state["resolutions"]
        resolutions[esc_id] = _verdict_dict(verdict)
        while len(resolutions) > _RESOLUTIONS_KEPT:
            del resolutions[next(iter(resolutions))]
        self._write({"type": "verdict", "call_id": call_id or esc_id, "action": verdict.action,
                     "level": verdict.level, "reason": result.outcome,
                     "message": verdict.message, "escalation_id": esc_id})
        if result.then is not None:
            result.then()
        return verdict

    def _command(self, decision: dict[str, Any], call_id: str | None) -> Verdict | None:
        """An operator command not tied to an escalation: its kind carries it out; the note
        for the agent's next call, if any."""
        kind = KINDS[decision["action"]]
        pending = self.pending
        if pending is not None and kind.waits_for_pending:
            self._ignore(decision["decision_id"], kind.pending_refusal(pending))
            return None
        effect = effect_of(self.engine, kind.effect, answering=False, decision=decision)
        result = kind.carry_out(DeskOps(self), decision,
                                Context(operator=decision.get("operator"), call_id=call_id),
                                effect)
        if isinstance(result, Ignored):
            self._ignore(decision["decision_id"], result.reason)
            return None
        if not result.carried_out:
            effect = effect.not_carried_out()
        self._applied(None, decision, result.outcome, effect)
        if result.then is not None:
            result.then()
        if result.verdict is None:
            return None
        return Verdict(result.verdict, self.engine.level, result.message,
                       result.reason or result.outcome, call_id, decision=kind.name,
                       changed_files=list(result.changed_files))

    def _rollback(self, checkpoint_id: str, call_id: str | None) -> tuple[Verdict, str, bool]:
        """Restore a checkpoint: (verdict for the agent, outcome, whether it was restored)."""
        store = self.checkpoints
        self.state["rollback_retry"] = None  # a new rollback replaces an unfinished one
        try:
            if store is None:
                raise CheckpointError("checkpoints are off in this session")
            result = store.restore(checkpoint_id)
        except waits.DeadlineExceeded:
            raise  # a lock not taken in time: nothing restored yet, the next call applies it
        except RestoreInterrupted as exc:
            return self._interrupted(checkpoint_id, str(exc),
                                     exc.safety.checkpoint_id if exc.safety else None, 1,
                                     call_id)
        except Exception as exc:  # CheckpointError, or anything else: the rollback did not run
            if not isinstance(exc, CheckpointError):
                exc = CheckpointError(f"{type(exc).__name__}: {exc}")
            outcome = f"rollback failed: {exc}"
            return Verdict("block", self.engine.level,
                           f"The operator asked for a rollback, but it failed ({exc}). The call "
                           "was not run; re-plan.", outcome, call_id), outcome, False
        return self._restored(result, call_id)

    def _interrupted(self, checkpoint_id: str, exc: str, safety_id: str | None, attempt: int,
                     call_id: str | None) -> tuple[Verdict, str, bool]:
        """A restore stopped at the deadline (`exc`: why; `safety_id`: its safety checkpoint,
        None when it stopped before taking one): continued at the next call while attempts are
        left (the guard's state keeps it), else abandoned; both said as they are."""
        kept = (f"safety checkpoint {safety_id} holds the work tree as it was before"
                if safety_id is not None else "nothing was changed yet")
        if attempt < ROLLBACK_ATTEMPTS:
            self.state["rollback_retry"] = {
                "checkpoint_id": checkpoint_id, "attempt": attempt, "safety_id": safety_id}
            outcome = (f"rollback to {checkpoint_id} interrupted ({exc}); the work tree may be "
                       f"partly restored ({kept}); attempt {attempt} of {ROLLBACK_ATTEMPTS}, "
                       "continued at the next tool call")
            message = (f"The operator asked for a rollback to checkpoint {checkpoint_id}; it is "
                       "not finished and continues at your next tool call. The call was not "
                       "run; do not change files until the rollback is reported done.")
        else:
            self.state["rollback_retry"] = None
            outcome = (f"rollback to {checkpoint_id} ABANDONED after {attempt} attempts ({exc})"
                       f": the work tree is partly restored and differs from the checkpoint "
                       f"({kept}); roll back again by hand when the agent is idle")
            message = (f"The operator asked for a rollback to checkpoint {checkpoint_id}; it "
                       "could not finish in time and was abandoned, so the files are partly "
                       "restored. The call was not run; check the files before you go on.")
        return (Verdict("block", self.engine.level, message, outcome, call_id), outcome,
                False)

    def _continue_rollback(self, call_id: str | None) -> Verdict:
        """Continue an interrupted rollback with a share of this call's budget; the outcome is
        recorded for the operator (a `rollback` event when done, a system message otherwise)."""
        retry = self.state["rollback_retry"]
        attempt = int(retry.get("attempt") or 0) + 1
        store = self.checkpoints
        left = waits.remaining()
        try:
            if store is None:
                raise CheckpointError("checkpoints are off in this session")
            with waits.within(None if left is None else time.monotonic()
                              + left * CHECKPOINT_SHARE):
                result = store.restore(retry["checkpoint_id"], safety_id=retry.get("safety_id"))
        except (RestoreInterrupted, waits.DeadlineExceeded) as exc:  # git killed, or the
            safety = getattr(exc, "safety", None)  # checkpoints' lock not had in time
            verdict, outcome, _ = self._interrupted(
                retry["checkpoint_id"], str(exc),
                safety.checkpoint_id if safety is not None else retry.get("safety_id"),
                attempt, call_id)
        except CheckpointError as exc:
            self.state["rollback_retry"] = None
            outcome = (f"rollback to {retry['checkpoint_id']} abandoned on attempt {attempt}: "
                       f"{exc}; the work tree may be partly restored")
            verdict = Verdict("block", self.engine.level,
                              f"The rollback the operator asked for could not be finished "
                              f"({exc}); the files may be partly restored. The call was not "
                              "run; check the files before you go on.", outcome, call_id)
        else:
            self.state["rollback_retry"] = None
            verdict, outcome, _ = self._restored(result, call_id, attempt=attempt)
        self._write({"type": "message", "role": "system", "text": outcome})
        verdict.decision = "rollback"
        return verdict

    def _restored(self, result: RestoreResult, call_id: str | None, *, attempt: int = 1
                  ) -> tuple[Verdict, str, bool]:
        extra = {"attempt": attempt} if attempt > 1 else {}
        for event in result.events(self.state["last_seq"], **extra):
            self._record(event)
        self.state["since_checkpoint"] = 0
        outcome = result.summary()
        if attempt > 1:
            outcome = f"rollback completed on attempt {attempt}: {outcome}"
        message = (f"The operator rolled the workspace back to checkpoint "
                   f"{result.checkpoint.checkpoint_id} ({result.checkpoint.label}). "
                   f"Files changed: {', '.join(result.changed_files) or 'none'}. The call was "
                   "not run; continue from the restored files.")
        if result.failed:
            message += (" These files could not be restored and are as you left them: "
                        + ", ".join(f"{p} ({why})" for p, why in result.failed[:20]) + ".")
        if result.differs:
            message += (" These files were written while the rollback ran and differ from the "
                        "checkpoint: " + ", ".join(result.differs[:20]) + ".")
        verdict = Verdict("block", self.engine.level, message, outcome, call_id,
                          changed_files=result.changed_files)
        return verdict, outcome, True

    def _reset_outcome(self, allowed: bool) -> str:
        """The outcome text of a reset (counting it when `allowed`)."""
        limit, _ = self.engine.policy.limit("resets_per_conversation")
        if not allowed:
            if self.engine.level >= 4:
                return "reset refused: the session is stopped"
            return (f"reset refused: the limit of {limit:g} reset(s) "
                    "(resets_per_conversation) is reached")
        self.state["resets"] += 1
        shown = f"{limit:g}" if limit is not None else "unlimited"
        return f"counters reset ({self.state['resets']} of {shown})"


class DeskOps:
    """The `Desk` a decision kind carries itself out on (`supervisor.protocol.decisions`):
    each method does one thing to the session at once."""

    __slots__ = ("_guard",)

    def __init__(self, guard: Guard) -> None:
        self._guard = guard

    def has_checkpoints(self) -> bool:
        return self._guard.checkpoints is not None

    def rollback(self, checkpoint_id: str) -> Result:
        verdict, outcome, done = self._guard._rollback(checkpoint_id, None)
        return Result(verdict.action, verdict.message, outcome, carried_out=done,
                      changed_files=tuple(verdict.changed_files))

    def open_task(self) -> str | None:
        task = self._guard.state["task"]
        return task["task_id"] if task is not None else None

    def skip_task(self) -> tuple[str | None, str | None]:
        state = self._guard.state
        task = state["task"]
        following = plans.advance(self._guard, "skipped") if plans.active(state) else None
        if task is not None and state["task"] is task:  # a plan's last step ends it itself
            self._guard._task_end("skipped")
        return (task["task_id"] if task is not None else None), following

    def start_plan(self, decision: Mapping[str, Any], why: str | None) -> str:
        return plans.start(self._guard, dict(decision), why)

    def replan(self, tasks: list[str]) -> str | None:
        return plans.replan(self._guard, tasks)

    def drop_plan(self) -> str | None:
        return plans.drop(self._guard)

    def can_reset(self) -> bool:
        return bool(self._guard.engine.can_reset())

    def count_reset(self) -> str:
        return self._guard._reset_outcome(True)

    def reset_refused(self) -> str:
        return self._guard._reset_outcome(False)

    def detectors(self) -> tuple[str, ...]:
        return tuple(DETECTOR_NAMES)

    def pause(self, reason: str, call_id: str | None) -> None:
        self._guard._escalate("pause", reason, [], call_id, None, 3)

    def end_session(self, status: str, reason: str) -> None:
        self._guard._end(status, reason)


class _Step:
    """Context of one public step: lock held, state fresh, saved afterwards when needed."""

    __slots__ = ("_cm", "_guard")

    def __init__(self, guard: Guard) -> None:
        self._guard = guard
        self._cm = guard._lock.held()

    def __enter__(self) -> None:
        if self._guard._events is None:
            raise RuntimeError("the guard is closed")
        self._cm.__enter__()
        try:
            self._guard._refresh()
        except BaseException:
            self._cm.__exit__(None, None, None)
            raise

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        try:
            if kind is not None and issubclass(kind, waits.DeadlineExceeded):
                self._guard._abandon()
            else:
                self._guard._after_step()
        finally:
            self._cm.__exit__(None, None, None)


def _nested(cp: Any) -> dict[str, Any]:
    """The `nested` field of a checkpoint event: the nested git repositories it left out (so
    the operator knows a rollback will not touch them), when there are any."""
    return {"nested": list(cp.nested)} if cp.nested else {}


def _merge(notes: list[Verdict], verdict: Verdict) -> Verdict:
    """Fold operator notes into a verdict: the most severe action wins, messages add up."""
    if not notes:
        return verdict
    messages = [n.message for n in [*notes, verdict] if n.message]
    strongest = verdict
    for note in notes:
        if _SEVERITY.get(note.action, 0) > _SEVERITY.get(strongest.action, 0):
            strongest = note
    out = Verdict(
        strongest.action, max(n.level for n in [*notes, verdict]),
        strongest.message, strongest.reason, verdict.call_id or strongest.call_id,
        escalation_id=strongest.escalation_id or verdict.escalation_id,
        decision=strongest.decision or next((n.decision for n in notes if n.decision), None),
        cached_output=verdict.cached_output if strongest is verdict else None,
        changed_files=list(dict.fromkeys(f for n in [*notes, verdict] for f in n.changed_files)),
    )
    out.message = "\n".join(dict.fromkeys(messages)) or None
    return out


def _verdict_event(v: Verdict, call_id: str, gauges: Sequence[Any] = ()) -> dict[str, Any]:
    """The `verdict` event; `gauges` (extension) carries every limit's current value, so the
    dashboard shows usage against each limit without running an engine of its own."""
    event = {"type": "verdict", "call_id": call_id, "action": v.action, "level": v.level,
             "reason": v.reason, "message": v.message}
    if gauges:
        event["gauges"] = {g.name: round(g.value, 6) for g in gauges}
    return event


def _verdict_dict(v: Verdict) -> dict[str, Any]:
    return {"action": v.action, "level": v.level, "message": v.message, "reason": v.reason,
            "call_id": v.call_id, "escalation_id": v.escalation_id, "decision": v.decision,
            "changed_files": v.changed_files}


def _verdict_from(d: dict[str, Any]) -> Verdict:
    return Verdict(d["action"], d.get("level", 0), d.get("message"), d.get("reason"),
                   d.get("call_id"), escalation_id=d.get("escalation_id"),
                   decision=d.get("decision"), changed_files=list(d.get("changed_files") or []))


