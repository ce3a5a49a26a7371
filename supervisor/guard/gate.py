"""The call gate: the path every tool call takes through the guard, before and after it runs.

Before a call (`pre_call`), in named stages, every one after the first reading the call's
facts (`engine.facts.CallFacts`: its category, paths, edits, shell line and plan), read once
by the engine: `_operators` (the operators' new decisions first,
`desk.OperatorDesk.consume`, whose notes are merged into the verdict; an operator's rollback or
skip refuses the call), `_protection` (a write to the supervisor's own store is refused),
`_record` (the checkpoint cadence, the `tool_call` event with what is on disk), the engine's
check, `_hints` (the edit guidance's hints, the failure memory's nudge) and `_escalate` (the
findings and verdict recorded, the daily budgets, an escalation when the engine asks for one).
After it (`post_call`): the `tool_result` event with what the files it may have written hold
now, and the hint for an edit that failed.

Disobedience: every call the agent is told not to run is remembered (`settle`, the last
`REFUSALS_KEPT`), until a later verdict lets that same call run (an operator's approve after a
hold). A result for such a call means the agent ran it anyway: it is recorded as `disobeyed`
(shown in the session's history), and escalated again (so the operators are notified and the
agent's next call waits), unless an escalation is already waiting for them.

Its own module so the one path that runs on every tool call (where its cost is paid) reads top
to bottom in one place. It keeps no state of its own: all of it is in the journal's state, saved
by the step around it.
"""

from __future__ import annotations

from typing import Any

from supervisor.engine import Engine
from supervisor.engine.edit_hint import HINT_CHARS, with_hint
from supervisor.engine.facts import CallFacts
from supervisor.engine.fingerprint import output_hash
from supervisor.engine.recovery import region_room
from supervisor.engine.types import Check
from supervisor.guard import disk, loop_cost, store_protect
from supervisor.guard.checkpoints import CheckpointCommit
from supervisor.guard.desk import OperatorDesk
from supervisor.guard.edit_guidance import EditGuidance
from supervisor.guard.journal import SessionJournal
from supervisor.guard.memory import SessionMemory
from supervisor.guard.state import CALLS_KEPT, REFUSALS_KEPT
from supervisor.guard.verdict import Verdict, _merge, _verdict_event, pause_verdict, stopped
from supervisor.protocol.names import DISOBEYED, HINT

OUTPUT_KEEP = 8 * 1024
"""Characters of a tool's output kept in its `tool_result` event (the hash covers all of it)."""


