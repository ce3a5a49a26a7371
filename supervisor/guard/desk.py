"""The operator desk: the guard's side of the control channel (`control.jsonl`).

Operators decide (an escalation's answer, or a command of their own: pause, guidance,
rollback, reset, quiet, skip, split, replan, abort) in another process, at any time; the agent
only learns of it at its next step. The desk is where a decision becomes an effect, exactly
once: it reads what arrived past the saved offset, checks each decision (sealed by an operator
tool, not seen before, still relevant), applies it to the engine, the state and the work tree
(a rollback) and records the outcome (`decision_applied` or `decision_ignored`, with the
reason). It also applies a pending escalation's fallback when its deadline passes, and keeps
the verdict each decision left for whoever waits on it (`resolution`).

Its own module so the decisions' meaning sits in one place, apart from the call path
(`gate.CallGate` asks it to `consume` before each call) and from the bookkeeping it relies on
(`journal.SessionJournal`: state, events, tasks, escalations, checkpoints).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from typing import Any

from supervisor.engine import Engine
from supervisor.engine.decisions import effect_of
from supervisor.engine.detectors import NAMES as DETECTOR_NAMES
from supervisor.engine.effects import Effect
from supervisor.guard import control, plans
from supervisor.guard.checkpoints import (
    CheckpointError,
    CheckpointStore,
    RestoreInterrupted,
    RestoreResult,
)
from supervisor.guard.journal import CHECKPOINT_SHARE, SessionJournal
from supervisor.guard.state import GuardState
from supervisor.guard.verdict import Verdict, _verdict_dict, _verdict_from, stopped
from supervisor.protocol.decisions import KINDS, Context, Ignored, Result, Skipped, is_hold
from supervisor.store import provenance, waits

ROLLBACK_ATTEMPTS = 3
"""A rollback whose git is killed at the deadline is continued at the next tool calls, each
with a share of its own budget (`CHECKPOINT_SHARE`), at most this many attempts in all: a tree
too big to restore in time holds up three calls, never every later one."""
_RESOLUTIONS_KEPT = 16


class OperatorDesk:
    """Applies the operators' decisions to one session (its `SessionJournal`)."""

    def __init__(self, journal: SessionJournal) -> None:
        self.journal = journal

    # what the journal holds now (it reloads the state and the engine when another process
    # of the session saved them)

    @property
    def state(self) -> GuardState:
        return self.journal.state

    @property
    def engine(self) -> Engine:
        return self.journal.engine

    @property
    def pending(self) -> dict[str, Any] | None:
        return self.journal.pending

    @property
    def ended(self) -> str | None:
        return self.journal.ended

    @property
    def checkpoints(self) -> CheckpointStore | None:
        return self.journal.checkpoints

    def resolution(self, escalation_id: str | None) -> Verdict:
        """The verdict the decision of an escalation left for whoever waited on it."""
        found = self.state.resolutions.get(escalation_id or "")
        if found is not None:
            return _verdict_from(found)
        if self.ended:
            return stopped(self.ended, None)
        return Verdict("allow", self.engine.level, None, None)

    def consume(self, now: float, call_id: str | None) -> list[Verdict]:
        """Apply new operator decisions, then the pending escalation's deadline."""
        notes: list[Verdict] = []
        offset = self.state.control_offset
        if control.has_news(self.journal.files.control, offset):
            lines, offset = control.read_from(self.journal.files.control, offset)
            self.state.control_offset = offset
            self.journal.must_save = True
            self.journal.dirty = True
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
        seen = self.state.seen_decisions
        logged = self.state.logged_decisions
        if line.decision_id in logged:  # its outcome is in the log already: never again
            logged.remove(line.decision_id)
            seen.append(line.decision_id)
            return None
        decision = line.decision
        if decision is None:
            self._ignore(line.decision_id, f"malformed: {line.problem}")
            return None
        dec_id = decision["decision_id"]
        if not provenance.is_sealed(self.journal.root, self.journal.session_id, decision):
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
            decided = self.state.decided.get(esc_id)
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
        self.journal.write({"type": "decision_ignored", "decision_id": decision_id,
                            "reason": reason})

    def _applied(self, esc_id: str | None, decision: dict[str, Any], outcome: str,
                 effect: Effect) -> None:
        """Apply `effect` to the engine and record it with the decision (`decision_applied`).

        The engine is not shown this event: it already applied the effect, exactly as a replay
        does when it observes the event (`supervisor.engine.decisions`)."""
        now = self.journal.clock()
        self.engine.apply_effect(effect, now)
        event = {"type": "decision_applied", "ts": now, "escalation_id": esc_id,
                 "decision_id": decision["decision_id"], "action": decision["action"],
                 "outcome": outcome, "effect": effect.to_dict(), "level": self.engine.level}
        if decision.get("operator"):
            event["operator"] = decision["operator"]
        if decision.get("tasks") is not None:  # a split: its plan, for every reader
            event["tasks"] = decision["tasks"]
        self.journal.write(event)
        self.journal.must_save = True

    def _apply(
        self, decision: dict[str, Any], pending: dict[str, Any], call_id: str | None,
        outcome_prefix: str = "",
    ) -> Verdict | None:
        """Resolve the pending escalation with `decision` (its kind carries it out); return the
        verdict for the agent, or None when the kind cannot (the escalation still waits)."""
        esc_id = pending["escalation_id"]
        kind = KINDS[decision["action"]]
        call_id = call_id or pending.get("call_id")
        # an operator pause is the guard's own escalation: the engine has none to answer
        effect = effect_of(self.engine, kind.effect, answering=not is_hold(pending),
                           decision=decision)
        self.state.pending = None
        self.state.decided[esc_id] = decision["decision_id"]
        ctx = Context(esc_id, pending.get("kind"), pending.get("reason"), bool(outcome_prefix),
                      decision.get("operator"), call_id)
        result = kind.carry_out(self, decision, ctx, effect)
        if isinstance(result, Ignored):
            self.state.pending = pending
            del self.state.decided[esc_id]
            self._ignore(decision["decision_id"], result.reason)
            return None
        if not result.carried_out:
            effect = effect.not_carried_out()
        spending = self.journal.spending
        if (kind.approves and pending.get("kind") == "budget" and not outcome_prefix
                and result.carried_out and spending is not None):  # an operator's, once
            name = str(pending.get("signature") or "").removeprefix("budget:")
            raised = spending.raise_once(name, self.journal.clock())
            result.outcome += f"; daily budget '{name}' raised by {raised:g} for today"
        self._applied(esc_id, decision, outcome_prefix + result.outcome, effect)
        verdict = Verdict(result.verdict or "allow", self.engine.level, result.message,
                          result.outcome, call_id, escalation_id=esc_id, decision=kind.name,
                          changed_files=list(result.changed_files),
                          news=kind.news or result.news)
        resolutions = self.state.resolutions
        resolutions[esc_id] = _verdict_dict(verdict)
        while len(resolutions) > _RESOLUTIONS_KEPT:
            del resolutions[next(iter(resolutions))]
        self.journal.write({"type": "verdict", "call_id": call_id or esc_id,
                            "action": verdict.action, "level": verdict.level,
                            "reason": result.outcome, "message": verdict.message,
                            "escalation_id": esc_id})
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
        result = kind.carry_out(self, decision,
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
                       changed_files=list(result.changed_files),
                       news=kind.news or result.news)

    # -- the Desk each decision kind carries itself out on (protocol.decisions.base.Desk) --

    def has_checkpoints(self) -> bool:
        return self.checkpoints is not None

    def rollback(self, checkpoint_id: str) -> Result:
        verdict, outcome, done = self._rollback(checkpoint_id, None)
        return Result(verdict.action, verdict.message, outcome, carried_out=done,
                      changed_files=tuple(verdict.changed_files))

    def open_task(self) -> str | None:
        task = self.state.task
        return task["task_id"] if task is not None else None

    def skip_task(self) -> Skipped:
        task = self.state.task
        in_plan = plans.skip(self.journal)
        if task is not None and self.state.task is task:  # a plan's step ends it itself
            self.journal.task_end("skipped")
        task_id = task["task_id"] if task is not None else None
        return Skipped(task_id, *in_plan) if in_plan else Skipped(task_id, None, None)

    def start_plan(self, decision: Mapping[str, Any], why: str | None) -> str:
        return plans.start(self.journal, dict(decision), why)

    def replan(self, tasks: list[str]) -> str | None:
        return plans.replan(self.journal, tasks)

    def drop_plan(self) -> str | None:
        return plans.drop(self.journal)

    def can_reset(self) -> bool:
        return self.engine.can_reset()

    def count_reset(self) -> str:
        return self._reset_outcome(True)

    def reset_refused(self) -> str:
        return self._reset_outcome(False)

    def detectors(self) -> tuple[str, ...]:
        return tuple(DETECTOR_NAMES)

    def hold(self, kind: str, reason: str, call_id: str | None) -> None:
        self.journal.escalate(kind, reason, [], call_id, None, 3)

    def end_session(self, status: str, reason: str) -> None:
        self.journal.end(status, reason)

    # -- rollbacks ---------------------------------------------------------------------------

    def _rollback(self, checkpoint_id: str, call_id: str | None) -> tuple[Verdict, str, bool]:
        """Restore a checkpoint: (verdict for the agent, outcome, whether it was restored)."""
        store = self.checkpoints
        self.state.rollback_retry = None  # a new rollback replaces an unfinished one
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
            self.state.rollback_retry = {
                "checkpoint_id": checkpoint_id, "attempt": attempt, "safety_id": safety_id}
            outcome = (f"rollback to {checkpoint_id} interrupted ({exc}); the work tree may be "
                       f"partly restored ({kept}); attempt {attempt} of {ROLLBACK_ATTEMPTS}, "
                       "continued at the next tool call")
            message = (f"The operator asked for a rollback to checkpoint {checkpoint_id}; it is "
                       "not finished and continues at your next tool call. The call was not "
                       "run; do not change files until the rollback is reported done.")
        else:
            self.state.rollback_retry = None
            outcome = (f"rollback to {checkpoint_id} ABANDONED after {attempt} attempts ({exc})"
                       f": the work tree is partly restored and differs from the checkpoint "
                       f"({kept}); roll back again by hand when the agent is idle")
            message = (f"The operator asked for a rollback to checkpoint {checkpoint_id}; it "
                       "could not finish in time and was abandoned, so the files are partly "
                       "restored. The call was not run; check the files before you go on.")
        return (Verdict("block", self.engine.level, message, outcome, call_id), outcome,
                False)

    def continue_rollback(self, call_id: str | None) -> Verdict:
        """Continue an interrupted rollback with a share of this call's budget; the outcome is
        recorded for the operator (a `rollback` event when done, a system message otherwise)."""
        retry = self.state.rollback_retry
        assert retry is not None  # the gate calls this only for an unfinished rollback
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
            self.state.rollback_retry = None
            outcome = (f"rollback to {retry['checkpoint_id']} abandoned on attempt {attempt}: "
                       f"{exc}; the work tree may be partly restored")
            verdict = Verdict("block", self.engine.level,
                              f"The rollback the operator asked for could not be finished "
                              f"({exc}); the files may be partly restored. The call was not "
                              "run; check the files before you go on.", outcome, call_id)
        else:
            self.state.rollback_retry = None
            verdict, outcome, _ = self._restored(result, call_id, attempt=attempt)
        self.journal.write({"type": "message", "role": "system", "text": outcome})
        verdict.decision = "rollback"
        return verdict

    def _restored(self, result: RestoreResult, call_id: str | None, *, attempt: int = 1
                  ) -> tuple[Verdict, str, bool]:
        extra = {"attempt": attempt} if attempt > 1 else {}
        for event in result.events(self.state.last_seq, **extra):
            self.journal.record(event)
        self.state.since_checkpoint = 0
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
        self.state.resets += 1
        shown = f"{limit:g}" if limit is not None else "unlimited"
        return f"counters reset ({self.state.resets} of {shown})"

