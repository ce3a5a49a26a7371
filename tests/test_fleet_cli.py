"""The command line on a Redis store: a remote rollback that the agent's host carries out, and
the Redis tests' own rule (skipped without redis-server on a developer's machine, failed in CI).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli
from redis_helpers import RedisServer, relay_process, wait_for
from test_fleet_e2e import demo_agent, local_events, stop_all

from supervisor.store.open import open_store

pytestmark = pytest.mark.slow


def test_a_remote_rollback_is_checked_then_carried_out_on_the_agents_host(
        tmp_path: Path, redis_server: RedisServer) -> None:
    root = tmp_path / "h1"
    procs = [relay_process(root, redis_server.url(), "h1", log=tmp_path / "relay.log"),
             demo_agent(root, tmp_path / "work", "looper")]
    store = open_store(redis_server.url())
    try:
        wait_for(lambda: store.exists("h1/looper") and store.summary("h1/looper").pending, 90,
                 "the escalation")
        store.close()
        url = redis_server.url()
        unknown = run_cli("answer", "h1/looper", "--rollback", "cp-99", "--store", url)
        assert unknown.returncode == 2
        assert "no checkpoint 'cp-99' in session 'h1/looper' (it has: cp-1" in unknown.stderr
        done = run_cli("answer", "h1/looper", "--rollback", "cp-1", "--wait", "30",
                       "--store", url)
        assert done.returncode == 0, done.stderr
        assert "applied:" in done.stdout
        rollbacks = [e for e in local_events(root, "looper") if e["type"] == "rollback"]
        assert [e["checkpoint_id"] for e in rollbacks] == ["cp-1"]
    finally:
        stop_all(procs)


def test_redis_tests_skip_without_redis_server_but_fail_when_ci_requires_it(
        tmp_path: Path) -> None:
    (tmp_path / "test_needs_redis.py").write_text(
        "from redis_helpers import redis_binary\n\ndef test_x():\n    redis_binary()\n")
    empty = tmp_path / "no-bin"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty),
           "PYTHONPATH": str(Path(__file__).parent) + os.pathsep + str(Path(__file__).parents[1])}
    env.pop("SUPERVISOR_REQUIRE_REDIS", None)

    def run(**extra: str) -> str:
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "-rs", str(tmp_path / "test_needs_redis.py")], cwd=tmp_path,
                              env={**env, **extra}, capture_output=True, text=True,
                              timeout=120).stdout

    skipped = run()
    assert "1 skipped" in skipped and "redis-server is not installed" in skipped
    failed = run(SUPERVISOR_REQUIRE_REDIS="1")
    assert "1 failed" in failed and "SUPERVISOR_REQUIRE_REDIS" in failed
