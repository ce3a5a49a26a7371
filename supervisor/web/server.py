"""The HTTP side of `supervisor web`: stdlib only, a page and a small JSON API, every request
behind a signed-in session (or the token, for scripts), from the server's own user.

    GET  /login?code=C    spends a one-time code: sets the session cookie, redirects to /
    GET  /                the page (docs/web.md)
    GET  /api/queue[?session=S][&decision=S/D][&escalation=S/E]
                          the queue as JSON (with the status of session S, what became
                          of decision D of S: the page follows an answer it sent, and how
                          escalation E of S was decided once it no longer waits)
    GET  /api/escalation?session=S&escalation_id=E
                          what the terminal's escalation view shows besides the card: the
                          evidence steps (each call with its result) and the checkpoints
    POST /api/answer      {"session", "escalation_id", "action", "operator", "text",
                           "checkpoint_id", "tasks"}

Who may ask, in this order (docs/security.md, "Another local user"):
1. A caller on this machine must run as the server's own user (or one `--allow-user` names, a
   reverse proxy's): its socket's owner, from `/proc/net/tcp{,6}` (`supervisor.hooks.peer`).
   Anyone else gets a 403 before a byte of the request is read. A caller from another machine
   (a non-loopback bind) has no owner to check: only its session stands between it and the
   queue.
2. The request carries a live session in its cookie (`supervisor.web.logins`) or the token
   in `Authorization: Bearer` (scripts). Without one every path is a 401 with no data.
A POST must carry `X-Supervisor: 1` and a JSON body (a cross-site form can send neither), and the
cookie is SameSite=Strict. The access log names the method, the path without its query (a code
never reaches a log) and the status.

Connections are bounded: at most `MAX_CONNECTIONS` at once, `MAX_PER_PEER` from one address
(over that a connection is closed as soon as it is accepted, nothing read); each is closed
after `CONNECTION_DEADLINE_S` whatever it sends (a client that sends one byte a second cannot
hold a thread for good); an accept that fails for want of file descriptors waits before the
next (no spinning).
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from collections import Counter
from http import cookies
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from supervisor.hooks.peer import peer_uid
from supervisor.web.logins import SESSION_DAYS, Logins
from supervisor.web.queue import LiveQueue, Refused
from supervisor.web.token import matches

MAX_BODY = 64 * 1024
MAX_CONNECTIONS = 256
"""Connections at once (well below the usual 1024 file descriptors)."""
MAX_PER_PEER = 16
"""Connections at once from one address (a browser opens six at most; a reverse proxy on
loopback is one address for all its clients, and limits them itself)."""
CONNECTION_DEADLINE_S = 30.0
"""A connection lives at most this long (an answer waits 5 s for the agent; a page is small)."""
READ_TIMEOUT_S = 10.0
"""Silence allowed between two reads of a request."""
ACCEPT_BACKOFF_S = 0.2
REFUSAL_LOG_EVERY_S = 10.0
"""The wait after an accept that failed for want of file descriptors."""
PAGE = Path(__file__).with_name("page.html")
DENIED_PAGE = Path(__file__).with_name("denied.html")


def cookie_name(port: int) -> str:
    """The session cookie's name: one per port, so two servers on one host (a cookie goes to
    every port of its host) do not overwrite each other's sessions."""
    return f"supervisor_session_{port}"


class WebServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], queue: LiveQueue, token: str, *,
                 logins: Logins | None = None, allowed_uids: frozenset[int] | None = None,
                 log: TextIO | None = None) -> None:
        self.queue = queue
        self.token = token
        self.logins = logins if logins is not None else Logins()
        self.allowed_uids = (allowed_uids if allowed_uids is not None
                             else frozenset({os.geteuid()}))
        self.log = log if log is not None else sys.stderr
        self.page = PAGE.read_bytes()
        self.denied = DENIED_PAGE.read_bytes()
        self.address_family = family_of(address[0])
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._peers: Counter[str] = Counter()
        self._peers_lock = threading.Lock()
        self._accept_said = -1e9
        self._refusal_said = -1e9
        self._refused = 0
        super().__init__(address, Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def server_bind(self) -> None:
        if self.address_family == socket.AF_INET6:  # `::` serves IPv4 callers too
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        super().server_bind()

    # -- connections -------------------------------------------------------------------------

    def get_request(self) -> tuple[socket.socket, Any]:
        try:
            return super().get_request()
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                # the pending connection stays in the backlog and the listening socket stays
                # readable: without a pause the loop would spin on it at full speed
                if time.monotonic() - self._accept_said >= 10:  # said once per episode
                    self._accept_said = time.monotonic()
                    print(f"accept failed ({exc.strerror}): waiting for connections to end",
                          file=self.log, flush=True)
                time.sleep(ACCEPT_BACKOFF_S)
            raise

    def process_request(self, request: Any, client_address: Any) -> None:
        peer = str(client_address[0])
        with self._peers_lock:
            crowded = self._peers[peer] >= MAX_PER_PEER
            if not crowded:
                self._peers[peer] += 1
        if crowded or not self._slots.acquire(timeout=1.0):
            if not crowded:
                self._forget(peer)
            self.shutdown_request(request)  # over the cap: closed at once, nothing read
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._release(peer)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        timer = threading.Timer(CONNECTION_DEADLINE_S, _cut, (request,))
        timer.daemon = True
        timer.start()
        try:
            super().process_request_thread(request, client_address)
        finally:
            timer.cancel()
            self._release(str(client_address[0]))

    def _release(self, peer: str) -> None:
        self._slots.release()
        self._forget(peer)

    def _forget(self, peer: str) -> None:
        with self._peers_lock:
            self._peers[peer] -= 1
            if self._peers[peer] <= 0:
                del self._peers[peer]

    def note_refusal(self, line: str) -> None:
        """Log a refused caller: at most one line per `REFUSAL_LOG_EVERY_S` (the others are
        counted in the next), so a flood of refused connections cannot fill the log."""
        with self._peers_lock:
            self._refused += 1
            if time.monotonic() - self._refusal_said < REFUSAL_LOG_EVERY_S:
                return
            self._refusal_said, count, self._refused = time.monotonic(), self._refused, 0
        more = f" (and {count - 1} more since the last line)" if count > 1 else ""
        print(line + more, file=self.log, flush=True)

    def peer_refusal(self, client_address: Any, local_address: Any) -> str | None:
        """Why this connection's caller may not be served (another local user), or None.
        `local_address` is the connection's own end (not the bound `::` or `0.0.0.0`)."""
        owner = peer_uid(client_address, local_address)
        if owner is None:  # no /proc (not Linux): only the session can tell
            return None
        if owner == -1:
            # no socket of this machine is the other end: a caller from another machine,
            # which a loopback bind cannot have (so the table is lying or the caller is gone)
            return ("the caller could not be identified" if is_loopback(str(client_address[0]))
                    else None)
        if owner not in self.allowed_uids:
            return f"the caller runs as uid {owner}, not as this server's user"
        return None


def _cut(request: socket.socket) -> None:
    """Close a connection that outlived its deadline (the handler's next read or write fails)."""
    with contextlib.suppress(OSError):
        request.shutdown(socket.SHUT_RDWR)


def family_of(host: str) -> socket.AddressFamily:
    """AF_INET6 for an IPv6 address (`::`, `::1`), AF_INET otherwise (a name resolves to IPv4
    first, as the standard library's own servers do)."""
    try:
        return (socket.AF_INET6 if isinstance(ipaddress.ip_address(host.split("%", 1)[0]),
                                              ipaddress.IPv6Address) else socket.AF_INET)
    except ValueError:
        return socket.AF_INET


def is_loopback(host: str) -> bool:
    """Whether `host` (an address, or `localhost`) is this machine's loopback."""
    if host == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


class Handler(BaseHTTPRequestHandler):
    server: WebServer
    server_version = "supervisor-web"
    sys_version = ""
    timeout = READ_TIMEOUT_S

    # -- plumbing --------------------------------------------------------------------------

    def handle(self) -> None:
        try:
            local = self.connection.getsockname()
        except OSError:
            return  # the caller is gone already
        refusal = self.server.peer_refusal(self.client_address, local)
        if refusal is None:
            super().handle()
            return
        self.server.note_refusal(f"{self.address_string()} refused: {refusal}")
        body = b"refused: this server answers only its own user\n"
        try:  # the answer goes before anything of the request is read or parsed
            self.wfile.write(b"HTTP/1.0 403 Forbidden\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                             b"Connection: close\r\n\r\n" + body)
            self.wfile.flush()
            # then what the caller sent is dropped unread (closing on unread bytes would reset
            # the connection, and the caller would never see why it was refused)
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.5)
            for _ in range(16):
                if not self.connection.recv(65536):
                    break
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass  # `log_request` below writes the one line, without the query string

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        path = urllib.parse.urlsplit(self.path).path
        print(f"{self.address_string()} {self.command} {path[:200]} {code}",
              file=self.server.log, flush=True)

    def _send(self, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; script-src 'self' 'unsafe-inline'; "
                         "style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _query(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)

    def _session(self) -> str | None:
        jar: cookies.SimpleCookie = cookies.SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except cookies.CookieError:
            return None
        morsel = jar.get(cookie_name(self.server.port))
        return morsel.value if morsel is not None else None

    def _authorised(self) -> bool:
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer ") and matches(auth[7:].strip(), self.server.token):
            return True
        if self.server.logins.valid(self._session()):
            return True
        self._send(401, self.server.denied, "text/html; charset=utf-8")
        return False

    def _login(self) -> None:
        """Spend a one-time code for a session cookie; the code is useless afterwards."""
        codes = self._query().get("code") or [""]
        session = self.server.logins.redeem(codes[0]) if codes[0] else None
        if session is None:
            self._send(401, self.server.denied, "text/html; charset=utf-8")
            return
        secure = "; Secure" if self.headers.get("X-Forwarded-Proto") == "https" else ""
        self._send(303, b"", "text/plain", {
            "Location": "/",
            "Set-Cookie": (f"{cookie_name(self.server.port)}={session}; HttpOnly; "
                           f"SameSite=Strict; Path=/; Max-Age={SESSION_DAYS * 86400}{secure}"),
        })

    # -- routes ----------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = urllib.parse.urlsplit(self.path).path
        if path == "/login":
            self._login()
            return
        if not self._authorised():
            return
        if path == "/":
            self._send(200, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/queue":
            query = self._query()
            followed = [d.rpartition("/") for d in query.get("decision", [])[:20]]
            decided = [e.rpartition("/") for e in query.get("escalation", [])[:20]]
            self._json(200, self.server.queue.snapshot(
                statuses=query.get("session", [])[:20],
                decisions=[(sid, did) for sid, _, did in followed if sid and did],
                escalations=[(sid, eid) for sid, _, eid in decided if sid and eid]))
        elif path == "/api/escalation":
            query = self._query()
            try:
                self._json(200, self.server.queue.escalation(
                    (query.get("session") or [""])[0], (query.get("escalation_id") or [""])[0]))
            except Refused as exc:
                self._json(404, {"refused": str(exc)})
        else:
            self._send(404, b"not found", "text/plain")

    def do_POST(self) -> None:
        if not self._authorised():
            return
        if urllib.parse.urlsplit(self.path).path != "/api/answer":
            self._send(404, b"not found", "text/plain")
            return
        if (self.headers.get("X-Supervisor") != "1"
                or not self.headers.get("Content-Type", "").startswith("application/json")):
            self._json(403, {"refused": "not from the supervisor's page"})
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            self._json(400, {"refused": "an answer is a JSON object of at most 64 KiB"})
            return
        try:
            body = json.loads(self.rfile.read(length))
            fields = {k: body[k] for k in ("session", "escalation_id", "action", "operator")}
            text, checkpoint, tasks = (body.get("text"), body.get("checkpoint_id"),
                                       body.get("tasks"))
            if not all(isinstance(v, str) for v in fields.values()) or not (
                    all(v is None or isinstance(v, str) for v in (text, checkpoint))
                    and (tasks is None or (isinstance(tasks, list)
                                           and all(isinstance(t, str) for t in tasks)))):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self._json(400, {"refused": "an answer needs session, escalation_id, action and "
                                        "operator (strings), and text, checkpoint_id or tasks "
                                        "for the answers that need them"})
            return
        try:
            done = self.server.queue.answer(fields["session"], fields["escalation_id"],
                                            fields["action"], text, fields["operator"],
                                            checkpoint_id=checkpoint, tasks=tasks)
        except Refused as exc:
            self._json(409, {"refused": str(exc)})
            return
        self._json(200, done)
