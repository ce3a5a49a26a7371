"""The HTTP side of `supervisor web`: stdlib only, a page and a small JSON API, every request
behind the token.

    GET  /?token=T        sets the token's cookie (HttpOnly, SameSite=Strict), redirects to /
    GET  /                the page (docs/web.md)
    GET  /api/queue       the queue as JSON
    POST /api/answer      {"session", "escalation_id", "action", "text", "operator"}

Without the token (query, cookie or `Authorization: Bearer`) every path is a 401 with no data.
A POST must carry `X-Supervisor: 1` and a JSON body (a cross-site form can send neither), and the
cookie is SameSite=Strict. The access log names the method, the path without its query (the
token never reaches a log) and the status.
"""

from __future__ import annotations

import json
import sys
import urllib.parse
from http import cookies
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from supervisor.web.queue import LiveQueue, Refused
from supervisor.web.token import matches

COOKIE = "supervisor_token"
MAX_BODY = 64 * 1024
PAGE = Path(__file__).with_name("page.html")
DENIED = (b"<!doctype html><meta name=viewport content='width=device-width'>"
          b"<title>Agent Supervisor</title><p>This page needs its token: open the URL "
          b"<code>supervisor web</code> printed (it ends in <code>?token=...</code>).</p>")


class WebServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], queue: LiveQueue, token: str, *,
                 log: TextIO | None = None) -> None:
        self.queue = queue
        self.token = token
        self.log = log if log is not None else sys.stderr
        self.page = PAGE.read_bytes()
        super().__init__(address, Handler)


class Handler(BaseHTTPRequestHandler):
    server: WebServer
    server_version = "supervisor-web"
    sys_version = ""

    # -- plumbing --------------------------------------------------------------------------

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

    def _given_token(self) -> tuple[str | None, bool]:
        """(the token the request carries, whether it came in the query)."""
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if "token" in query:
            return query["token"][0], True
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            return auth[7:].strip(), False
        jar = cookies.SimpleCookie()
        try:
            jar.load(self.headers.get("Cookie", ""))
        except cookies.CookieError:
            return None, False
        morsel = jar.get(COOKIE)
        return (morsel.value if morsel is not None else None), False

    def _authorised(self) -> bool:
        given, in_query = self._given_token()
        if not matches(given, self.server.token):
            self._send(401, DENIED, "text/html; charset=utf-8")
            return False
        if in_query:  # trade the token in the URL for a cookie, and drop it from the URL
            path = urllib.parse.urlsplit(self.path).path or "/"
            secure = "; Secure" if self.headers.get("X-Forwarded-Proto") == "https" else ""
            self._send(303, b"", "text/plain", {
                "Location": path,
                "Set-Cookie": (f"{COOKIE}={self.server.token}; HttpOnly; SameSite=Strict; "
                               f"Path=/; Max-Age=31536000{secure}"),
            })
            return False
        return True

    # -- routes ----------------------------------------------------------------------------

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        if not self._authorised():
            return
        path = urllib.parse.urlsplit(self.path).path
        if path == "/":
            self._send(200, self.server.page, "text/html; charset=utf-8")
        elif path == "/api/queue":
            self._json(200, self.server.queue.snapshot())
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
            text = body.get("text")
            if not all(isinstance(v, str) for v in fields.values()) or not (
                    text is None or isinstance(text, str)):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            self._json(400, {"refused": "an answer needs session, escalation_id, action and "
                                        "operator (strings), and text for guidance"})
            return
        try:
            done = self.server.queue.answer(fields["session"], fields["escalation_id"],
                                            fields["action"], text, fields["operator"])
        except Refused as exc:
            self._json(409, {"refused": str(exc)})
            return
        self._json(200, done)
