"""The session's journal: what the guard knows and what it has written, kept in step.

Every step of the guard (the SDK's calls in one process, or one Claude Code hook process per
tool call, several at once) holds the session lock, starts from the state as last saved by any
process, writes its events and saves the state before it lets go (`step()`). This module is the
one place that does so, so the two other parts of the guard (`gate.CallGate`, the call path;
`desk.OperatorDesk`, the operators' decisions) cannot get the order wrong: they change
`journal.state`, write through `write`/`record` and say when the state must be saved now
(`must_save`).

It also learns from the event log what a lost or stale state does not know (`_catch_up`,
`supervisor.guard.recovery`), owns the session's tasks, end, escalations and checkpoints (each
is state plus events), and the engine, which is part of the saved state (its snapshot).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from supervisor.engine import Engine, Policy
from supervisor.guard import catch_up, loop_cost, recovery
from supervisor.guard.announce import announce
from supervisor.guard.checkpoints import (
    CheckpointCommit,
    CheckpointError,
    CheckpointStore,
    WorkTreeTooBig,
    checkpoint_changes,
)
from supervisor.guard.settings import GuardSettings
from supervisor.guard.spend import Spending
from supervisor.guard.state import GuardState, SessionLock, StateFile
from supervisor.protocol.decisions import KINDS, escalation_options, is_hold
from supervisor.protocol.names import LIMIT, LIMIT_WARNING_KEY
from supervisor.protocol.policy_audit import switched_off
from supervisor.store import waits
from supervisor.store.liveness import THIS_HOST
from supervisor.store.paths import ensure_session_dir, session_files
from supervisor.store.voice import (
    MARKS_FIELD,
    SEALED,
    SEALS_FIELD,
    LineSealer,
    Voucher,
    root_key,
)
from supervisor.store.writer import LineWriter

CHECKPOINT_SHARE = 0.4
"""In a hook call, a checkpoint may use at most this share of the time left: the escalation
it is taken for must still be recorded and held (a broad work tree used to take it all)."""

PolicyArg = Policy | str | dict[str, Any] | None
"""A session's policy as given: a `Policy`, a profile name, a policy dict, or None (the
`default` profile)."""


class SessionJournal:
    """One session's state, engine, event log and checkpoints, under the session lock."""

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
        """`save_every_s`: 0 saves the state after every step (one step per process); the SDK
        passes a positive interval and relies on `close`. `policy` and `settings` apply to a
        new session; a session in progress keeps its own (in its state)."""
        self.root = Path(root)
        self.session_id = session_id
        self.files = session_files(self.root, session_id)
        self.dir = ensure_session_dir(self.root, session_id)
        self.clock = clock
        self.save_every_s = save_every_s
        self._lock = SessionLock(self.dir)
        self._state_file = StateFile(self.dir)
        self._sealer = LineSealer(self.root, session_id)
        """Seals the lines that speak in the supervisor's voice (`store.voice`); its key
        checks those the catch-up reads (`recovery.scan`)."""
        self._events = LineWriter(self.files.events, clock=clock, sealer=self._sealer)
        self._closed = False
        self._policy_arg = policy
        self._settings_arg = settings
        self._cwd_arg = str(Path(cwd).resolve()) if cwd is not None else None
        self.spending: Spending | None = None
        """The store's daily spend and budgets this session counts in (the hook runtime at
        each call, the SDK at open, when the root's policy file has `[budgets]`); None: no
        budgets."""
        self.dirty = False
        """The state changed since it was last saved."""
        self.must_save = False
        """The state must be saved at the end of this step (a decision, an escalation, the
        end), whatever `save_every_s` says."""
        self._abandoned = False
        self._last_save = 0.0
        self._log_seen: int | None = None
        """The size of the event log as this object last knew it whole (after a load, and
        at the end of each of its steps): what lies past it another process wrote."""
        self.state = GuardState()
        self.engine: Engine
        self.settings = settings or GuardSettings()
        self._checkpoints: CheckpointStore | None = None
        with self._lock.held():
            self._load()
        self._last_save = time.monotonic()  # what was just loaded is saved (`save_every_s`)

    # -- what the state says ---------------------------------------------------------------

    @property
    def ended(self) -> str | None:
        """The session's end status, or None while it runs."""
        return self.state.ended

    @property
    def pending(self) -> dict[str, Any] | None:
        """The pending escalation (its event fields plus guard bookkeeping), or None."""
        return self.state.pending

    @property
    def states_set_aside(self) -> int:
        """How many unreadable saved states this journal found and kept aside as
        `state.json.bad` (at its loads), so that the caller can say so."""
        return self._state_file.set_aside

    @property
    def cwd(self) -> str | None:
        return self.state.meta.get("cwd")

    @property
    def checkpoints(self) -> CheckpointStore | None:
        """The session's checkpoint store, or None when checkpoints are off or there is no
        working directory."""
        if self.state.meta.get("checkpoints_off"):
            return None  # the work tree is too big or too broad (said once, when found)
        if self._checkpoints is None and self.settings.checkpoints and self.cwd:
            self._checkpoints = CheckpointStore(
                self.files.checkpoints, Path(self.cwd),
                max_file_bytes=self.settings.checkpoint_max_file_bytes,
                exclude_paths=[self.root],
            )
        return self._checkpoints

    def engine_policy_dict(self) -> dict[str, Any]:
        return self.engine.policy.to_dict()

    # -- steps -----------------------------------------------------------------------------

    def step(self) -> _Step:
        """The context of one step: lock held, state fresh, saved afterwards when needed."""
        return _Step(self)

    @contextlib.contextmanager
    def saving_later(self) -> Iterator[None]:
        """Steps inside save no state: the step after them (or `close`) does, once. For
        records a hook call makes before the step it is for (what the transcript says before
        a call is judged): a state saved per record would cost a snapshot each. Nothing is
        lost if the process dies first: the next load catches up from the log."""
        before = self.save_every_s
        self.save_every_s = math.inf
        try:
            yield
        finally:
            self.save_every_s = before

    def close(self) -> None:
        """Save the state and release files. The session itself stays open (see `end`)."""
        if self._closed:
            return
        self.flush()
        self._events.close()
        self._lock.close()
        self._closed = True

    def discard(self) -> None:
        """Release files without saving: a state that could not be brought up to date (a
        state file another process left unreadable) is never saved over what is on disk."""
        if self._closed:
            return
        self._events.close()
        self._lock.close()
        self._closed = True

    def flush(self) -> None:
        """Save a state kept unsaved (`save_every_s`), brought up to date first with what other
        processes did meanwhile (`_refresh`), so what they saved or logged is never lost."""
        with self._lock.held():
            self._refresh()
            if self.dirty:
                self.save()

    def refresh(self) -> None:
        """Take in what other processes saved or logged since this object's last step (a
        guard kept open across steps reads `started`, `ended` between them)."""
        with self._lock.held():
            self._refresh()

    def use_settings(self, settings: GuardSettings) -> None:
        """The guard settings of this step on (the hook fits its hold time to each call's
        budget), as a load with `settings` would have made them."""
        self._settings_arg = settings
        self.state.meta["settings"] = settings.to_dict()
        self.settings = settings
        self.dirty = True

    def save(self) -> None:
        # shares the engine's live state: serialised below, before the engine changes again
        self.state.engine = self.engine.snapshot(copy=False)
        try:  # how far into the log this state is up to date (see `_catch_up`)
            self.state.log_offset = os.stat(self.files.events).st_size
        except OSError:
            self.state.log_offset = None
        self.state.hold_seal = self._sealer.hold_seal(_hold(self.state))
        self._state_file.save(self.state)
        if self.state.log_offset is not None:
            self._log_seen = self.state.log_offset
        self.dirty = False
        self.must_save = False
        self._last_save = time.monotonic()

    def _load(self) -> None:
        self.state = self._state_file.load()
        # a saved state whose hold is not as this guard sealed it (the agent rewrote it) takes
        # its hold and its end from the log, whose lines that say them are sealed
        rewritten = self.state.log_offset is not None and (
            self.state.hold_seal != self._sealer.hold_seal(_hold(self.state)))
        meta = self.state.meta
        if self._cwd_arg and not meta.get("cwd"):
            meta["cwd"] = self._cwd_arg
        if self._settings_arg is not None:
            meta["settings"] = self._settings_arg.to_dict()
        self.settings = GuardSettings.from_dict(meta.get("settings") or {})
        if self.state.engine is not None:
            # the engine takes the freshly parsed snapshot over: copying it cost more than the
            # rest of a hook step once the engine's window had filled (issue 28)
            self.engine = Engine.resume(self.state.engine, copy=False)
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
            self.dirty = True
        self._catch_up(self.state.log_offset)
        if rewritten:
            self._hold_from_log()

    def _hold_from_log(self) -> None:
        """The pending escalation and the end as the whole log says them (`recovery.scan`:
        sealed lines only), over what a state the agent rewrote says: `"pending": null`
        released a held agent, `"ended": "completed"` left every later call unsupervised."""
        facts = recovery.scan(self.files.events, vouch=lambda: self._voucher(0))
        state = self.state
        state.ended = facts.ended
        if facts.ended:
            state.pending = None
        elif facts.pending is not None and state.pending is None:
            state.pending = facts.pending
        self.dirty = True

    def _voucher(self, last: int) -> Voucher | None:
        """The check of the log's lines past the one numbered `last` (`store.voice`); None
        when there is no key (nothing can be checked)."""
        key = self._sealer.key()
        return None if key is None else Voucher(key, self.session_id, self.files.events, last)

    def _catch_up(self, start: int | None) -> None:
        """Learn from the event log what the state does not know (`supervisor.guard.recovery`):
        the decisions already applied or ignored (never applied again), the escalation and task
        numbers used, the end of the session. A state that is behind the log (saved lazily, or
        its step killed before it saved) has the steps past its `log_offset` done again on it
        (`supervisor.guard.catch_up`): a decision applied there has its recorded effect applied
        to the engine now, exactly once. A fresh state's engine starts over: old effects are
        not its own."""
        path = self.files.events
        try:
            size = os.stat(path).st_size
        except OSError:
            self._log_seen = 0
            return
        self._log_seen = size
        fresh = start is None or start > size  # never saved with a position, or log replaced
        if not fresh and start is not None and size <= start:
            return
        state = self.state
        last = 0 if fresh else state.last_seq

        facts = recovery.scan(path, 0 if fresh or start is None else start,
                              everything=not fresh, vouch=lambda: self._voucher(last))
        seen, logged = set(state.seen_decisions), state.logged_decisions
        new = [d for d in dict.fromkeys(facts.handled) if d not in seen and d not in logged]
        logged.extend(new)
        for event in facts.applied:
            esc = event.get("escalation_id")
            if isinstance(esc, str):
                state.decided.setdefault(esc, event["decision_id"])
            pending = state.pending
            if not fresh and event["decision_id"] in new and pending is not None and (
                    pending.get("escalation_id") == esc):
                state.pending = None
        if not fresh:
            catch_up.redo(self, facts.events, set(new))
        waiting = facts.pending
        if waiting is not None and state.pending is None and not state.ended and not (
                facts.ended) and waiting["escalation_id"] not in state.decided:
            state.pending = waiting  # the log says the agent waits for an operator
        state.escalations = max(state.escalations, facts.escalations)
        state.tasks_started = max(state.tasks_started, facts.tasks)
        if facts.ended and not state.ended:
            state.ended, state.pending = facts.ended, None
        state.log_offset = size
        self.dirty = True

    def _refresh(self) -> None:
        """Under the lock, at the start of a step: a state another process saved since is
        loaded; events another process logged since (a state kept in memory across steps, the
        resident hook server's, has not seen them) are done again on this one."""
        if self._abandoned or self._state_file.changed_since_ours():
            self._abandoned = False
            self._load()
        elif self._log_seen is not None and self._log_size() != self._log_seen:
            self._catch_up(self._log_seen)

    def _log_size(self) -> int | None:
        try:
            return os.stat(self.files.events).st_size
        except OSError:
            return None

    def _abandon(self) -> None:
        """A step that ran out of its time budget (`waits.DeadlineExceeded`) stops as if it
        had been killed: its half-done state is not saved (the next step reloads the saved one
        and learns from the log what this one recorded, `_catch_up`), so an operator decision
        it could not finish is applied by a later call, once."""
        self.dirty = False
        self.must_save = False
        self._abandoned = True

    def _after_step(self) -> None:
        # (the log's size is known without a `stat`: the step's start took it, `_refresh`, and
        # each of its writes, `_wrote`; a line another process appends meanwhile without the
        # session lock is left for the next step's `_refresh` to learn from)
        if not self.dirty:
            return
        if (
            self.must_save or self.save_every_s <= 0
            or time.monotonic() - self._last_save >= self.save_every_s
        ):
            self.save()

    # -- events ----------------------------------------------------------------------------

    def write(self, event: dict[str, Any]) -> dict[str, Any]:
        """Append an event to the log (the engine does not see it); returns it as written."""
        written = self._events.append(event)
        self.state.last_seq = written["seq"]
        self._wrote()
        return written

    def write_many(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        written = self._events.append_many(events)
        if written:
            self.state.last_seq = written[-1]["seq"]
        self._wrote()
        return written

    def _wrote(self) -> None:
        """After a write: the state changed, and this step's events are its own (the log's
        size as the writer left it is what this object knows whole, `_log_seen`)."""
        self.dirty = True
        size = self._events.size
        if size is not None:
            self._log_seen = size

    def limit_warning(self, name: str, value: float, limit: float, unit: str) -> None:
        """Record that `name` reached its warning threshold (a `limit` event, action `warn`;
        `unit`: `cost_usd` or `tokens`) and notify the operators of it. The callers write it
        once (a daily budget once a day: `Spending.add`), and the notifier claims it by its
        seq, so it is sent once."""
        written = self.write({"type": LIMIT, "name": name, "value": value, "limit": limit,
                              "action": "warn", "unit": unit})
        announce(self.root, self.session_id, f"{LIMIT_WARNING_KEY}{written['seq']}")

    def observe(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """`record`, or only `write` once the session has ended."""
        if self.ended:
            self.write(event)
            return []
        return self.record(event)

    def record(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Write an event and let the engine see it; write the detections it causes."""
        written = self.write(event)
        findings = self.engine.observe(written, written["ts"])
        detections = [loop_cost.annotate(self.state, f.to_event()) for f in findings]
        if detections:
            self.write_many(detections)
        return detections

    # -- the session and its tasks ---------------------------------------------------------

    def start(self, agent: str, task: str | None, pid: int | None, heartbeat_s: float | None,
              extra: dict[str, Any] | None) -> None:
        """Write `session_start` (and `task_start` for `task`), take the first checkpoint;
        nothing when the session has started already."""
        if self.state.started:
            return
        self.state.started = True
        self.state.meta.update(agent=agent, heartbeat_s=heartbeat_s)
        event = {
            "type": "session_start", "agent": agent, "task": task, "cwd": self.cwd,
            "pid": pid, "policy": self.engine_policy_dict(), "heartbeat_s": heartbeat_s,
            "guard": self.settings.to_dict(), **(extra or {}),
        }
        if root_key(self.root) is not None:  # readers then check them (store.voice)
            event[SEALS_FIELD] = list(SEALED)
            event[MARKS_FIELD] = True  # and the catch-up its other lines
        if pid is not None:  # where the pid means something (see store.liveness)
            event.setdefault("host", THIS_HOST)
        self.record(event)
        for warning in switched_off(event["policy"]):  # shown with the session
            self.write({"type": "message", "role": "system",
                        "text": f"warning: this session's policy leaves the agent "
                                f"unsupervised: {warning}"})
        if task:
            self.task_start(task, None)
        if self.settings.checkpoint_at_start:
            self.checkpoint("session start")
        self.must_save = True

    def task_start(self, title: str, task_id: str | None,
                   extra: dict[str, Any] | None = None) -> str:
        self.state.tasks_started += 1
        task_id = task_id or f"t{self.state.tasks_started}"
        self.state.task = {"task_id": task_id, "title": title}
        self.record({"type": "task_start", "task_id": task_id, "title": title, **(extra or {})})
        return task_id

    def task_end(self, status: str, extra: dict[str, Any] | None = None) -> None:
        """End the open task (there must be one)."""
        task = self.state.task
        assert task is not None
        self.state.task = None
        self.state.plan_step_ended(task["task_id"], status)
        self.record({"type": "task_end", "task_id": task["task_id"], "status": status,
                     **(extra or {})})

    def end(self, status: str, reason: str | None) -> None:
        """Write `session_end` once (later calls do nothing)."""
        if self.ended:
            return
        if self.state.task is not None:
            self.task_end({"completed": "done", "failed": "failed"}.get(status, "skipped"))
        self.state.ended = status
        self.state.pending = None
        self.write({"type": "session_end", "status": status, "reason": reason})
        self.must_save = True

    def escalate(
        self, kind: str, reason: str, evidence: list[int], call_id: str | None,
        signature: str | None, level: int,
    ) -> None:
        """Raise an escalation (the engine's, or a pause): a checkpoint first, the
        `escalation` event, the state's `pending`, and the operators told."""
        cp = self.checkpoint(f"before escalation {self.state.escalations + 1}")
        self.state.escalations += 1
        esc_id = f"esc-{self.state.escalations}"
        now = self.clock()
        hold = is_hold({"kind": kind})  # an operator's own pause: no loop behind it
        deadline_s = (self.settings.pause_deadline_s if hold
                      else self.settings.escalation_deadline_s)
        options = [name for name in escalation_options()
                   if KINDS[name].needs != "checkpoint" or self.checkpoints is not None]
        event = {
            "type": "escalation", "escalation_id": esc_id, "level": 3,
            "reason": reason, "evidence": evidence, "options": options,
            "deadline_ts": now + deadline_s if deadline_s else None,
            "fallback": self.settings.fallback, "kind": kind,
            "checkpoint_id": cp.checkpoint_id if cp is not None else None,
            "call_id": call_id,
        }
        spent = loop_cost.since(self.state, min(evidence)) if evidence else None
        if spent is not None:
            event["spent"] = spent
        said = loop_cost.sentence(spent) if kind != "budget" and not hold else None
        if said:  # every reader of the reason (queue, prompt, notification, web) says it
            event["reason"] = f"{reason}; {said}"
        written = self.write(event)
        self.engine.observe(written, now)  # the agent waits for an operator: not working time
        self.state.pending = {**event, "signature": signature}
        self.must_save = True
        if not hold:  # an operator's own pause is no news to the operators
            announce(self.root, self.session_id, esc_id)

    # -- checkpoints -----------------------------------------------------------------------

    def checkpoint(self, label: str) -> CheckpointCommit | None:
        """Take a checkpoint and record it; None when checkpoints are off or it failed (said
        in the log)."""
        store = self.checkpoints
        if store is None:
            return None
        left = waits.remaining()  # a hold must still be answered: the checkpoint gets a share
        try:
            with waits.within(None if left is None else time.monotonic()
                              + left * CHECKPOINT_SHARE):
                cp = store.create(label, at_seq=self.state.last_seq)
        except WorkTreeTooBig as exc:
            self.state.meta["checkpoints_off"] = str(exc)
            self.must_save = True  # (not redone from the log)
            self._checkpoints = None
            self.write({"type": "message", "role": "system",
                        "text": f"checkpoints are off for this session: {exc}"})
            return None
        except (CheckpointError, waits.DeadlineExceeded) as exc:
            self.write({"type": "message", "role": "system",
                        "text": f"checkpoint '{label}' failed: {exc}"})
            return None
        self.state.since_checkpoint = 0
        self.record({"type": "checkpoint", "checkpoint_id": cp.checkpoint_id, "label": cp.label,
                     "commit": cp.commit, "at_seq": cp.at_seq, "files": cp.files,
                     "changed": cp.changed, **checkpoint_changes(cp), **_nested(cp)})
        return cp


class _Step:
    """Context of one public step: lock held, state fresh, saved afterwards when needed."""

    __slots__ = ("_cm", "_journal")

    def __init__(self, journal: SessionJournal) -> None:
        self._journal = journal
        self._cm = journal._lock.held()

    def __enter__(self) -> None:
        if self._journal._closed:
            raise RuntimeError("the guard is closed")
        self._cm.__enter__()
        try:
            self._journal._refresh()
        except BaseException:
            self._cm.__exit__(None, None, None)
            raise

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        try:
            if kind is not None and issubclass(kind, waits.DeadlineExceeded):
                self._journal._abandon()
            else:
                self._journal._after_step()
        finally:
            self._cm.__exit__(None, None, None)


def _nested(cp: CheckpointCommit) -> dict[str, Any]:
    """The `nested` field of a checkpoint event: the nested git repositories it left out (so
    the operator knows a rollback will not touch them), when there are any."""
    return {"nested": list(cp.nested)} if cp.nested else {}


def _hold(state: GuardState) -> str:
    """What a state's `hold_seal` covers: its pending escalation, its end, its position."""
    pending = state.pending.get("escalation_id") if state.pending else None
    return json.dumps([pending, state.ended, state.log_offset])
