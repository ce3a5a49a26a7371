"""What the web view shows and does: the live "needs you" queue (the dashboard's model, folded
by the store's follower in a thread of its own) and the answers, checked and written exactly as
the terminal's (`guard.refusals`, `guard.operator`)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

from supervisor.guard.operator import DecisionError, send_decision
from supervisor.guard.refusals import answer_refusal, unread_decisions
from supervisor.protocol.decisions import KINDS
from supervisor.safetext import clean
from supervisor.store.base import SessionBatch, Store
from supervisor.tui.model import DashboardModel

ANSWER_WAIT_S = 5.0
"""How long an answer waits for the agent to apply it before saying it was written."""
MAX_TEXT = 4000


class Refused(Exception):
    """An answer that cannot apply; the message is the terminal's words."""


class LiveQueue:
    """The store's sessions, kept up to date by a follower thread."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.model = DashboardModel(store)
        self._lock = threading.Lock()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.loaded = threading.Event()
        self._thread = threading.Thread(target=self._run, name="web-follower", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            await self.store.follower().run(self._consume, self._stop)

        asyncio.run(main())

    async def _consume(self, batches: list[SessionBatch]) -> None:
        with self._lock:
            self.model.apply(batches)
        self.loaded.set()

    # -- what the page shows -------------------------------------------------------------

    def snapshot(self, now: float | None = None) -> dict[str, Any]:
        now = time.time() if now is None else now
        with self._lock:
            queue = [self._entry(e.session_id, e.escalation, now, stale=False)
                     for e in self.model.queue(now)]
            stale = [self._entry(e.session_id, e.escalation, now, stale=True)
                     for e in self.model.stale(now)]
            sessions = {sid: self.model.status(sid, now) for sid in self.model.sessions}
            silent = [{"session": sid, "reason": _t(reason, 400),
                       "agent": _t(st.summary.agent or "", 60),
                       "task": _t(st.summary.task or "", 200)}
                      for sid, st in self.model.sessions.items() if not st.gone
                      and (reason := self.model.unsupervised(sid, now)) is not None]
        return {"now": now, "queue": queue, "stale": stale, "sessions": sessions,
                "unsupervised": silent}

    def _entry(self, sid: str, esc: dict[str, Any], now: float, *, stale: bool
               ) -> dict[str, Any]:
        summary = self.model.sessions[sid].summary
        eid = str(esc.get("escalation_id"))
        life = self.model.liveness(sid, now)
        return {
            "session": sid, "escalation_id": _t(eid, 128), "reason": _t(esc.get("reason"), 2000),
            "kind": _t(esc.get("kind") or "", 40), "ts": esc.get("ts"),
            "deadline_ts": esc.get("deadline_ts"), "fallback": _t(esc.get("fallback"), 20),
            "options": [_t(o, 20) for o in esc.get("options") or [] if _answerable_here(o)],
            "checkpoint_id": _t(esc.get("checkpoint_id") or "", 128) or None,
            "agent": _t(summary.agent or "", 60), "task": _t(summary.task or "", 200),
            "stale": stale, "liveness": _t(life.reason, 200),
            "notifications": [
                {"service": _t(service, 200), "outcome": n["outcome"],
                 "attempt": n["attempt"], "reason": _t(n.get("reason") or "", 300) or None}
                for service, n in summary.notifications.get(eid, {}).items()
            ],
        }

    # -- answers ---------------------------------------------------------------------------

    def answer(self, session: str, escalation_id: str, action: str, text: str | None,
               operator: str) -> dict[str, Any]:
        """Check, write and follow one answer; raises `Refused` with the terminal's words."""
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
        kind = KINDS.get(action)
        if kind is not None and kind.needs not in WEB_NEEDS:
            raise Refused(f"{action} needs {kind.needs}: give it from the dashboard or the CLI")
        checkpoint = None
        if KINDS[action].needs == "checkpoint":
            checkpoint = summary.pending[escalation_id].get("checkpoint_id")
            if not checkpoint:
                raise Refused("this escalation has no checkpoint to roll back to")
        if text is not None:
            text = text[:MAX_TEXT]
        after = self.store.end_cursor(session)
        try:
            decision_id = send_decision(self.store, session, action,
                                        escalation_id=escalation_id, text=text,
                                        checkpoint_id=checkpoint, operator=operator)
        except DecisionError as exc:
            raise Refused(str(exc)) from exc
        outcome = self.store.wait_outcome(session, decision_id, after, ANSWER_WAIT_S)
        if outcome is None:
            said = "written; the agent has not picked it up yet"
        elif outcome["type"] == "decision_applied":
            said = f"applied: {_t(outcome.get('outcome'), 300)}"
        elif outcome["type"] == "session_end":
            said = f"the session ended ({_t(outcome.get('status'), 40)}) before the agent read it"
        else:
            said = f"ignored: {_t(outcome.get('reason'), 300)}"
        return {"decision_id": decision_id, "result": said, "operator": operator}


def _t(value: object, limit: int) -> str:
    return clean("" if value is None else str(value), keep_newlines=False, limit=limit)


WEB_NEEDS = (None, "text", "checkpoint")
"""What this page can give an answer: nothing, a text box, or the escalation's own checkpoint
(a plan of sub-tasks is the dashboard's and the CLI's)."""


def _answerable_here(action: object) -> bool:
    """An escalation's option this page can answer with (its kind's `needs`)."""
    kind = KINDS.get(action) if isinstance(action, str) else None
    return kind is not None and kind.answers and kind.needs in WEB_NEEDS
