"""A Redis password in `--store` never stays in the process list of a long-running command
(issue 24, item 8): `/proc/PID/cmdline` is readable by every local user. The relay (and the
dashboard, and a followed tail) start themselves again under the same pid with the password
moved to their environment (readable only by their user), and say so. A real relay against a
real redis-server with the ACL users of docs/fleet.md."""

import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis_helpers import RedisServer

from supervisor.store.writer import event_writer
from tests.conftest import cli_env
from tests.test_fleet_security import SECRETS, add_users

pytestmark = pytest.mark.slow


def test_the_relay_keeps_no_password_in_its_command_line(tmp_path: Path,
                                                         redis_server: RedisServer) -> None:
    add_users(redis_server)
    root = tmp_path / "h1"
    with event_writer(root, "s") as w:
        w.append({"type": "session_start", "agent": "bot", "task": None})
    url = redis_server.url("relay-h1", SECRETS["relay-h1"])
    assert SECRETS["relay-h1"] in url
    env = cli_env()
    env.pop("SUPERVISOR_STORE_PASSWORD", None)
    proc = subprocess.Popen([sys.executable, "-m", "supervisor", "relay", "--store", url,
                             "--root", str(root), "--host", "h1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        end = time.monotonic() + 30
        with redis_server.admin() as admin:
            while not admin.exists("sv:ev:h1/s"):
                assert time.monotonic() < end and proc.poll() is None, "the relay never shipped"
                time.sleep(0.1)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes()
        assert b"relay" in cmdline and SECRETS["relay-h1"].encode() not in cmdline
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "a password in --store shows in the process list" in err.decode()
    assert SECRETS["relay-h1"] not in err.decode()
