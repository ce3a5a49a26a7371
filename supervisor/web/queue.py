"""What the web view shows and does: the live "needs you" queue (the dashboard's model, folded
by the store's follower in a thread of its own) and the answers, checked and written exactly as
the terminal's (`operator.refusals`, `operator.send`)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable
from typing import Any

from supervisor import redact
from supervisor.guard.inspect import still_waiting
from supervisor.operator.outcome import answered_said, applied_said
from supervisor.operator.refusals import answer_refusal, unread_decisions
from supervisor.operator.send import DecisionError, send_decision
from supervisor.protocol.decisions import KINDS, plan_problem
from supervisor.safetext import clean
from supervisor.store.base import Follow, SessionBatch, Store
from supervisor.store.voice import NO_SEAL_NOTE
from supervisor.tui.event_detail import evidence_steps
from supervisor.tui.history import recent_steps
from supervisor.tui.model import DashboardModel, SessionState

ANSWER_WAIT_S = 5.0
"""How long an answer waits for the agent to apply it before saying it was written."""
MAX_TEXT = 4000
RECENT_STEPS = 8
"""Steps before the escalation the page shows under its evidence (as the terminal's view)."""


class Refused(Exception):
    """An answer that cannot apply; the message is the terminal's words."""


class LiveQueue:
    """The store's sessions, kept up to date by a follower thread."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.model = DashboardModel(store)
        self._lock = threading.Lock()
        self._stop: asyncio.Event | None = None
        self._closing = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self.loaded = threading.Event()
        """Set once the store's sessions have been read a first time: until then the page
        says it is loading (an empty queue then means nothing)."""
        self.total: int | None = None
        """Sessions in the store when the server started (None: unknown yet)."""
        self._follower: Follow | None = None
        """Made in the follower's thread, where it runs."""
        self._thread = threading.Thread(target=self._run, name="web-follower", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        with self._lock:
            self._closing = True
            if self._loop is not None and self._stop is not None:
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        try:
            self.total = len(self.store.session_ids())
        except (OSError, ValueError):
            self.total = None
        if self.total == 0:  # nothing to read: the follower delivers nothing until a change
            self.loaded.set()

        async def main() -> None:
            stop = asyncio.Event()
            with self._lock:  # a close() before this point must still stop the follower
                self._loop, self._stop = asyncio.get_running_loop(), stop
                if self._closing:
                    return
            self._follower = self.store.follower()
            await self._follower.run(self._consume, stop)

        asyncio.run(main())

    async def _consume(self, batches: list[SessionBatch]) -> None:
        with self._lock:
            self.model.apply(batches)
        # a follower that delivers its first load in pieces says when the last one comes
        # (`Follower.loading`): an earlier piece's queue is not the store's
        if getattr(self._follower, "loading", None) is None:
            self.loaded.set()

    # -- what the page shows -------------------------------------------------------------

    def snapshot(self, now: float | None = None, statuses: Iterable[str] = (),
                 decisions: Iterable[tuple[str, str]] = (),
                 escalations: Iterable[tuple[str, str]] = ()) -> dict[str, Any]:
        """What the page shows: the queue, the stale and unsupervised sessions, and the status
        of the sessions in `statuses` only (the page asks for the one a link names: the
        status of every session would cost each 2-second refresh a walk over the whole store,
        seconds and megabytes with 100,000 sessions), what became of the `decisions`
        (session, decision id) the page sent and still shows as written, and how the
        `escalations` (session, escalation id) whose cards it still shows were decided, once
        they no longer wait (the terminal's words: `operator.outcome.answered_said`)."""
        now = time.time() if now is None else now
        with self._lock:
            queue = [self._entry(e.session_id, e.escalation, now, stale=False)
                     for e in self.model.queue(now)]
            stale = [self._entry(e.session_id, e.escalation, now, stale=True)
                     for e in self.model.stale(now)]
            sessions = {sid: self.model.status(sid, now) for sid in statuses
                        if sid in self.model.sessions}
            count = len(self.model.sessions)
            followed: dict[str, dict[str, str]] = {}
            for sid, decision_id in decisions:
                st = self.model.sessions.get(sid)
                out = st.outcomes.get(decision_id) if st is not None else None
                if st is not None and out is not None:
                    status, said = _said(out.state, out.detail, out.answered,
                                         still_waiting(st.summary, sid))
                    followed[f"{sid}/{decision_id}"] = {"status": status, "result": said}
            decided: dict[str, str] = {}
            for sid, eid in escalations:
                st = self.model.sessions.get(sid)
                if st is None or eid in st.summary.pending:
                    continue
                answer = st.summary.answers.get(eid)
                said = (answered_said(None, None, None, None, st.summary.end_status)
                        if answer is None else answered_said(*answer))
                decided[f"{sid}/{eid}"] = _t(said, 600)
            silent = [{"session": sid, "reason": _t(reason, 400),
                       "agent": _t(st.summary.agent or "", 60),
                       "task": _t(st.summary.task or "", 200)}
                      for sid, st in self.model.sessions.items() if not st.gone
                      and (reason := self.model.unsupervised(sid, now)) is not None]
        return {"now": now, "queue": queue, "stale": stale, "sessions": sessions,
                "count": count, "decisions": followed, "decided": decided,
                "unsupervised": silent,
                "loading": not self.loaded.is_set(), "total": self.total}

    def _entry(self, sid: str, esc: dict[str, Any], now: float, *, stale: bool
               ) -> dict[str, Any]:
        summary = self.model.sessions[sid].summary
        eid = str(esc.get("escalation_id"))
        life = self.model.liveness(sid, now)
        return {
            "session": sid, "escalation_id": _t(eid, 128), "reason": _t(esc.get("reason"), 2000),
            "kind": _t(esc.get("kind") or "", 40), "ts": esc.get("ts"),
            "deadline_ts": esc.get("deadline_ts"), "fallback": _t(esc.get("fallback"), 20),
            "options": [_option(o) for o in esc.get("options") or [] if _answerable_here(o)],
            "checkpoint_id": _t(esc.get("checkpoint_id") or "", 128) or None,
            "agent": _t(summary.agent or "", 60), "task": _t(summary.task or "", 200),
            "no_seal": None if summary.sealed else NO_SEAL_NOTE,
            "stale": stale, "liveness": _t(life.reason, 200),
            "notifications": [
                {"service": _t(redact.in_text(service), 200), "outcome": n["outcome"],
                 "attempt": n["attempt"],  # redacted when read already; said again here
                 "reason": _t(redact.in_text(n.get("reason") or ""), 300) or None}
                for service, n in summary.notifications.get(eid, {}).items()
            ],
        }

    # -- one escalation in full ----------------------------------------------------------

    def escalation(self, session: str, escalation_id: str) -> dict[str, Any]:
        """What the terminal's escalation view shows besides the card: each evidence step
        with its call and result, the steps before it, and the checkpoints a rollback may go
        back to (newest first, with what a rollback to each throws away). Reads the log: the
        handler's thread waits, the follower does not."""
        with self._lock:
            st = self.model.sessions.get(session)
            esc = st.summary.pending.get(escalation_id) if st is not None else None
            if st is None or esc is None:
                raise Refused(f"nothing waits for an answer at {_t(session, 128)} "
                              f"{_t(escalation_id, 128)}")
            history = st.history
            seqs = [n for n in esc.get("evidence") or []
                    if isinstance(n, int) and not isinstance(n, bool)]
            checkpoints = _checkpoints(st)
        steps = evidence_steps(history, seqs)
        return {
            "evidence_count": len(seqs),
            "evidence": [{
                "seq": step.seq, "type": step.type, "summary": _t(step.summary, 300),
                "call": [step.call[0], _t(step.call[1], 300)] if step.call else None,
                "result": [step.result[0], _t(step.result[1], 300)] if step.result else None,
                "ok": step.ok, "error": _t(step.error, 120) or None,
                "excerpt": clean(step.excerpt, keep_newlines=True, limit=600),
            } for step in steps],
            "recent": [{"seq": row.seq, "type": row.type, "text": _t(row.text, 300)}
                       for row in recent_steps(history, RECENT_STEPS,
                                               before_seq=esc.get("seq"))],
            "checkpoints": checkpoints,
            "escalation_checkpoint": _t(esc.get("checkpoint_id") or "", 128) or None,
        }

    # -- answers ---------------------------------------------------------------------------

    def answer(self, session: str, escalation_id: str, action: str, text: str | None,
               operator: str, *, checkpoint_id: str | None = None,
               tasks: list[str] | None = None) -> dict[str, Any]:
        """Check, write and follow one answer; raises `Refused` with the terminal's words.

        What the answer needs comes from its kind (`KINDS[action].needs`): guidance's text, the
        checkpoint a rollback goes back to (one the session recorded; the escalation's own when
        none is chosen), a split's steps."""
        operator = clean(operator, keep_newlines=False, limit=80).strip()
        if not operator:
            raise Refused("say who you are: the answer is recorded with your name")
        try:
            known = self.store.exists(session)
        except ValueError:
            known = False
        if not known:
            raise Refused(f"no session '{clean(session, keep_newlines=False, limit=128)}'")
        summary = self.store.summary(session)
        refusal = answer_refusal(summary, escalation_id, action, time.time(),
                                 unread_decisions(self.store, session, summary))
        if refusal:
            raise Refused(refusal)
        kind = KINDS[action]
        if kind.needs not in WEB_NEEDS:
            raise Refused(f"{action} needs {kind.needs}: give it from the dashboard or the CLI")
        checkpoint = plan = None
        if kind.needs == "text":
            text = (text or "")[:MAX_TEXT]
            if not text.strip():
                raise Refused(f"{action} needs a text: write it first")
        else:
            text = None
        if kind.needs == "checkpoint":
            checkpoint = checkpoint_id or summary.pending[escalation_id].get("checkpoint_id")
            if not checkpoint:
                raise Refused("this escalation has no checkpoint to roll back to")
            with self._lock:
                st = self.model.sessions.get(session)
                known_ids = {cp.checkpoint_id for cp in st.checkpoints} if st else set()
            if checkpoint_id and checkpoint_id not in known_ids:
                raise Refused(f"no checkpoint '{_t(checkpoint_id, 80)}' in {_t(session, 128)}")
        if kind.needs == "tasks":
            plan = [step.strip() for step in tasks or [] if step.strip()]
            problem = plan_problem(plan, action)
            if problem:
                raise Refused(problem)
        after = self.store.end_cursor(session)
        try:
            decision_id = send_decision(self.store, session, action,
                                        escalation_id=escalation_id, text=text,
                                        checkpoint_id=checkpoint, operator=operator,
                                        tasks=plan)
        except DecisionError as exc:
            raise Refused(str(exc)) from exc
        outcome = self.store.wait_outcome(session, decision_id, after, ANSWER_WAIT_S)
        if outcome is None:
            status, said = _said("sent", "")
        elif outcome["type"] == "decision_applied":
            status, said = _said("applied", outcome.get("outcome"), outcome.get("escalation_id"),
                                 still_waiting(self.store.summary(session), session))
        elif outcome["type"] == "session_end":
            status = "ended"
            said = f"the session ended ({_t(outcome.get('status'), 40)}) before the agent read it"
        else:
            status, said = _said("ignored", outcome.get("reason"))
        return {"decision_id": decision_id, "status": status, "result": said,
                "operator": operator, "checkpoint_id": checkpoint}


def _said(state: str, detail: object, answered: object = None,
          waits: str | None = None) -> tuple[str, str]:
    """(status, result line) of a decision as the agent side reported it: one wording for the
    answer's reply and for an answer followed afterwards (applied: `operator.outcome`, as
    every view says it)."""
    if state == "applied":
        return "applied", _t(applied_said(detail, answered, waits), 600)
    if state == "ignored":
        return "ignored", f"ignored: {_t(detail, 300)}"
    return "written", "written; the agent has not picked it up yet"


def _t(value: object, limit: int) -> str:
    return clean("" if value is None else str(value), keep_newlines=False, limit=limit)


def _checkpoints(st: SessionState) -> list[dict[str, Any]]:
    """The session's checkpoints, newest first, one per id (a later one with the same id is
    the one kept, as the terminal's picker does)."""
    unique = {cp.checkpoint_id: cp for cp in st.checkpoints}
    out = []
    for cp in reversed(unique.values()):
        stat = cp.diffstat
        if stat is not None and stat.since is None:
            changed = f"first, {stat.added} files"
        elif stat is not None:
            changed = f"+{stat.added} ~{stat.modified} -{stat.deleted}"
        elif cp.changed_files is not None:
            changed = f"{len(cp.changed_files)} changed"
        else:
            changed = f"{cp.files} files"
        later = st.changed_in_later_checkpoints(cp.checkpoint_id)
        out.append({"checkpoint_id": _t(cp.checkpoint_id, 80), "seq": cp.at_seq, "ts": cp.ts,
                    "label": _t(cp.label, 120), "changed": changed,
                    "throws_away": None if later is None else [_t(f, 200) for f in later[:50]],
                    "throws_away_more": 0 if later is None else max(0, len(later) - 50)})
    return out


WEB_NEEDS = (None, "text", "checkpoint", "tasks")
"""What this page can give an answer: nothing, a text box, a checkpoint picked from the
session's, or a plan's steps (one a line). A kind that needs anything else is not offered."""


def _answerable_here(action: object) -> bool:
    """An escalation's option this page can answer with (its kind's `needs`)."""
    kind = KINDS.get(action) if isinstance(action, str) else None
    return kind is not None and kind.answers and kind.needs in WEB_NEEDS


def _option(action: str) -> dict[str, Any]:
    """An answer as the page offers it, from its kind: its label, what it needs, and the
    question asked before it is sent (a kind with `confirm`, as the terminal's `+y`)."""
    kind = KINDS[action]
    return {"action": kind.name, "title": kind.title, "needs": kind.needs,
            "summary": kind.summary, "confirm": kind.confirm}
