"""The HTTP server every fake model API shares: 127.0.0.1, a free port, a thread, a request log.

A fake subclasses `ModelServer` and implements `respond(request)`; the base logs every request
(method, path, query, JSON body, arrival and answer times) before answering, so a test can read
afterwards what the agent sent the model. Answers are JSON or Server-Sent Events.
"""

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


@dataclass(slots=True)
class LoggedRequest:
    """One request as the fake received it (`body` is None when it was not JSON)."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw: bytes
    received: float
    """time.monotonic() when the request was read."""
    answered: float | None = None
    """time.monotonic() when the last byte of the answer was sent."""


@dataclass(frozen=True, slots=True)
class JsonAnswer:
    body: Any
    status: int = 200


@dataclass(frozen=True, slots=True)
class SseAnswer:
    """Server-Sent Events: (event name or None, data) pairs, in order; data is sent as JSON,
    or as it is when it is a string (Chat Completions' closing `[DONE]`)."""

    events: Iterable[tuple[str | None, Any]]


Answer = JsonAnswer | SseAnswer


@dataclass(slots=True)
class _Log:
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[LoggedRequest] = field(default_factory=list)


class ModelServer:
    """Base of the fakes; use as a context manager (`with Fake(script) as server:`)."""

    def __init__(self) -> None:
        self._log = _Log()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []
        """Exceptions raised while answering (a test should find none)."""

    # -- to implement -------------------------------------------------------------------------
    def respond(self, request: LoggedRequest) -> Answer:
        raise NotImplementedError

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                server._serve(self)

            def do_POST(self) -> None:
                server._serve(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the request log is the record; stderr stays quiet

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name=type(self).__name__, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self) -> list[LoggedRequest]:
        """Every request so far, in arrival order (a copy)."""
        with self._log.lock:
            return list(self._log.requests)

    # -- serving ------------------------------------------------------------------------------
    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(handler.path)
        request = LoggedRequest(
            method=handler.command, path=parts.path, query=parse_qs(parts.query),
            headers={k.lower(): v for k, v in handler.headers.items()}, body=body, raw=raw,
            received=time.monotonic(),
        )
        with self._log.lock:
            self._log.requests.append(request)
        try:
            answer = self.respond(request)
        except Exception as exc:  # a bug in a fake must show in the test, not hang the agent
            self.errors.append(f"{request.method} {request.path}: {exc!r}")
            answer = JsonAnswer({"error": {"message": repr(exc)}}, status=500)
        try:
            if isinstance(answer, SseAnswer):
                _send_sse(handler, answer)
            else:
                _send_json(handler, answer)
        except OSError:
            pass  # the agent went away
        request.answered = time.monotonic()


def _send_json(handler: BaseHTTPRequestHandler, answer: JsonAnswer) -> None:
    data = json.dumps(answer.body).encode()
    handler.send_response(answer.status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
    handler.wfile.flush()


def _send_sse(handler: BaseHTTPRequestHandler, answer: SseAnswer) -> None:
    chunks = []
    for name, data in answer.events:
        head = f"event: {name}\n" if name else ""
        text = data if isinstance(data, str) else json.dumps(data)
        chunks.append(f"{head}data: {text}\n\n".encode())
    body = b"".join(chunks)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
    handler.wfile.flush()
