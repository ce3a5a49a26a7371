"""OpenTelemetry export of supervised sessions: `supervisor otel`.

Teams already send their agents' own telemetry to an OTLP backend; none of those emitters says
"this agent is looping" or "this agent waits for a human". This package turns a store's event
logs into OTLP traces (the GenAI semantic conventions' `invoke_agent` and `execute_tool` spans,
with the supervisor's detections, refusals, escalations and rollbacks under `supervisor.*`) and
metrics, with the official OpenTelemetry SDK and exporters.

- `translate`: events of one session -> finished span records and metric measures (pure, no
  SDK, deterministic ids, bounded memory);
- `ids`: the deterministic trace and span ids that make a restart double nothing;
- `cursor`: how far each session was exported (a file, locked while an exporter runs);
- `sdk`: records -> the SDK's spans, the exporters and meters configured by `OTEL_*`;
- `export`: the loop that reads the store, translates, sends and only then moves the cursor.

It runs as its own process beside the store, never inside the hook or the relay: an
exporter waits on the network and imports the SDK, and neither may slow a tool call or the
decisions the relay brings back (docs/otel.md).
"""
