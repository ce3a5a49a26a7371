"""A Redis outage of a while, then back (issue 24, "not yet tried"): nothing lost, nothing
doubled.

A real redis-server is stopped for `OUTAGE_S` seconds while an agent-like process keeps writing
events, a guarded session keeps making tool calls, and an operator on the agent's host answers
it locally (`send_decision` on the host's own store). Then Redis comes back (same port, its AOF
kept). The real `supervisor relay` must ship every local line exactly once, in order; the
decision sent through Redis before the outage is in `control.jsonl` once (not delivered again
after the reconnect), the local one is applied once and reaches Redis once (as its
`decision_applied`), and a decision sent after the outage arrives once.

The outage lasts 40 s here to keep CI fast; nothing in the mechanism depends on its length: the
relay keeps its backlog in the local files themselves (positions, not a memory buffer), retries
with a backoff capped at `BACKOFF_MAX_S`, and delivers decisions by `decision_id` and stream
cursor, so a longer outage only means a longer backlog."""

import json
import signal
import time
from pathlib import Path

import pytest
from redis_helpers import RedisServer, relay_process, wait_for

from supervisor.guard.core import Guard
from supervisor.guard.settings import GuardSettings
from supervisor.operator.send import send_decision
from supervisor.store.open import open_store
from supervisor.store.paths import session_files
from tests.test_fleet_relay import assert_exact_copy, kill, local_lines, shipped, start_writer

pytestmark = pytest.mark.slow
HOST = "h1"
OUTAGE_S = 40.0


def _decisions(root: Path, sid: str) -> list[str]:
    text = session_files(root, sid).control.read_text()
    return [json.loads(line)["decision_id"] for line in text.splitlines()]


def test_a_long_redis_outage_loses_nothing_and_doubles_nothing(root: Path, tmp_path: Path
                                                               ) -> None:
    server = RedisServer(tmp_path / "redis").start()
    relay = relay_process(root, server.url(), HOST, log=tmp_path / "relay.log")
    # about 60 s of agent output: before, during and after the outage
    writer = start_writer(root, ["a"], 1200, pause=0.05)
    remote = open_store(server.url())
    guard = Guard.open(root, "g", cwd=tmp_path, settings=GuardSettings(checkpoint_every=0))
    try:
        guard.start("agent")
        guard.pre_call("bash", {"cmd": "ls 0"})
        wait_for(lambda: remote.exists(f"{HOST}/g"), 30, "the guarded session registered")
        before = send_decision(remote, f"{HOST}/g", "guidance", text="before the outage",
                               operator="remote-ana")
        wait_for(lambda: session_files(root, "g").control.exists()
                 and _decisions(root, "g") == [before], 30, "the remote decision delivered")
        remote.close()

        server.stop()  # SIGTERM: the AOF is flushed, the data comes back with it
        outage_ends = time.monotonic() + OUTAGE_S
        n = 1
        local = None
        while time.monotonic() < outage_ends:
            verdict = guard.pre_call("bash", {"cmd": f"ls {n}"})
            guard.post_call(verdict.call_id or f"c{n}", "ok")
            if local is None and n == 5:  # an operator on the agent's host, Redis down
                local = send_decision(root, "g", "guidance", text="during the outage",
                                      operator="local-bo")
            n += 1
            time.sleep(0.5)
        assert writer.poll() is None, "the agent stopped writing before Redis came back"
        assert "cannot reach the server" in (tmp_path / "relay.log").read_text()

        server.start()
        remote = open_store(server.url())
        guard.pre_call("bash", {"cmd": "ls after"})
        after = send_decision(remote, f"{HOST}/g", "guidance", text="after the outage",
                              operator="remote-ana")
        wait_for(lambda: _decisions(root, "g") == [before, local, after], 60,
                 "the decision sent after the outage delivered")
        guard.pre_call("bash", {"cmd": "ls last"})
        writer.wait(120)
        wait_for(lambda: shipped(server, root, ["a", "g"]), 90, "every line shipped")
        time.sleep(2.0)  # would anything come twice?
        assert_exact_copy(server, root, "a")
        assert_exact_copy(server, root, "g")
        assert len(local_lines(root, "a")) == 1200
        assert _decisions(root, "g") == [before, local, after]   # each once, in order
        applied = [getattr(e, "decision_id", None) for e in remote.read_all(f"{HOST}/g").events
                   if e.type == "decision_applied"]
        assert applied == [before, local, after]
    finally:
        guard.close()
        kill(writer)
        kill(relay, signal.SIGTERM)
        remote.close()
        server.stop()
