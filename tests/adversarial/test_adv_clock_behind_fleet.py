"""An agent on another host whose clock is behind is not judged dead (issue 41, low), on a real
redis-server with a real relay.

Across hosts no process can be looked up: silence decides. It was measured by the agent's own
time stamps, so an agent whose clock was 120 s behind looked silent for 120 s, was judged dead
and its operator's answer refused. Its silence is now counted from when its events reached the
store (a Redis stream entry's id is the server's clock at arrival), whatever its clock says;
an agent whose events stopped arriving is still dead."""

import time
from pathlib import Path

import pytest
from redis_helpers import RedisServer, RelayThread, wait_for

from supervisor.store.liveness import dead_after
from supervisor.store.open import open_store
from supervisor.store.writer import event_writer
from tests.conftest import run_cli

pytestmark = pytest.mark.slow

BEHIND_S = 120.0
HEARTBEAT_S = 5.0


def test_a_live_agent_on_a_host_with_a_slow_clock_gets_its_answer(
        tmp_path: Path, redis_server: RedisServer) -> None:
    host = tmp_path / "h1"
    then = time.time() - BEHIND_S  # the agent's clock, on host h1
    with event_writer(host, "s") as w:
        w.append({"type": "session_start", "agent": "sdk", "task": "t", "cwd": str(tmp_path),
                  "pid": 4242, "host": "h1/pid:[4026531836]", "heartbeat_s": HEARTBEAT_S,
                  "ts": then})
        w.append({"type": "escalation", "escalation_id": "esc-1", "level": 3,
                  "reason": "held", "evidence": [], "options": ["approve", "skip"],
                  "deadline_ts": None, "fallback": "skip", "kind": "pause", "ts": then + 1})
        w.append({"type": "heartbeat", "ts": then + 2})
    url = redis_server.url()
    relay = RelayThread(host, url, "h1")
    operator = open_store(url)
    try:
        wait_for(lambda: operator.session_ids() == ["h1/s"]
                 and operator.summary("h1/s").events == 3, 30, "the relay shipped the events")
        summary = operator.summary("h1/s")
        assert summary.last_seen_ts is not None and summary.last_heard_ts is not None
        assert summary.last_heard_ts - summary.last_seen_ts > BEHIND_S / 2  # arrival, not ts
        assert summary.liveness(time.time()).alive is True
        # silence still kills: no event arrived for longer than the heartbeats promised
        late = summary.last_heard_ts + dead_after(HEARTBEAT_S) + 1
        assert summary.liveness(late).alive is False
        done = run_cli("answer", "h1/s", "--approve", "--operator", "ana", "--no-wait",
                       "--store", url)
        assert done.returncode == 0, done.stderr
        assert "not running" not in done.stderr
    finally:
        relay.stop()
        operator.close()
