"""The resident hook server of a store root: `python -m supervisor.hooks.server`.

`supervisor.hooks.client` starts it on the first hook call that finds none, detached, with its
output in `<root>/run/hookd.log`. It listens on `<root>/run/hook-<hash>.sock`, serves every
target (each call names its own), and runs each connection's hook step (`runtime.run_safely`)
in a thread of its own, because a held call may wait minutes for the operator while other calls
go on. The threads are kept: each waits in `accept` itself and serves what it accepted, and a
thread that accepts a call while no other waits starts one that does (`_worker`), so a call
costs no thread start and no hand-over between threads (an agent that runs a call's hooks one
after the other, Copilot CLI, waits for both).

A step may leave work for after its answer (`runtime.run_safely`'s `later`: reading on in the
transcript once a call's last hook is answered), which the worker does once the answer is sent
and the connection closed: the agent waits only for the answer, and that work is safe to lose.

It keeps each live session's state in memory between calls and saves it lazily
(`supervisor.hooks.resident`); sessions are protected by the guard's per-session `flock` and
each step takes in what others saved or logged first, so this server and in-process hook calls
can work side by side, and a server killed at any moment loses nothing (the next step redoes
from the event log what the saved state missed).

Protocol, one call per connection: the client sends one JSON header line (`target`, `cwd`,
`version`, `root`, `timeout`: the seconds left of the agent's hook timeout) and the raw payload,
then half-closes (or gives the payload's `length` in the header); the server answers one JSON
object `{"stdout": str, "status": int}` (or `{"error": "version"}` when the versions differ).
A header with `"reply": "raw"` (the native client, `fastclient.c`, and the plugins, which parse
no JSON on their side) gets the same answer as bytes instead: `<status>\n<stdout>`, or
`version\n`.

Start-up holds an exclusive `flock` on `<socket>.lock` for the server's whole life, so of two
racing starts one serves and the other exits; only the holder removes a stale socket file. The
server exits after `SUPERVISOR_HOOKD_IDLE_S` seconds (default 600) without a call, or on SIGTERM:
it removes its socket and pid file and releases the lock, so a new server can start, and then
finishes the calls still in flight (a hold may take minutes). Its own errors go to the log,
never to the agent.
"""

import contextlib
import errno
import fcntl
import io
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from supervisor import __version__
from supervisor.hooks.budget import Budget
from supervisor.hooks.http_follow import HttpSide, for_target
from supervisor.hooks.resident import Resident

ENV_IDLE = "SUPERVISOR_HOOKD_IDLE_S"
DEFAULT_IDLE_S = 600.0
READ_TIMEOUT_S = 30.0
"""A client that has not sent its whole payload after this long is dropped."""
READ_LIMIT_BYTES = 16 * 1024 * 1024
"""At most this much of a call is kept (the payload limit is 8 MiB; a larger payload is
recorded from its first bytes, `step.rescue`); the rest is read and dropped, so one call
cannot fill the server's memory. The client cuts stdin at the same bound."""
HEADER_LIMIT_BYTES = 64 * 1024
"""A first line longer than this is no header: the connection is dropped."""
LOG_LIMIT_BYTES = 4 * 1024 * 1024
"""`hookd.log` is rotated (to `hookd.log.1`, one generation) when it grows past this."""
POLL_S = 0.5
SPARE_WORKERS = 2
"""Threads kept waiting in `accept` at most; one more that finishes a call ends (`_worker`)."""
ACCEPT_RETRY_S = 0.1
"""A worker whose `accept` failed for want of descriptors or memory tries again after this."""
ACCEPT_LOG_S = 10.0
"""A failing `accept` is logged at most once in this long (`HookServer._accept_failed`)."""
LISTENER_BROKEN = frozenset({errno.EBADF, errno.EINVAL, errno.ENOTSOCK, errno.EFAULT})
"""`accept` errors that say the listening socket itself is gone: the server stops."""


