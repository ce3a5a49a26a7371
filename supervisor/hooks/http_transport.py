"""The HTTP hook transport: the resident server answers Claude Code's `"type": "http"` hooks.

A command hook costs a process per call (the client's start-up); an HTTP hook is a POST to a
server that is already running. `supervisor install claude-code --transport http` writes HTTP
entries for the per-call events (`Settings.http_events`) and keeps command entries for the
others (SessionStart, UserPromptSubmit, Stop, ...), whose client starts the server when it is
not running.

- Configuration: `<root>/hooks-http.json` (0600), `{"port": N, "token": "..."}`, made by the
  installer: a free port on 127.0.0.1 and a per-root secret token. The server of the root binds
  that port while the file exists, also when it appears or changes while the server runs
  (`http_follow`; if another process holds the port, it serves the Unix socket only and says so
  in its log).
- Who may call (docs/security.md "Another local user"): the TCP peer must run as the server's
  own user (on Linux its socket's owner in `/proc/net/tcp`; another user is refused even with
  the token), the request must carry the token in `X-Supervisor-Token` (compared in constant
  time; without it, or with a wrong one, 403), and the payload must belong to a session this
  root already has, started by the agent's own command hook (SessionStart stays a command
  entry), from its directory or one below it; otherwise 403, and nothing is recorded or read.
- Refused requests cost one sanitised, bounded log line, at most one per `LOG_EVERY_S` (the
  rest are counted in the next); an answer other than 200 closes the connection, so a body left
  unread can never be taken for the next request.
- Requests: `POST /hooks/<target>?timeout=<seconds>` with the payload as the body. The
  answer is the hook's output as the body (200, possibly empty), with the same runtime, the same
  answers and the same hold-for-operator budget as the command transport (`timeout` is the
  entry's timeout, from which the call's `Budget` is counted).
- When the server is down Claude Code lets the call go on unchecked (it warns the user: "A hook
  gave no usable answer"); docs/claude-code.md says what that means and why the command
  transport stays the default.
"""

import contextlib
import errno
import hmac
import json
import os
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from supervisor.hooks.args import DEFAULT_TIMEOUT_S
from supervisor.hooks.budget import Budget
from supervisor.hooks.peer import peer_uid
from supervisor.hooks.step import PAYLOAD_LIMIT_BYTES
from supervisor.hooks.targets import TARGETS
from supervisor.safetext import clean
from supervisor.store.paths import ensure_private_dir, session_files, write_private

