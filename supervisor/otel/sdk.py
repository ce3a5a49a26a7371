"""The OpenTelemetry SDK side: span records -> the SDK's spans, the OTLP exporters, the meters.

Configured the standard way, by the `OTEL_*` variables the SDK and its exporters read:
`OTEL_EXPORTER_OTLP_ENDPOINT` (and the `_TRACES_`/`_METRICS_` ones), `OTEL_EXPORTER_OTLP_PROTOCOL`
(`http/protobuf`, the default, or `grpc` with the `grpc` extra installed), `..._HEADERS`,
`..._TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_METRIC_EXPORT_INTERVAL`.
Nothing here parses them again except to refuse a malformed endpoint in one line before any
export is tried (`check_endpoints`).

Spans are built as the SDK's `ReadableSpan` with their ids set from the records (the SDK's
tracer would draw random ids, which a restart could not reproduce) and handed to the exporter
directly; the exporter's own failures are logged by the SDK, so a handler keeps the last one as
the reason in our one-line error (`last_error`) instead of letting the SDK print tracebacks.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event as SdkEvent
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from supervisor import __version__
from supervisor.otel.translate import SEMCONV_VERSION, Measure, SpanRecord
from supervisor.safetext import clean

SCOPE = InstrumentationScope("agent-supervisor", __version__,
                             f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}")
NS = 1_000_000_000


class OtelConfigError(Exception):
    """The OTLP configuration cannot work (a malformed endpoint, a protocol not installed)."""


@dataclass(frozen=True, slots=True)
class Instrument:
    kind: str
    """`counter` or `histogram`."""
    name: str
    unit: str
    description: str


INSTRUMENTS: dict[str, Instrument] = {
    # Measure.instrument -> the metric it records into (docs/otel.md lists them)
    "tool_calls": Instrument("counter", "supervisor.tool_calls", "{call}",
                             "tool calls the agents made"),
    "tool_results": Instrument("counter", "supervisor.tool_results", "{call}",
                               "tool calls that returned, by outcome"),
    "loop_tool_calls": Instrument("counter", "supervisor.loop.tool_calls", "{call}",
                                  "tool calls made while the engine's level was 1 or more"),
    "loops": Instrument("counter", "supervisor.loops", "{detection}",
                        "loops detected, by detector and level"),
    "verdicts": Instrument("counter", "supervisor.verdicts", "{verdict}",
                           "calls the supervisor nudged, refused, paused or stopped"),
    "escalations": Instrument("counter", "supervisor.escalations", "{escalation}",
                              "escalations to an operator, by kind"),
    "escalation_wait": Instrument("histogram", "supervisor.escalation.wait", "s",
                                  "time from an escalation to its answer"),
    "rollbacks": Instrument("counter", "supervisor.rollbacks", "{rollback}",
                            "checkpoints restored"),
    "cost": Instrument("counter", "supervisor.cost", "USD", "what the agents' models cost"),
    "loop_cost": Instrument("counter", "supervisor.loop.cost", "USD",
                            "cost spent while the engine's level was 1 or more"),
    "memory": Instrument("counter", "supervisor.memory", "{note}",
                         "what the failure memory told the agents and learned, by kind"),
    "sessions_ended": Instrument("counter", "supervisor.sessions.ended", "{session}",
                                 "sessions that ended, by status"),
}
SESSIONS_GAUGE = "supervisor.sessions"
"""An observable gauge: sessions of the store by status, read from the store when collected."""


class _Resource(Resource):
    """A resource whose hash is computed once: the SDK's encoder hashes the resource of every
    span it groups (a JSON dump each time: a quarter of the encoding cost), and ours never
    changes after it is made."""

    _hash: int | None = None

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = super().__hash__()
        return self._hash

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other)


def resource(store_label: str) -> Resource:
    """`service.name` agent-supervisor unless `OTEL_SERVICE_NAME` says otherwise; the store."""
    made = Resource.create({"service.name": "agent-supervisor",
                            "service.version": __version__,
                            "supervisor.store": store_label})
    return _Resource(made.attributes, made.schema_url)


_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_UNSET = Status(StatusCode.UNSET)


@functools.lru_cache(maxsize=1024)
def _context(trace_id: int, span_id: int) -> SpanContext:
    """A span's context; cached: every tool span of a session names the same parent."""
    return SpanContext(trace_id, span_id, is_remote=False, trace_flags=_SAMPLED)


def to_sdk(record: SpanRecord, res: Resource) -> ReadableSpan:
    """The SDK's span for one record, ids and times as the record says."""
    parent = _context(record.trace_id, record.parent_id) if record.parent_id is not None else None
    status = Status(StatusCode.ERROR, record.error) if record.error is not None else _UNSET
    return ReadableSpan(
        name=record.name, resource=res, parent=parent, attributes=record.attributes,
        context=SpanContext(record.trace_id, record.span_id, is_remote=False,
                            trace_flags=_SAMPLED),
        events=[SdkEvent(e.name, e.attributes, int(e.ts * NS)) for e in record.events],
        kind=SpanKind.CLIENT if record.kind == "client" else SpanKind.INTERNAL,
        status=status, start_time=int(record.start_ts * NS), end_time=int(record.end_ts * NS),
        instrumentation_scope=SCOPE,
    )


