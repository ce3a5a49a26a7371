"""A real OTLP/HTTP receiver for the tests: an HTTP server on 127.0.0.1 (a free port) that
decodes what it is sent with `opentelemetry-proto`, as a collector would.

`with OtlpReceiver() as rx:` serves `rx.endpoint` (`OtlpReceiver(grpc=True)`: OTLP/gRPC instead,
with the service stubs `opentelemetry-proto` ships); `rx.spans()` lists every span received (each
a dict: name, ids as hex, parent, times, attributes, events, status), `rx.metrics()` every
metric data point. `rx.failing = N` answers the next N requests with 503 (a collector in
trouble: the exporter's own retries count against it); `rx.requests` counts what arrived.
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def any_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: any_value(kv.value) for kv in kvs}


class OtlpReceiver:
    def __init__(self, *, grpc: bool = False) -> None:
        self.trace_requests: list[ExportTraceServiceRequest] = []
        self.metric_requests: list[ExportMetricsServiceRequest] = []
        self.failing = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._grpc = self._grpc_server() if grpc else None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with receiver._lock:
                    receiver.requests += 1
                    if receiver.failing > 0:
                        receiver.failing -= 1
                        self.send_response(503)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                    if self.path == "/v1/traces":
                        request = ExportTraceServiceRequest.FromString(body)
                        receiver.trace_requests.append(request)
                        answer = ExportTraceServiceResponse().SerializeToString()
                    elif self.path == "/v1/metrics":
                        metrics = ExportMetricsServiceRequest.FromString(body)
                        receiver.metric_requests.append(metrics)
                        answer = ExportMetricsServiceResponse().SerializeToString()
                    else:
                        self.send_response(404)
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _grpc_server(self) -> Any:
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                with receiver._lock:
                    receiver.requests += 1
                    receiver.trace_requests.append(request)
                return ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                with receiver._lock:
                    receiver.requests += 1
                    receiver.metric_requests.append(request)
                return ExportMetricsServiceResponse()

        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
        self.grpc_port = server.add_insecure_port("127.0.0.1:0")
        return server

    def __enter__(self) -> OtlpReceiver:
        if self._grpc is not None:
            self._grpc.start()
            self.endpoint = f"http://127.0.0.1:{self.grpc_port}"
        else:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._grpc is not None:
            self._grpc.stop(grace=None)
            return
        self.server.shutdown()
        self.server.server_close()

    def spans(self) -> list[dict[str, Any]]:
        out = []
        with self._lock:
            requests = list(self.trace_requests)
        for request in requests:
            for rs in request.resource_spans:
                resource = attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        out.append({
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex() or None,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "kind": span.kind,
                            "attributes": attributes(span.attributes),
                            "events": [(e.name, attributes(e.attributes)) for e in span.events],
                            "status": (span.status.code, span.status.message),
                            "resource": resource,
                            "scope": (ss.scope.name, ss.schema_url),
                        })
        return out

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], float]]]:
        """Metric name -> (attributes, value) of each data point (a histogram's: its count and
        sum as {"count", "sum"}), over every request received."""
        out: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        with self._lock:
            requests = list(self.metric_requests)
        for request in requests:
            for rm in request.resource_metrics:
                for sm in rm.scope_metrics:
                    for metric in sm.metrics:
                        kind = metric.WhichOneof("data")
                        data = getattr(metric, kind)
                        for point in data.data_points:
                            if kind == "histogram":
                                value: Any = {"count": point.count, "sum": point.sum}
                            else:
                                value = point.as_double if point.HasField("as_double") \
                                    else point.as_int
                            out.setdefault(metric.name, []).append(
                                (attributes(point.attributes), value))
        return out