CONFIG_FILE = "hooks-http.json"
TOKEN_HEADER = "X-Supervisor-Token"
HOST = "127.0.0.1"
PATH_PREFIX = "/hooks/"
READ_TIMEOUT_S = 30.0
LOG_EVERY_S = 10.0
"""Refused requests are logged at most once per this many seconds (with a count)."""
ACCEPT_RETRY_S = 0.1
"""An `accept` out of descriptors or memory is tried again after this (`_Server.get_request`)."""
OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
LOGGED_CHARS = 120
"""What a refused request's log line shows of its path, at most."""


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
        self.root: Path | None = None
        """The store root served: payloads must name a session of it (`recognised`)."""
        self._thread: threading.Thread | None = None
        self._refusals = _RefusalLog(log)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.5}, daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop taking requests (calls in flight finish in their own threads)."""
        self._server.shutdown()
        self._server.server_close()

    def refused(self, why: str, path: str) -> None:
        self._refusals.note(why, path)


class _RefusalLog:
    """Refused requests, logged bounded: one sanitised line of at most `LOGGED_CHARS` of the
    path, at most one line per `LOG_EVERY_S`, the others counted (3,000 unauthenticated
    requests used to add 180 MB of raw paths, escape sequences included, to the log)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self._lock = threading.Lock()
        self._last = -LOG_EVERY_S
        self._skipped = 0

    def note(self, why: str, path: str) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self._last < LOG_EVERY_S:
                self._skipped += 1
                return
            skipped, self._skipped, self._last = self._skipped, 0, now
        more = f" ({skipped} more refused since the last line)" if skipped else ""
        shown = clean(path, keep_newlines=False, limit=LOGGED_CHARS)
        self._log(f"refused an HTTP hook call: {why}{f' ({shown})' if shown else ''}{more}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    listener: HttpListener
    _accept_said = -LOG_EVERY_S
    """When an `accept` out of descriptors or memory was last logged (`get_request`)."""

    def get_request(self) -> tuple[socket.socket, Any]:
        """A connection; out of descriptors or memory, after a pause (`ACCEPT_RETRY_S`): the
        connection stays queued and the listening socket readable, so the loop would try
        again at once and spin a core until descriptors come back. Logged once per
        `LOG_EVERY_S`; the loop (`socketserver`) goes on after the error."""
        try:
            return super().get_request()
        except OSError as exc:
            if exc.errno in OUT_OF_RESOURCES:
                if time.monotonic() - self._accept_said >= LOG_EVERY_S:
                    self._accept_said = time.monotonic()
                    self.listener.log(f"HTTP hooks: accept failed ({exc.strerror}); "
                                      f"retrying every {ACCEPT_RETRY_S:g}s")
                time.sleep(ACCEPT_RETRY_S)
            raise

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A caller that reset or dropped its connection costs one line of the rate-limited
        log, not a traceback on stderr per connection; any other error keeps its traceback
        (a bug must stay visible)."""
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | TimeoutError):
            self.listener.refused(f"the caller dropped the connection ({type(error).__name__})",
                                  "")
            return
        super().handle_error(request, client_address)


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    timeout = READ_TIMEOUT_S
    disable_nagle_algorithm = True
    """The answer goes out in two writes (headers, then body). With Nagle's algorithm the body
    waits for the ACK of the headers, which an agent's kept-alive connection delays by up to
    40 ms: about 40 ms a hook on every call (TCP_NODELAY on each connection)."""

    def do_POST(self) -> None:
        started = time.monotonic()
        listener = self.server.listener
        with listener.track():
            status, body = self._answer(listener, started)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        if status != 200:  # its body may be unread: never parse it as the next request
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def _answer(self, listener: HttpListener, started: float) -> tuple[int, bytes]:
        owner = peer_uid(self.client_address, self.server.server_address)
        if owner is not None and owner != os.geteuid():
            listener.refused(f"the caller runs as uid {owner}, not as this server's user",
                             self.path)
            return 403, b'{"error": "forbidden"}'
        given = self.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(given.encode(), listener.config.token.encode()):
            listener.refused("without the right token", self.path)
            return 403, b'{"error": "forbidden"}'
        parts = urlsplit(self.path)
        target = parts.path.removeprefix(PATH_PREFIX)
        if not parts.path.startswith(PATH_PREFIX) or target not in TARGETS:
            listener.refused("no such hook target", self.path)
            return 404, b'{"error": "no such hook target"}'
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= PAYLOAD_LIMIT_BYTES:
            listener.refused("payload too large", self.path)
            return 413, b'{"error": "payload too large"}'
        data = self.rfile.read(length)
        if listener.root is not None:
            why = recognised(listener.root, target, data)
            if why is not None:
                listener.refused(why, self.path)
                return 403, b'{"error": "unknown session"}'
        try:
            timeout = float(parse_qs(parts.query).get("timeout", [DEFAULT_TIMEOUT_S])[0])
        except ValueError:
            timeout = DEFAULT_TIMEOUT_S
        if not 0 < timeout < float("inf"):
            timeout = DEFAULT_TIMEOUT_S
        text = listener.handle(target, data, Budget(timeout, started))
        # nothing to say is `{}`: a command hook prints nothing, but an HTTP hook's body is
        # parsed as JSON (Qwen Code logs a parse failure for every empty one)
        return 200, (text or "{}").encode("utf-8", "replace")

    def do_GET(self) -> None:
        self.send_error(405)

    def log_message(self, format: str, *args: object) -> None:  # requests are not logged
        return


def recognised(root: Path, target_name: str, data: bytes) -> str | None:
    """None when the payload belongs to a session `root` already has (its `session_start`
    recorded: the agent's own command hook made it) and names that session's directory or one
    below it; else why it is refused. A payload that cannot be read is left to the runtime
    (which records nothing without a session)."""
    from supervisor.hooks.step import PayloadError, read_payload
    from supervisor.hooks.targets import load

    try:
        step = load(target_name).read(read_payload(data))
        events = session_files(root, step.parent_session_id or step.session_id).events
    except (PayloadError, ValueError):
        return None
    try:
        with open(events, "rb") as handle:
            first = json.loads(handle.readline(1 << 20) or b"null")
    except (OSError, ValueError):
        return "no such session (a session starts with the agent's own command hook)"
    recorded = first.get("cwd") if isinstance(first, dict) else None
    given = step.start.get("cwd")
    if isinstance(recorded, str) and isinstance(given, str):
        tree, where = os.path.realpath(recorded), os.path.realpath(given)
        if where != tree and not where.startswith(tree.rstrip("/") + "/"):
            return "the payload's directory is not the session's"
    return None