class LastError(logging.Handler):
    """Keeps the first failure the SDK exporters logged since the last `take` (the first names
    the cause, e.g. "Connection refused"; the last only says the retries ran out), for our one
    error line."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.message is not None:
            return
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call of the SDK must not end the export
            text = str(record.msg)
        self.message = clean(text.splitlines()[0] if text else "", limit=300)

    def take(self) -> str | None:
        message, self.message = self.message, None
        return message


def capture_sdk_logs() -> LastError:
    """Route the SDK's own logging into a `LastError` (nothing printed by the SDK itself)."""
    handler = LastError()
    for name in ("opentelemetry",):
        logger = logging.getLogger(name)
        logger.handlers[:] = [handler]
        logger.propagate = False
    return handler


def protocol() -> str:
    return (os.environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf").strip().lower()


def check_endpoints() -> str:
    """The traces endpoint the exporters will use, for people; `OtelConfigError` for an
    endpoint that is not an http(s) URL with a host and a valid port, or an unknown protocol."""
    proto = protocol()
    if proto not in ("http/protobuf", "grpc"):
        raise OtelConfigError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={proto!r} is not supported: use http/protobuf or grpc")
    shown = None
    for var in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"):
        value = os.environ.get(var)
        if not value:
            continue
        _check_url(var, value)
        if var != "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT":
            shown = value if var.endswith("TRACES_ENDPOINT") or shown is None else shown
    default = "http://localhost:4318" if proto == "http/protobuf" else "http://localhost:4317"
    return shown or default


def _check_url(var: str, value: str) -> None:
    parts = urlsplit(value.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in ("http", "https") or not parts.hostname or port == -1:
        raise OtelConfigError(
            f"{var}={clean(value, limit=200)!r} is not an OTLP endpoint: "
            "give a URL such as http://localhost:4318")


def span_exporter() -> SpanExporter:
    """The OTLP span exporter the environment asks for."""
    if protocol() == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcSpanExporter,
            )
        except ImportError as exc:
            raise OtelConfigError("OTLP over gRPC needs the grpc extra: "
                                  "pip install 'agent-supervisor[grpc]'") from exc
        return GrpcSpanExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def metric_exporter() -> MetricExporter:
    if protocol() == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter as GrpcMetricExporter,
            )
        except ImportError as exc:
            raise OtelConfigError("OTLP over gRPC needs the grpc extra: "
                                  "pip install 'agent-supervisor[grpc]'") from exc
        return GrpcMetricExporter()
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    return OTLPMetricExporter()


class WatchedMetricExporter(MetricExporter):
    """Delegates to the OTLP metric exporter and remembers whether the last export worked, so
    the command can say so (the periodic reader only logs)."""

    def __init__(self, inner: MetricExporter) -> None:
        super().__init__(preferred_temporality=inner._preferred_temporality,
                         preferred_aggregation=inner._preferred_aggregation)
        self.inner = inner
        self.last_ok: bool | None = None
        self.refused: str | None = None
        """Why the collector is not asked any more (`refuse`), or None."""

    def refuse(self, reason: str) -> None:
        """The collector is down (the spans were not taken): the last collection is not
        sent, so stopping does not sit out another request timeout for nothing."""
        self.refused = reason

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000,
               **kwargs: Any) -> MetricExportResult:
        if self.refused is not None:
            self.last_ok = False
            return MetricExportResult.FAILURE
        result = self.inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
        self.last_ok = result is MetricExportResult.SUCCESS
        return result

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        self.inner.shutdown(timeout_millis=timeout_millis, **kwargs)


class Meters:
    """The instruments of `INSTRUMENTS` on one meter provider, and the sessions gauge."""

    def __init__(self, res: Resource, exporter: MetricExporter,
                 sessions_by_status: Callable[[], dict[str, int]],
                 interval_ms: float | None = None) -> None:
        from opentelemetry.metrics import CallbackOptions, Observation

        self.exporter = WatchedMetricExporter(exporter)
        self.reader = PeriodicExportingMetricReader(self.exporter,
                                                    export_interval_millis=interval_ms)
        self.provider = MeterProvider(resource=res, metric_readers=[self.reader])
        meter = self.provider.get_meter(SCOPE.name, SCOPE.version, schema_url=SCOPE.schema_url)
        self._instruments: dict[str, Any] = {}
        for key, spec in INSTRUMENTS.items():
            make = meter.create_counter if spec.kind == "counter" else meter.create_histogram
            self._instruments[key] = make(spec.name, unit=spec.unit, description=spec.description)

        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            try:
                counts = sessions_by_status()
            except Exception:  # a store that cannot be read now: no observation this time
                return []
            return [Observation(n, {"supervisor.session.status": status})
                    for status, n in sorted(counts.items())]

        meter.create_observable_gauge(SESSIONS_GAUGE, [observe], unit="{session}",
                                      description="sessions of the store, by status")

    def record(self, measures: Sequence[Measure]) -> None:
        for m in measures:
            instrument = self._instruments[m.instrument]
            attributes = dict(m.attributes)
            if INSTRUMENTS[m.instrument].kind == "counter":
                instrument.add(m.value, attributes)
            else:
                instrument.record(m.value, attributes)

    def finish(self) -> bool:
        """Send what was recorded (the reader's last collection) and stop; True when the
        collector took it."""
        self.provider.shutdown()
        return self.exporter.last_ok is not False


def export_spans(exporter: SpanExporter, spans: Sequence[ReadableSpan]) -> bool:
    return exporter.export(spans) is SpanExportResult.SUCCESS