class HookServer:
    """Accepts hook calls on a Unix socket until idle or stopped."""

    def __init__(self, root: Path, path: Path, idle_s: float) -> None:
        self.root = root
        self.path = path
        self.idle_s = idle_s
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._active = 0
        self._waiting = 0
        """Worker threads in (or about to enter) `accept` (`_worker`)."""
        self._closing = threading.Event()
        """Set when the server stops taking calls: the workers leave `accept`."""
        self._last = time.monotonic()
        self._accept_logged = -ACCEPT_LOG_S
        """When a failing `accept` was last logged (`_accept_failed`)."""
        self._lock_fd: int | None = None
        self.resident = Resident()
        self._tidier = threading.Thread(target=self._tidy, name="resident", daemon=True)
        self._http = HttpSide(root, self._run, self._tracked, _log)
        """Also answers HTTP hooks while the root has an HTTP configuration (http_follow)."""

    def serve(self) -> int:
        """Take the start-up lock, bind, serve; 0 when done, 0 too when another server runs."""
        from supervisor.store.paths import ensure_private_dir, require_private

        run = self.path.parent
        ensure_private_dir(self.root)  # refused when another user owns or may write to it
        ensure_private_dir(run)
        lock_fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        require_private(Path(f"{self.path}.lock"), "hook server lock")
        self._lock_fd = lock_fd
        try:
            try:
                fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                _log("another server holds the lock; exiting")
                return 0
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()  # stale: its server died without cleaning up
            # HTTP first: a client that started this server waits for the socket to appear and
            # then lets the agent's HTTP hooks go, which must find the port already answering
            self._http.follow()
            try:
                listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                os.chdir(run)  # bind by a relative name: AF_UNIX paths are limited to ~100 bytes
                listener.bind(self.path.name)
                os.chmod(self.path, 0o600)
                listener.listen(64)
                listener.settimeout(POLL_S)
            except BaseException:
                self._http.close()
                raise
            _write_private(Path(f"{self.path}.pid"), f"{os.getpid()}\n")
            _log(f"serving on {self.path} (pid {os.getpid()}, idle exit {self.idle_s:g}s)")
            # the price table takes seconds to load: not in the first call that records usage
            threading.Thread(target=_warm_prices, name="prices", daemon=True).start()
            self._tidier.start()
            try:
                self._loop(listener)
            finally:
                self._shutdown(listener)
            return 0
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing the last descriptor releases the flock
            self._lock_fd = None

    def _loop(self, listener: socket.socket) -> None:
        """Start the first worker, then watch for the stop and the idle exit."""
        with self._lock:
            self._waiting += 1
        self._start_worker(listener)
        while not self.stop.wait(POLL_S):
            with self._lock:
                idle = self._active == 0 and time.monotonic() - self._last > self.idle_s
            if idle:
                _log("idle; exiting")
                return

    def _start_worker(self, listener: socket.socket) -> None:
        """A worker thread (counted in `_waiting` by the caller)."""
        threading.Thread(target=self._worker, args=(listener,), name="hook", daemon=True).start()

    def _worker(self, listener: socket.socket) -> None:
        """Accept a call and serve it, again and again, until the server closes. A call accepted
        while no other worker waits in `accept` first starts one that does, so a held call
        never keeps the others waiting; a worker done with a call while `SPARE_WORKERS` others
        wait ends. A worker counts itself as waiting again before it sends its answer
        (`_back`): the agent's next call may come the moment the answer arrives, and must not
        find nobody counted and start a thread."""
        while True:
            try:
                conn = None if self._closing.is_set() else listener.accept()[0]
            except TimeoutError:
                continue
            except OSError as exc:
                if self._accept_failed(exc):
                    continue
                conn = None
            with self._lock:
                self._waiting -= 1
                if conn is None:
                    return
                self._active += 1
                self._last = time.monotonic()
                another = self._waiting == 0
                if another:
                    self._waiting += 1
            if another:
                try:
                    self._start_worker(listener)
                except RuntimeError as exc:  # no thread to be had: this one comes back (`_back`)
                    _log(f"no new worker: {exc}")
                    with self._lock:
                        self._waiting -= 1
            if not self._serve_one(conn, self._back):
                return

    def _accept_failed(self, exc: OSError) -> bool:
        """`accept` failed: True to try again after a short pause, False (the server stops) when
        the listener itself is broken. Out of descriptors (EMFILE, ENFILE) or memory, or a client
        gone before it was accepted, passes: a worker that ended on it could leave nobody in
        `accept`, and every later call would wait out its agent's timeout on a connection the
        kernel took but nobody answers (the client then lets the call go unsupervised). A
        broken listener stops the server instead: its socket is removed, so the next call
        starts a fresh one. Logged once per `ACCEPT_LOG_S`, not at every retry."""
        fatal = exc.errno in LISTENER_BROKEN
        now = time.monotonic()
        with self._lock:
            quiet = not fatal and now - self._accept_logged < ACCEPT_LOG_S
            if not quiet:
                self._accept_logged = now
        if not quiet:
            what = "stopping" if fatal else f"retrying every {ACCEPT_RETRY_S:g}s"
            _log(f"accept failed: {type(exc).__name__}: {exc}; {what}")
        if fatal:
            self.stop.set()
            return False
        self._closing.wait(ACCEPT_RETRY_S)  # (the descriptors or memory may come back)
        return True

    def _back(self) -> bool:
        """A worker is done with its call's step: counted as waiting in `accept` again (True),
        or to end (False) when `SPARE_WORKERS` others already wait."""
        with self._lock:
            if self._waiting >= SPARE_WORKERS:
                return False
            self._waiting += 1
            return True

    def _tidy(self) -> None:
        """Save idle sessions' states, put away old ones (`Resident.tidy`), until stopped."""
        while not self.stop.wait(POLL_S):
            self._http.follow()  # (a configuration made while no command hook calls)
            try:
                self.resident.tidy()
            except Exception as exc:  # a full disk: the next tidy or step tries again
                _log(f"saving sessions failed: {type(exc).__name__}: {exc}")

    def _run(self, target: str, data: bytes, budget: Budget) -> str:
        from supervisor.hooks.runtime import run_safely

        return run_safely(target, data, self.root, budget, _log, resident=self.resident)

    @contextlib.contextmanager
    def _tracked(self) -> Iterator[None]:
        """One call in flight (an HTTP request): counted for the idle exit and the shutdown."""
        with self._lock:
            self._active += 1
            self._last = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self._active -= 1
                self._last = time.monotonic()

    def _spawn(self, conn: socket.socket) -> None:
        with self._lock:
            self._active += 1
            self._last = time.monotonic()
        threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()

    def _shutdown(self, listener: socket.socket) -> None:
        """Stop taking calls: unlink first, so new clients fall back, then let the workers leave
        `accept`, answer the queued calls and wait for the calls in flight."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        self._http.close()
        self._closing.set()
        while True:  # each leaves within POLL_S (its accept's timeout)
            with self._lock:
                if self._waiting == 0:
                    break
            time.sleep(0.01)
        listener.setblocking(False)
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                break
            conn.setblocking(True)
            self._spawn(conn)
        listener.close()
        pid_file = Path(f"{self.path}.pid")
        with contextlib.suppress(OSError, ValueError):
            if int(pid_file.read_text()) == os.getpid():
                pid_file.unlink()
        self._release()  # a new server may start now, while held calls here finish
        while True:
            with self._lock:
                if self._active == 0:
                    break
            time.sleep(0.05)
        self.stop.set()  # (an idle exit did not set it)
        if self._tidier.is_alive():
            self._tidier.join()
        try:
            self.resident.close_all()
        except Exception as exc:
            _log(f"saving sessions failed: {type(exc).__name__}: {exc}")
        _log("stopped")

    def _serve_one(self, conn: socket.socket, back: Callable[[], bool] | None = None) -> bool:
        """Read, answer and reply to one call; `back` (a worker's `_back`) is called once, before
        the reply is sent or when the call failed; its result is returned (False without)."""
        started = time.monotonic()
        stays = False
        try:
            with conn:
                conn.settimeout(READ_TIMEOUT_S)
                header, data = _read_call(conn)
                later: list[Callable[[], None]] = []
                reply = _encode(self._answer(header, data, started, later),
                                raw=header.get("reply") == "raw")
                if back is not None:  # (the reply is small: sending it never waits for long)
                    stays, back = back(), None
                conn.settimeout(READ_TIMEOUT_S)
                conn.sendall(reply)
            _after_answer(later)  # the client has its answer and the connection is closed
        except Exception as exc:
            _log(f"connection failed: {type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._active -= 1
                self._last = time.monotonic()
            if back is not None:
                stays = back()
        return stays

    def _answer(self, header: dict[str, Any], data: bytes, started: float,
                later: list[Callable[[], None]]) -> dict[str, object]:
        if header.get("version") != __version__:
            return {"error": "version"}
        budget = Budget(float(header["timeout"]), started)
        if for_target(str(header["target"])):  # (no `stat` a call for agents without HTTP)
            self._http.follow()  # before the step: a SessionStart comes before its HTTP hooks
        from supervisor.hooks.runtime import run_safely

        run = header.get("run")
        text = run_safely(str(header["target"]), data, Path(header["root"]), budget, _log,
                          run=(str(run[0]), run[1]) if run else None, resident=self.resident,
                          later=later)
        return {"stdout": text, "status": 0, "served_by": os.getpid()}


def _after_answer(later: list[Callable[[], None]]) -> None:
    """Work a step left for after its answer (`runtime.run_safely`'s `later`): the agent no
    longer waits for it, and each piece is safe to lose, so a failure is only logged."""
    for work in later:
        try:
            work()
        except Exception as exc:
            _log(f"work after an answer failed: {type(exc).__name__}: {exc}")


def _encode(reply: dict[str, object], raw: bool) -> bytes:
    """The answer as the client asked for it: JSON, or `<status>\n<stdout>` (`version\n`)."""
    if not raw:
        return json.dumps(reply).encode()
    if "error" in reply:
        return f"{reply['error']}\n".encode()
    return f"{reply['status']}\n{reply['stdout']}".encode("utf-8", "surrogateescape")


def _read_call(conn: socket.socket) -> tuple[dict[str, Any], bytes]:
    """The header and the payload's first `READ_LIMIT_BYTES` (the rest is drained). The payload
    ends where the client half-closes, or after the header's `length` bytes: a plugin in an
    agent's JavaScript runtime (Bun) cannot half-close a socket and still read the answer."""
    buffer = io.BytesIO()
    head = b""
    length: int | None = None
    while chunk := conn.recv(65536):
        if not head:
            buffer.write(chunk)
            raw = buffer.getvalue()
            if b"\n" not in raw:
                if len(raw) > HEADER_LIMIT_BYTES:
                    raise ValueError("no header line")
                continue
            head, _, chunk = raw.partition(b"\n")
            buffer = io.BytesIO()
            header = json.loads(head)
            given = header.get("length")
            length = given if isinstance(given, int) and given >= 0 else None
        room = READ_LIMIT_BYTES - buffer.tell()
        if room > 0:
            buffer.write(chunk[:room])
        if length is not None:
            length -= len(chunk)
            if length <= 0:
                break
    if not head:
        raise ValueError("no header line")
    return header, buffer.getvalue()


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _log(message: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    print(f"{stamp} hookd[{os.getpid()}] {message}", file=sys.stderr, flush=True)
    _rotate_log()


_log_lock = threading.Lock()


def _rotate_log() -> None:
    """When stderr is `hookd.log` and it grew past `LOG_LIMIT_BYTES`: keep it as `hookd.log.1`
    (replacing the older one) and go on in a new file (the server's stderr is moved there)."""
    with _log_lock:
        try:
            old = os.fstat(2)
            if old.st_size <= LOG_LIMIT_BYTES:
                return
            current = os.readlink("/proc/self/fd/2")
            if os.path.basename(current) != "hookd.log":
                return
            os.replace(current, current + ".1")
            fd = os.open(current, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            with contextlib.suppress(OSError):
                if os.path.samestat(os.fstat(1), old):  # stdout goes to the log too
                    os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.close(fd)
        except OSError:
            return


def idle_seconds() -> float:
    """`$SUPERVISOR_HOOKD_IDLE_S` when it is a positive number, else 600."""
    try:
        value = float(os.environ.get(ENV_IDLE, ""))
    except ValueError:
        return DEFAULT_IDLE_S
    return value if value > 0 else DEFAULT_IDLE_S


def _warm_prices() -> None:
    """The price table loaded in a thread of its own (`prices.warm`), with the import of its
    module: in `serve`, after the socket listens, a failed import (out of descriptors or
    memory as the first calls came in) ended the server and every call waiting on it. Here it
    costs only the warm-up: the first call that prices usage loads the table itself."""
    try:
        from supervisor.guard.prices import warm
    except Exception as exc:
        _log(f"the price table was not loaded ahead ({type(exc).__name__}: {exc}); the first "
             "call that prices usage loads it")
        return
    warm()


def main(argv: list[str] | None = None) -> int:
    """`--root DIR --socket PATH`: serve hook calls for that root on that socket."""
    import argparse

    parser = argparse.ArgumentParser(prog="supervisor.hooks.server")
    parser.add_argument("--root", required=True)
    parser.add_argument("--socket", required=True)
    args = parser.parse_args(argv)
    server = HookServer(Path(args.root).resolve(), Path(args.socket).resolve(), idle_seconds())
    signal.signal(signal.SIGTERM, lambda *_: server.stop.set())
    signal.signal(signal.SIGINT, lambda *_: server.stop.set())
    try:
        return server.serve()
    except Exception as exc:
        _log(f"failed: {type(exc).__name__}: {exc}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
