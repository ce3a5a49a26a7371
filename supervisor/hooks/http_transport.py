"""The HTTP hook transport: the resident server answers Claude Code's `"type": "http"` hooks.

A command hook costs a process per call (the client's start-up); an HTTP hook is a POST to a
server that is already running. `supervisor install claude-code --transport http` writes HTTP
entries for the per-call events (`Settings.http_events`) and keeps command entries for the
others (SessionStart, UserPromptSubmit, Stop, ...), whose client starts the server when it is
not running.

- Configuration: `<root>/hooks-http.json` (0600), `{"port": N, "token": "..."}`, made by the
  installer: a free port on 127.0.0.1 and a per-root secret token. The server of the root binds
  that port when the file exists (if another process holds the port, it serves the Unix socket
  only and says so in its log).
- Requests: `POST /hooks/<target>?timeout=<seconds>` with the payload as the body and the token
  in `X-Supervisor-Token`, compared in constant time; without it, or with a wrong one, 403. The
  answer is the hook's output as the body (200, possibly empty), with the same runtime, the same
  answers and the same hold-for-operator budget as the command transport (`timeout` is the
  entry's timeout, from which the call's `Budget` is counted).
- When the server is down Claude Code lets the call go on unchecked (it warns the user: "A hook
  gave no usable answer"); docs/claude-code.md says what that means and why the command
  transport stays the default.
"""

import contextlib
import hmac
import json
import secrets
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from supervisor.hooks.args import DEFAULT_TIMEOUT_S
from supervisor.hooks.budget import Budget
from supervisor.hooks.step import PAYLOAD_LIMIT_BYTES
from supervisor.hooks.targets import TARGETS
from supervisor.store.paths import ensure_private_dir, write_private

CONFIG_FILE = "hooks-http.json"
TOKEN_HEADER = "X-Supervisor-Token"
HOST = "127.0.0.1"
PATH_PREFIX = "/hooks/"
READ_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class HttpConfig:
    port: int
    token: str

    def url(self, target: str, timeout_s: int) -> str:
        return f"http://{HOST}:{self.port}{PATH_PREFIX}{target}?timeout={int(timeout_s)}"


def config_path(root: Path) -> Path:
    return Path(root) / CONFIG_FILE


def load_config(root: Path) -> HttpConfig | None:
    """The root's HTTP configuration, or None when there is none (or it is unusable)."""
    try:
        data = json.loads(config_path(root).read_text(encoding="utf-8"))
        port, token = data["port"], data["token"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(port, int) or not 0 < port < 65536 or not isinstance(token, str):
        return None
    return HttpConfig(port, token) if len(token) >= 32 else None


def ensure_config(root: Path, port: int | None = None) -> HttpConfig:
    """The root's configuration, made now when there is none (a free port unless `port` is
    given, a new token); a given `port` replaces the configured one, the token is kept."""
    current = load_config(root)
    if current is not None and (port is None or port == current.port):
        return current
    config = HttpConfig(port or (current.port if current else _free_port()),
                        current.token if current else secrets.token_urlsafe(32))
    path = config_path(root)
    ensure_private_dir(path.parent)  # the token is a secret: a root of ours, 0700
    write_private(path, json.dumps({"port": config.port, "token": config.token}).encode())
    return config


def is_our_url(url: object, target: str) -> bool:
    """True for the URL of our HTTP hook for `target` (any port)."""
    if not isinstance(url, str):
        return False
    parts = urlsplit(url)
    return (parts.scheme == "http" and parts.hostname == HOST
            and parts.path == f"{PATH_PREFIX}{target}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


Handler = Callable[[str, bytes, Budget], str]
"""(target, payload, budget) -> the hook's output: the server's `run_safely` for its root."""


class HttpListener:
    """The HTTP side of a hook server: a thread per request, like the Unix socket's calls.
    `track` is the server's call accounting (a context manager per call), for its idle exit."""

    def __init__(self, config: HttpConfig, handle: Handler,
                 track: Callable[[], contextlib.AbstractContextManager[None]],
                 log: Callable[[str], None]) -> None:
        self.config = config
        self._server = _Server((HOST, config.port), _RequestHandler)
        self._server.listener = self
        self.handle = handle
        self.track = track
        self.log = log
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.5}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop taking requests (calls in flight finish in their own threads)."""
        self._server.shutdown()
        self._server.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    listener: HttpListener


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT_S

    def do_POST(self) -> None:
        started = time.monotonic()
        listener = self.server.listener
        with listener.track():
            status, body = self._answer(listener, started)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, listener: HttpListener, started: float) -> tuple[int, bytes]:
        given = self.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(given.encode(), listener.config.token.encode()):
            listener.log(f"refused an HTTP hook call without the right token ({self.path})")
            return 403, b'{"error": "forbidden"}'
        parts = urlsplit(self.path)
        target = parts.path.removeprefix(PATH_PREFIX)
        if not parts.path.startswith(PATH_PREFIX) or target not in TARGETS:
            return 404, b'{"error": "no such hook target"}'
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= PAYLOAD_LIMIT_BYTES:
            return 413, b'{"error": "payload too large"}'
        data = self.rfile.read(length)
        try:
            timeout = float(parse_qs(parts.query).get("timeout", [DEFAULT_TIMEOUT_S])[0])
        except ValueError:
            timeout = DEFAULT_TIMEOUT_S
        if not 0 < timeout < float("inf"):
            timeout = DEFAULT_TIMEOUT_S
        text = listener.handle(target, data, Budget(timeout, started))
        return 200, text.encode("utf-8", "replace")

    def do_GET(self) -> None:
        self.send_error(405)

    def log_message(self, format: str, *args: object) -> None:  # requests are not logged
        return
