"""The export loop: read the store, translate, send, and only then move the cursor.

Every session is read from its first event (the translator must rebuild the spans still open),
but what events up to the session's saved cursor finish was sent before and is dropped, so a
restart neither loses nor doubles a span. What the events after it finish is sent in batches of
at most `BATCH_SPANS` spans; when the collector acknowledges a batch, its metric measures are
recorded and the cursor moves past its events. A batch the collector refuses is kept and tried
again with back-off (`--follow`), or counted and reported as not sent (a one-shot export): the
store is never touched, and the next run sends it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter

from supervisor.otel.cursor import CursorFile
from supervisor.otel.sdk import LastError, Meters, export_spans, to_sdk
from supervisor.otel.translate import Measure, SessionTranslator
from supervisor.store.base import SessionBatch

BATCH_SPANS = 512
RETRY_FIRST_S = 1.0
RETRY_MAX_S = 60.0


@dataclass(slots=True)
class Totals:
    events: int = 0
    spans_sent: int = 0
    spans_unsent: int = 0
    sessions: set[str] = field(default_factory=set)
    unsent_sessions: set[str] = field(default_factory=set)


class Export:
    """One exporter of one store to one collector (see the module docstring)."""

    def __init__(self, spans: SpanExporter, meters: Meters | None, cursors: CursorFile,
                 res: Resource, errors: LastError, *, include_content: bool = False,
                 say: Callable[[str], None] = print) -> None:
        self.spans = spans
        self.meters = meters
        self.cursors = cursors
        self.resource = res
        self.errors = errors
        self.include_content = include_content
        self.say = say
        self.translators: dict[str, SessionTranslator] = {}
        self.totals = Totals()
        self.failure: str | None = None
        """Why the collector refused the last batch (a one-shot export stops sending then)."""
        self._spans: list[ReadableSpan] = []
        self._span_sessions: set[str] = set()
        self._measures: list[Measure] = []
        self._advances: dict[str, tuple[int, int]] = {}

    # -- reading ------------------------------------------------------------------------------

    def consume(self, batches: list[SessionBatch], *, retry: threading.Event | None = None) -> None:
        """Translate the batches' events; send whenever a batch of spans is full. With `retry`
        (an event that is set to stop), a refused batch is tried again until it is taken or
        `retry` is set; without it, the first refusal ends sending (`failure`).

        The cyclic garbage collector is paused meanwhile, as the Tailer does while it reads:
        thousands of new span objects stay alive until their batch is sent, and the collector
        rescanning them over and over cost a third of the export (nothing made here is cyclic
        garbage)."""
        paused = gc.isenabled()
        gc.disable()
        try:
            self._consume(batches, retry)
        finally:
            if paused:
                gc.enable()

    def _consume(self, batches: list[SessionBatch], retry: threading.Event | None) -> None:
        for batch in batches:
            if batch.kind != "events":
                continue  # decisions reach the trace through the agent's decision_applied
            sid = batch.session_id
            if batch.gone or batch.reset:
                self.translators.pop(sid, None)
                if batch.gone:
                    continue
            translator = self.translators.get(sid)
            if translator is None:
                translator = SessionTranslator(sid, include_content=self.include_content)
                self.translators[sid] = translator
            for event, cursor in zip(batch.events, batch.cursors, strict=True):
                out = translator.feed(event)
                assert translator.trace is not None
                if cursor <= self.cursors.done(sid, translator.trace):
                    continue
                self.totals.events += 1
                self._spans.extend(to_sdk(record, self.resource) for record in out.spans)
                if out.spans:
                    self._span_sessions.add(sid)
                self._measures.extend(out.measures)
                self._advances[sid] = (translator.trace, cursor)
                if len(self._spans) >= BATCH_SPANS:
                    self.flush(retry=retry)

    # -- sending ------------------------------------------------------------------------------

    def flush(self, *, retry: threading.Event | None = None) -> bool:
        """Send what is waiting; True when the collector took it (or nothing was waiting)."""
        if not (self._spans or self._advances):
            return True
        if self.failure is not None and retry is None:
            self._drop_unsent()
            return False
        wait = RETRY_FIRST_S
        while self._spans and not export_spans(self.spans, self._spans):
            reason = self.errors.take() or "the collector did not take the spans"
            if retry is None:
                self.failure = reason
                self._drop_unsent()
                return False
            if self.failure is None:
                self.say(f"otel: cannot send to the collector ({reason}); retrying, "
                         f"{len(self._spans)} span(s) waiting")
            self.failure = reason
            if retry.wait(wait):  # stopping: the cursor stays, the next run sends them,
                self._drop_unsent()  # and the last line says how many wait for it
                return False
            wait = min(wait * 2, RETRY_MAX_S)
        if self.failure is not None and retry is not None:
            self.say("otel: the collector is back; sending again")
            self.failure = None
        self.totals.spans_sent += len(self._spans)
        self.totals.sessions |= self._span_sessions
        if self.meters is not None:
            self.meters.record(self._measures)
        for sid, (trace, cursor) in self._advances.items():
            self.cursors.advance(sid, trace, cursor)
        self.cursors.save()
        self._spans, self._measures, self._advances = [], [], {}
        self._span_sessions = set()
        return True

    def _drop_unsent(self) -> None:
        """Count what will not be sent in this run (the cursor stays before it)."""
        self.totals.spans_unsent += len(self._spans)
        self.totals.unsent_sessions |= self._span_sessions
        self._spans, self._measures, self._advances = [], [], {}
        self._span_sessions = set()


def run_once(export: Export, scan: Callable[[], list[SessionBatch]]) -> None:
    """Export everything the store holds now."""
    while True:
        batches = scan()
        if not any(b.events for b in batches):
            break
        export.consume(batches)
    export.flush()


def run_follow(export: Export, scan: Callable[[], list[SessionBatch]], stop: threading.Event,
               interval: float = 0.5) -> None:
    """Export what the store holds, then what it gets, until `stop` is set. The store is read
    by polling every `interval` s: the translation and the sends run in this one thread, so a
    collector that is down holds the reading back (bounded memory) rather than piling spans up."""
    while not stop.is_set():
        batches = scan()
        export.consume(batches, retry=stop)
        export.flush(retry=stop)
        if not any(b.events for b in batches):
            stop.wait(interval)
