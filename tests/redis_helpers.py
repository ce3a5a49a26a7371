"""A private `redis-server` per test: a free loopback port, a temporary directory, AOF on.

Tests that need one take the `redis_server` fixture. Without a `redis-server` binary they are
skipped with the reason, unless `$SUPERVISOR_REQUIRE_REDIS` is set (CI sets it): then its
absence is a failure.
"""

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
START_S = 15.0
START_ATTEMPTS = 5
"""Ports tried when another worker takes the chosen one first."""


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found is None:
        message = "redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("SUPERVISOR_REQUIRE_REDIS"):
            pytest.fail(message + "; $SUPERVISOR_REQUIRE_REDIS says it must be")
        pytest.skip(message)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    """One redis-server of ours (never a system service); stopped by `stop()`."""

    def __init__(self, directory: Path, *, tls: dict[str, str] | None = None,
                 extra: tuple[str, ...] = ()) -> None:
        self.binary = redis_binary()
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.tls = tls
        self.extra = extra
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> "RedisServer":
        """Start it on a free port. Tests run in parallel (pytest-xdist): a port another worker
        took between `free_port` and the bind makes this server exit, and the server that
        answers there is someone else's; so the answer must come from ours (its `dir`), and
        a lost race is tried again on another port."""
        for _ in range(START_ATTEMPTS):
            if self._start_once():
                return self
            self.port = free_port()
        raise RuntimeError(f"redis-server did not start after {START_ATTEMPTS} ports: "
                           f"{(self.dir / 'redis.log').read_text(errors='replace')[-2000:]}")

    def _start_once(self) -> bool:
        args = [self.binary, "--bind", "127.0.0.1", "--dir", str(self.dir),
                "--appendonly", "yes", "--save", "", "--daemonize", "no",
                "--logfile", str(self.dir / "redis.log"), *self.extra]
        if self.tls:
            args += ["--port", "0", "--tls-port", str(self.port),
                     "--tls-cert-file", self.tls["cert"], "--tls-key-file", self.tls["key"],
                     "--tls-ca-cert-file", self.tls["ca"], "--tls-auth-clients", "no"]
        else:
            args += ["--port", str(self.port)]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_S
        while True:
            with contextlib.suppress(Exception), self.admin() as client:
                if client.ping() and self.proc.poll() is None and \
                        client.config_get("dir").get("dir") == str(self.dir.resolve()):
                    return True
            if self.proc.poll() is not None:
                return False  # the port was taken meanwhile: another one
            if time.monotonic() > deadline:
                log = (self.dir / "redis.log").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"redis-server did not start on {self.port}: {log}")
            time.sleep(0.05)

    def admin(self):
        """A client as the default user (the tests' administrator)."""
        import redis

        kwargs = {}
        if self.tls:
            kwargs = {"ssl": True, "ssl_ca_certs": self.tls["ca"]}
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=10, **kwargs)

    def url(self, user: str | None = None, password: str | None = None, **query: str) -> str:
        auth = f"{user}:{password}@" if user and password else (f"{user}@" if user else "")
        scheme = "rediss" if self.tls else "redis"
        tail = "&".join(f"{k}={v}" for k, v in query.items())
        return f"{scheme}://{auth}127.0.0.1:{self.port}/0" + (f"?{tail}" if tail else "")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it (SIGTERM: Redis flushes its AOF first; SIGKILL: it does not)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self, sig: int = signal.SIGTERM) -> None:
        self.stop(sig)
        self.start()


class RelayThread:
    """A `Relay` in a thread of the test process, with its own event loop."""

    def __init__(self, root: Path, url: str, host: str, **relay_args) -> None:
        from supervisor.store.open import open_store
        from supervisor.store.redis.relay import Relay

        self.store = open_store(url)
        self.logs: list[str] = []
        self.relay = Relay(root, self.store, host, log=self.logs.append, **relay_args)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._main, daemon=True)
        self.thread.start()
        self._ready.wait(10)
        time.sleep(0.3)  # let its watcher settle (what was written before, a rescan finds)

    def _main(self) -> None:
        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            self._ready.set()
            await self.relay.run(self._stop)

        try:
            asyncio.run(main())
        except BaseException as exc:  # shown by the test that stops it
            self.error = exc
            self._ready.set()

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self.thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(20)
        self.store.close()
        if self.error is not None:
            raise self.error


def relay_process(root: Path, url: str, host: str, *extra: str, log: Path | None = None
                  ) -> subprocess.Popen[bytes]:
    """`supervisor relay` as a real process (its stderr to `log`)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - the child owns it
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "supervisor", "relay", "--store", url, "--root", str(root),
             "--host", host, *extra],
            stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env)
    finally:
        if log:
            out.close()


def wait_for(condition, timeout: float = 30.0, what: str = "condition"):
    """Poll `condition()` until it is truthy (returned), or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
