"""OTLP export throughput: a 100,000-event session exported by `supervisor otel`'s pipeline,
against reading the same session with the store's `Tailer`.

The session is a realistic mix written by the store's writer: tool calls with their verdicts and
results, usage, now and then a detection, an escalation answered by an operator. The baseline
reads and parses every line with `Tailer` (what any reader of the store pays). Ours runs the
export as the command does: the store's follower reads the session, the translator makes spans
and measures, the SDK's OTLP/HTTP exporter encodes and sends them to a collector stand-in on
127.0.0.1 (another process that reads each request and answers 200), the cursor file is written
after each acknowledged batch. Events per second of each, best of interleaved runs; target:
the export within 3x of the read.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from common import Figure, best_of, work_dir

from supervisor.otel import sdk
from supervisor.otel.cursor import CursorFile
from supervisor.otel.export import Export, run_once
from supervisor.store.local import LocalStore
from supervisor.store.tailer import Tailer
from supervisor.store.writer import event_writer

TARGET_RATIO = 3.0
EVENTS = 100_000

SINK = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def write_session(root: Path, events: int) -> None:
    """About `events` events (whole calls: a few more), ending with `session_end`."""
    writer = event_writer(root, "big")
    batch: list[dict] = [{"type": "session_start", "agent": "bench", "task": "a long session"}]
    i = written = 0
    while written + len(batch) < events - 1:
        call = f"c{i}"
        batch += [
            {"type": "tool_call", "call_id": call, "tool": "Bash",
             "args": {"command": f"pytest -q tests/test_{i % 50}.py"}},
            {"type": "verdict", "call_id": call, "action": "allow", "level": 0},
            {"type": "tool_result", "call_id": call, "ok": i % 7 != 0,
             "output": f"{i % 13} passed", "output_bytes": 9, "output_hash": f"{i:08x}",
             "error": None if i % 7 else "exit status 1", "duration_ms": 120.0},
            {"type": "usage", "input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.002},
        ]
        if i % 100 == 99:
            batch += [
                {"type": "detection", "detector": "exact_repeat", "level": 1,
                 "signature": f"s{i}", "evidence": [1, 2, 3], "message": "the same call"},
                {"type": "escalation", "escalation_id": f"e{i}", "level": 3, "reason": "loop",
                 "evidence": [1], "options": ["approve", "abort"], "fallback": "abort"},
                {"type": "decision_applied", "escalation_id": f"e{i}", "decision_id": f"d{i}",
                 "action": "approve", "outcome": "approved", "operator": "bench"},
            ]
        i += 1
        if len(batch) >= 5000:
            writer.append_many(batch)
            written += len(batch)
            batch = []
    batch.append({"type": "session_end", "status": "completed"})
    writer.append_many(batch)


def _count(root: Path) -> int:
    path = root / "sessions" / "big" / "events.jsonl"
    return sum(1 for _ in path.open("rb")) if path.exists() else 0


def run(scale: float = 1.0) -> list[Figure]:
    scratch = work_dir("otel")
    try:
        return _run(scratch, scale)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(scratch: Path, scale: float) -> list[Figure]:
    root = scratch / "root"
    events = max(1000, int(EVENTS * scale))
    write_session(root, events)
    events = _count(root)
    sink = subprocess.Popen([sys.executable, "-c", SINK], stdout=subprocess.PIPE, text=True)
    try:
        assert sink.stdout is not None
        port = int(sink.stdout.readline())
        os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{port}"
        errors = sdk.capture_sdk_logs()
        store = LocalStore(root)
        res = sdk.resource(store.describe())
        sent: list[int] = []
        runs = 0

        def read() -> None:
            tailer = Tailer(root / "sessions" / "big" / "events.jsonl", "events")
            got = 0
            while batch := tailer.poll():
                got += len(batch.events)
            assert got == events

        def export() -> None:
            nonlocal runs
            runs += 1
            cursors = CursorFile(scratch / f"cursor-{runs}.json")
            spans = sdk.span_exporter()
            job = Export(spans, None, cursors, res, errors, say=lambda _line: None)
            run_once(job, store.follower().scan)
            spans.shutdown()
            cursors.close()
            assert job.failure is None, job.failure
            sent.append(job.totals.spans_sent)

        reading, exporting = best_of(max(1, int(3 * scale) or 1), read, export)
    finally:
        sink.terminate()
        sink.wait(10)
        os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    return [
        Figure("events/s exported (vs Tailer read)", exporting, "s", baseline=reading,
               max_ratio=TARGET_RATIO,
               note=f"{events:,} events, {sent[-1]:,} spans sent; "
                    f"read {events / reading:,.0f} ev/s, export {events / exporting:,.0f} ev/s"),
    ]