class CallGate:
    """Decides on one session's tool calls and records them (inside a journal step)."""

    def __init__(self, journal: SessionJournal, desk: OperatorDesk) -> None:
        self.journal = journal
        self.desk = desk

    @property
    def engine(self) -> Engine:
        """The session's engine (the journal's: replaced when the state is reloaded)."""
        return self.journal.engine

    def pre_call(self, tool: str, args: dict[str, Any] | None, call_id: str | None,
                 batch: str | None) -> Verdict:
        """See `Guard.pre_call`. The call passes the stages below in order; the first two may
        answer it before the engine sees it."""
        args = args or {}
        now = self.journal.clock()
        call_id = call_id or f"c{self.journal.state.actions + 1}"
        notes, answered = self._operators(now, tool, args, call_id)
        if answered is not None:
            return answered
        facts = self.engine.facts(tool, args)  # read once; every stage below takes them
        refused = self._protection(notes, tool, args, facts, call_id)
        if refused is not None:
            return refused
        edits = self._edit_guidance()
        call = self._record(tool, args, facts, call_id, batch, edits)
        check = self.engine.check(call, call["ts"], facts)
        verdict = self._hints(_merge(notes, Verdict(check.action, check.level, check.message,
                                                    check.reason, call_id,
                                                    cached_output=check.cached_output)),
                              facts, call, edits)
        return self._escalate(now, verdict, check, call)

    def _operators(self, now: float, tool: str, args: dict[str, Any], call_id: str
                   ) -> tuple[list[Verdict], Verdict | None]:
        """The operators' new decisions first (`desk.OperatorDesk.consume`): their notes, to
        merge into the verdict, and the answer when the session ended, waits for an operator,
        or an operator command refuses this call (a rollback, a skip: recorded as refused,
        counted by the engine as an attempt, not checked)."""
        journal = self.journal
        state = journal.state
        if journal.ended:
            return [], stopped(journal.ended, call_id)
        unfinished = state.rollback_retry  # from an earlier call
        notes = self.desk.consume(now, call_id)
        if journal.ended:
            return notes, _merge(notes, stopped(journal.ended, call_id))
        if journal.pending is not None:
            return notes, _merge(notes, pause_verdict(journal.pending, call_id))
        state.actions += 1
        if unfinished and state.rollback_retry is unfinished:
            notes.append(self.desk.continue_rollback(call_id))
        early = [n for n in notes if not n.proceed]
        if early:
            return notes, self._refused(_merge(notes, early[0]), tool, args, call_id,
                                        "operator")
        return notes, None

    def _protection(self, notes: list[Verdict], tool: str, args: dict[str, Any],
                    facts: CallFacts, call_id: str) -> Verdict | None:
        """The refusal of a call that would change the supervisor's own files, if it is one."""
        protected = store_protect.refusal(facts, self.journal.root, self.journal.cwd,
                                          self.engine.policy)
        if protected is None:
            return None
        return self._refused(_merge(notes, Verdict("block", self.engine.level,
                                                   f"Refused by the supervisor: {protected}.",
                                                   "store_protected", call_id)),
                             tool, args, call_id, "supervisor")

    def _refused(self, verdict: Verdict, tool: str, args: dict[str, Any], call_id: str,
                 by: str) -> Verdict:
        """A call refused before the engine saw it, recorded with who refused it."""
        self.journal.record({"type": "tool_call", "call_id": call_id, "tool": tool,
                             "args": args, "refused_by": by})
        self.journal.write(_verdict_event(verdict, call_id))
        return verdict

    def _record(self, tool: str, args: dict[str, Any], facts: CallFacts, call_id: str,
                batch: str | None, edits: EditGuidance) -> dict[str, Any]:
        """The checkpoint cadence, then the `tool_call` event (the call as the agent sent it,
        with what is on disk); the call as written (with its `seq` and `ts`)."""
        journal = self.journal
        state = journal.state
        state.since_checkpoint += 1
        every = journal.settings.checkpoint_every
        if every and state.since_checkpoint >= every:
            journal.checkpoint(f"auto: every {every} actions")
        call = journal.write({"type": "tool_call", "call_id": call_id, "tool": tool,
                              "args": args, **self._on_disk(facts, batch)})
        calls = state.calls
        calls[call_id] = call["seq"]
        if len(calls) > CALLS_KEPT:
            del calls[next(iter(calls))]
        edits.on_call(call_id, call["seq"], tool, facts)
        return call

    def checkpoint_ahead(self) -> CheckpointCommit | None:
        """Take now the cadence's checkpoint that the next call would take before it runs
        (`_record`), None when it is not due (or the session ended or waits for an operator:
        that call will not run as it is). For the resident hook server, once a call's last hook
        is answered (`runtime.checkpoint_after`): the agent's model is thinking then, and the
        work tree is what its next call starts from, so the checkpoint protects that call as
        the inline one would, and the agent does not wait ~40 ms for git on the call's path.
        Taken, the count stands at -1, so the next call brings it to 0, as inline (where the
        call a checkpoint is taken for is not counted; `catch_up` reads it the same way from
        the log). Saved at once: another process that opens the session next (a guard of its
        own) must not take it again. Not taken (failed, skipped, the server killed first),
        the count is unchanged and the next call takes it inline: never skipped."""
        journal = self.journal
        state = journal.state
        every = journal.settings.checkpoint_every
        if not every or journal.ended or journal.pending is not None:
            return None
        if state.since_checkpoint + 1 < every:
            return None
        cp = journal.checkpoint(f"auto: every {every} actions")
        if cp is not None:
            state.since_checkpoint = -1
            journal.must_save = True
        return cp

    def _hints(self, verdict: Verdict, facts: CallFacts, call: dict[str, Any],
               edits: EditGuidance) -> Verdict:
        """What the engine's verdict is told with: where a refused or failing edit's text
        really is, and what failed this way in earlier sessions (a nudge, never a refusal)."""
        call_id = call["call_id"]
        if verdict.action == "block":  # a refused edit: where its text really is
            verdict.message = with_hint(verdict.message, edits.refused_edit_hint(facts))
        elif verdict.proceed:  # an edit that will fail: where its text is, with the call
            hint = edits.before_run_hint(call_id)
            if hint:
                verdict.message = with_hint(verdict.message, hint)
                verdict.action = "nudge"  # run it, and tell the agent
        if verdict.proceed:  # what failed this way in earlier sessions: told, never refused
            told = SessionMemory(self.journal).before_call(call, call_id)
            if told:
                verdict.message = "\n".join(m for m in (verdict.message, told) if m)
                verdict.action = "nudge"
        return verdict

    def _escalate(self, now: float, verdict: Verdict, check: Check,
                  call: dict[str, Any]) -> Verdict:
        """The engine's findings, limits and the verdict recorded; the store's daily budgets;
        then the escalation the engine asks for, or the end of the session at a hard limit."""
        journal = self.journal
        call_id = call["call_id"]
        events = [loop_cost.annotate(journal.state, f.to_event()) for f in check.findings]
        events += [hit.to_event() for hit in check.limits]
        breach = None
        if verdict.proceed and journal.spending is not None:  # the store's daily budgets
            breach = journal.spending.check(now)
            if breach is not None:
                verdict = Verdict("pause", 3, breach.reason, "budget", call_id)
                events.append({"type": "limit", "name": f"budget:{breach.rule.name}",
                               "value": breach.spent, "limit": breach.limit,
                               "action": "pause"})
        events.append(_verdict_event(verdict, call_id, self.engine.gauges(now)))
        journal.write_many(events)
        if breach is not None:
            journal.escalate("budget", breach.reason, [call["seq"]], call_id,
                             f"budget:{breach.rule.name}", 3)
            return pause_verdict(journal.pending, call_id)
        if check.action == "pause":
            esc = check.escalation
            kind = esc.kind if esc is not None else "detection"
            reason = esc.reason if esc is not None else (check.reason or "escalated")
            evidence = list(esc.evidence) if esc is not None else [call["seq"]]
            signature = (esc.signature if esc is not None else None) or check.signature
            journal.escalate(kind, reason, evidence, call_id, signature, check.level)
            return pause_verdict(journal.pending, call_id)
        if check.action == "stop":
            journal.end("terminated", check.reason or "a hard limit was reached")
        return verdict

    def post_call(self, call_id: str, text: str, ok: bool, error: str | None,
                  duration_ms: float | None, tool: str | None,
                  unknown: bool, verdict_known: bool = True) -> list[dict[str, Any]]:
        """See `Guard.post_call` (`text`: the output, escaped)."""
        journal = self.journal
        event: dict[str, Any] = {
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
            event["files"] = disk.digests(written, journal.cwd)
        journal.state.calls.pop(call_id, None)
        refused = journal.state.refused.pop(call_id, None) if journal.state.refused else None
        step = self.engine.pending_step(call_id)
        detections = journal.observe(event)
        if refused is not None and verdict_known and not journal.ended:
            detections.append(self._disobeyed(call_id, tool, refused))
        SessionMemory(journal).after_result(step, call_id, journal.clock())
        # told with a recovery turn, the file region fits in what the turn leaves
        room = region_room((d.get("message") for d in detections), HINT_CHARS)
        hint = self._edit_guidance().on_result(call_id, bool(ok), text, error, room)
        if hint:
            detections.append(journal.write({"type": HINT, "call_id": call_id,
                                             "kind": "failed_edit", "message": hint}))
        return detections

    def settle(self, verdict: Verdict, *, answer: bool = False) -> Verdict:
        """Remember whether the agent was told not to run `verdict`'s call (see the module
        docstring); returns the verdict. `answer`: the verdict ends a wait for an operator, and
        if it lets the agent go on, every call held (`pause`) meanwhile may run."""
        call_id = verdict.call_id
        state = self.journal.state
        refused = state.refused if state.refused is not None else {}
        before = len(refused)
        if answer and verdict.proceed:
            for held in [c for c, action in refused.items() if action == "pause"]:
                del refused[held]
        if call_id is not None:
            refused.pop(call_id, None)
            if not verdict.proceed:
                refused[call_id] = verdict.action
                while len(refused) > REFUSALS_KEPT:
                    del refused[next(iter(refused))]
                self.journal.must_save = True  # a hold alone writes nothing else
        if refused or before:
            self.journal.dirty = True
        state.refused = refused or None  # the state file as before until there is one
        return verdict

    def _disobeyed(self, call_id: str, tool: str | None, refused: str) -> dict[str, Any]:
        """A result arrived for a call the agent was told not to run: record it, and escalate
        again unless an escalation already waits. The reason names the call, never its
        arguments (they may hold secrets; the history has them)."""
        journal = self.journal
        seq = journal.state.last_seq
        name = f" ({tool})" if tool else ""
        reason = (f"The agent ran call {call_id}{name} although the supervisor refused it "
                  f"({refused}): it does not follow the supervisor's answers.")
        told = (f"You ran call {call_id}{name} although the supervisor refused it "
                f"({refused}). Do not run a call the supervisor refuses; the operators have "
                "been told.")
        event = journal.write({"type": DISOBEYED, "call_id": call_id, "refused": refused,
                               "result_seq": seq, "message": told})
        if journal.pending is None:
            journal.escalate("disobedience", reason, [seq], call_id, None, 3)
        return event

    def _edit_guidance(self) -> EditGuidance:
        return EditGuidance(self.journal.state, self.journal.files.reads, self.journal.cwd)

    def _on_disk(self, facts: CallFacts, batch: str | None) -> dict[str, Any]:
        """Extension fields of a `tool_call`: its batch, the state on disk of a file it reads
        (for the file cache's freshness check) and the digests of the files it may write,
        before it runs (so an undo is seen as one); see guard.disk. A patch run as a shell line
        (Codex's `apply_patch <<'EOF'`) names its files only in its headers, every one of them
        (the engine plans such a line as unknown): its `files_before` is what records them."""
        extra: dict[str, Any] = {"batch": batch} if batch else {}
        read = facts.read_path
        if read:
            extra["file"] = disk.file_state(read, self.journal.cwd)
        written = self.engine.planned_paths(facts)
        if facts.edits and facts.line is not None:
            written = list(dict.fromkeys([*written, *facts.edited_paths]))
        if written:
            extra["files_before"] = disk.digests(written, self.journal.cwd)
        return extra
