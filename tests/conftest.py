"""Shared fixtures: a private store root per test, and a way to run the real CLI."""

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty store root, also exported as $SUPERVISOR_HOME for subprocesses."""
    path = tmp_path / "store"
    monkeypatch.setenv("SUPERVISOR_HOME", str(path))
    return path


def cli_env(**extra: str) -> dict[str, str]:
    """Environment for running `python -m supervisor` from this checkout in a subprocess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("SUPERVISOR_HOOKD_IDLE_S", "30")  # a hook server a test leaks dies soon
    env.update(extra)
    return env


def run_cli(*args: str, input: str | None = None, timeout: float = 60, **env: str):
    """Run the real command line in a subprocess; returns the CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "supervisor", *args],
        input=input, capture_output=True, text=True, timeout=timeout, env=cli_env(**env),
    )


def run_cli_in_terminal(*args: str, columns: int) -> str:
    """`supervisor ARGS` with its output on a real pseudo-terminal `columns` wide."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "supervisor", *args], stdout=slave,
                            stderr=subprocess.DEVNULL, env=cli_env(COLUMNS=str(columns)))
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.fixture(autouse=True)
def _private_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """$SUPERVISOR_CONFIG is an empty folder of the test's: the operator's own config.toml
    (their notification services) never reaches a test, and a test may write its own."""
    monkeypatch.setenv("SUPERVISOR_CONFIG", str(tmp_path / "config"))


@pytest.fixture(autouse=True)
def _stop_hook_servers(tmp_path: Path):
    """Kill every resident hook server a test started under its tmp_path, so none outlives it."""
    yield
    from tests.hookd_helpers import stop_servers

    stop_servers(tmp_path)


@pytest.fixture
def redis_server(tmp_path: Path):
    """A private redis-server on a free loopback port (AOF on), stopped after the test."""
    from tests.redis_helpers import RedisServer

    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop()


@pytest.fixture(params=["local", pytest.param("redis", marks=pytest.mark.slow)])
def store_world(request: pytest.FixtureRequest, root: Path, tmp_path: Path):
    """Agents write into a local root; the test reads through each store backend (the Redis one
    starts a redis-server: slow, so the fast tier reads through the local store only)."""
    from tests.store_worlds import LocalWorld, RedisWorld

    if request.param == "local":
        world = LocalWorld(root)
        yield world
        world.close()
        return
    server = request.getfixturevalue("redis_server")
    world = RedisWorld(root, server)
    try:
        yield world
    finally:
        world.close()
