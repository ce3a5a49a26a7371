"""One dashboard for agents on many hosts, end to end: three local roots stand for three hosts,
each with a scripted demo agent (the real guard SDK, real git) and a real `supervisor relay`
process; one dashboard (the real Textual app under Pilot) follows them all through a private
redis-server, answers an escalation, and the agent on its host applies it. Then the faults that
involve agents: two operators answering at once, and Redis down while an agent loops.
"""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from redis_helpers import REPO, RedisServer, relay_process, wait_for
from tui_support import press, screen_text

from supervisor.operator.send import send_decision
from supervisor.store.open import open_store
from supervisor.store.paths import session_files
from supervisor.tui.app import SupervisorApp
from supervisor.tui.screens.escalation import EscalationScreen

pytestmark = [pytest.mark.slow, pytest.mark.anyio]
HOSTS = ("h1", "h2", "h3")
GUIDANCE = "the test fails on add(); make add return a + b"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def demo_agent(root: Path, work: Path, session: str, *, deadline: float = 120,
               pace: float = 0.1) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen(
        [sys.executable, "-m", "supervisor.demo.agent", "--root", str(root), "--session",
         session, "--scenario", "loop", "--workdir", str(work), "--pace", str(pace),
         "--deadline", str(deadline)],
        env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def local_events(root: Path, sid: str) -> list[dict]:
    path = session_files(root, sid).events
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


async def until(pilot, condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; screen:\n"
                                 f"{screen_text(pilot.app)}")
        await pilot.pause(0.1)


async def test_one_dashboard_three_hosts_an_answered_escalation(
        tmp_path: Path, redis_server: RedisServer) -> None:
    procs = []
    roots = {host: tmp_path / host for host in HOSTS}
    try:
        for host, root in roots.items():
            procs.append(relay_process(root, redis_server.url(), host,
                                       log=tmp_path / f"relay-{host}.log"))
            # its escalation outlasts every bound below (60 + 90 + 60 s and the typing): at the
            # default 120 s, a loaded machine let the deadline skip the task before the answer
            procs.append(demo_agent(root, tmp_path / f"work-{host}", "looper", deadline=600))
        store = open_store(redis_server.url())
        app = SupervisorApp(store, theme="supervisor-dark", theme_folders=[REPO / "themes"],
                            table_tick=0.0)
        async with app.run_test(size=(160, 45)) as pilot:
            names = [f"{host}/looper" for host in HOSTS]
            await until(pilot, lambda: sorted(app.model.sessions) == names, "all three hosts")
            await until(pilot, lambda: len(app.model.queue(time.time())) == 3,
                        "an escalation from each host", 90)
            assert "store: redis://127.0.0.1" in screen_text(app)
            oldest_session, oldest = app.model.queue(time.time())[0]
            host = oldest_session.split("/")[0]
            await press(pilot, "e")
            await until(pilot, lambda: isinstance(app.screen, EscalationScreen),
                        "the escalation prompt")
            for key in ("g", *GUIDANCE, "ctrl+s"):
                await press(pilot, key)
            await until(pilot, lambda: "applied" in screen_text(app),
                        "the agent's answer on the prompt", 60)
            st = app.model.sessions[oldest_session]
            [outcome] = st.outcomes.values()
            assert (outcome.state, outcome.action) == ("applied", "guidance")
            await press(pilot, "escape")
            await until(pilot, lambda: len(app.model.queue(time.time())) == 2, "the queue shrunk")
        store.close()
        # the decision reached only that host, once, and its agent applied it
        for other, root in roots.items():
            control = session_files(root, "looper").control
            if other != host:
                assert not control.exists()
                continue
            [line] = [json.loads(x) for x in control.read_text().splitlines()]
            assert (line["action"], line["text"], line["escalation_id"]) == (
                "guidance", GUIDANCE, oldest["escalation_id"])
            applied = [e for e in local_events(root, "looper")
                       if e["type"] == "decision_applied"]
            assert [e["decision_id"] for e in applied] == [line["decision_id"]]
    finally:
        stop_all(procs)


def test_two_operators_answering_at_once_one_is_applied(tmp_path: Path,
                                                        redis_server: RedisServer) -> None:
    root = tmp_path / "h1"
    procs = [relay_process(root, redis_server.url(), "h1", log=tmp_path / "relay.log"),
             demo_agent(root, tmp_path / "work", "looper")]
    stores = [open_store(redis_server.url()) for _ in range(2)]
    try:
        wait_for(lambda: stores[0].exists("h1/looper")
                 and stores[0].summary("h1/looper").pending, 90, "the escalation")
        escalation = next(iter(stores[0].summary("h1/looper").pending))
        after = stores[0].end_cursor("h1/looper")
        ids: list[str] = []

        async def answer(store, action: str, text: str | None) -> None:
            ids.append(await asyncio.to_thread(
                send_decision, store, "h1/looper", action, escalation_id=escalation,
                text=text, operator=action))

        async def both() -> None:
            await asyncio.gather(answer(stores[0], "guidance", GUIDANCE),
                                 answer(stores[1], "skip", None))

        asyncio.run(both())
        outcomes = [stores[0].wait_outcome("h1/looper", d, after, 60) for d in ids]
        assert sorted(o["type"] for o in outcomes) == ["decision_applied", "decision_ignored"]
        ignored = next(o for o in outcomes if o["type"] == "decision_ignored")
        assert ignored["reason"].startswith("late:"), ignored
        control = session_files(root, "looper").control.read_text().splitlines()
        assert sorted(json.loads(x)["decision_id"] for x in control) == sorted(ids)
    finally:
        for store in stores:
            store.close()
        stop_all(procs)


def test_redis_down_while_an_agent_loops(tmp_path: Path) -> None:
    """The guard does not need Redis: the loop escalates, the deadline's fallback applies, the
    session ends; once Redis is up, everything arrives, once and in order."""
    root = tmp_path / "h1"
    server = RedisServer(tmp_path / "redis")  # down
    procs = [relay_process(root, server.url(), "h1", log=tmp_path / "relay.log"),
             demo_agent(root, tmp_path / "work", "looper", deadline=1.0, pace=0.05)]
    try:
        procs[1].wait(120)
        events = local_events(root, "looper")
        kinds = [e["type"] for e in events]
        assert "escalation" in kinds and kinds[-1] == "session_end"
        fallback = [e for e in events if e["type"] == "decision_applied"]
        assert fallback and fallback[0]["decision_id"] == "fallback"
        # the relay (its own process) may not have tried to connect yet when this quick agent
        # is done: under load its start-up alone outlasts the agent
        wait_for(lambda: "cannot reach the server" in (tmp_path / "relay.log").read_text(), 60,
                 "the relay saying Redis is unreachable")
        server.start()
        store = open_store(server.url())
        try:
            wait_for(lambda: store.exists("h1/looper")
                     and len(store.read_all("h1/looper").events) == len(events), 60,
                     "everything shipped")
            shipped = store.read_all("h1/looper").events
            assert [e.seq for e in shipped] == [e["seq"] for e in events]
            assert store.summary("h1/looper").end_status is not None
        finally:
            store.close()
    finally:
        stop_all(procs)
        server.stop()


async def test_an_empty_or_unreachable_store_says_what_to_do(redis_server: RedisServer) -> None:
    for url in (redis_server.url(), "redis://127.0.0.1:1/0"):  # empty; nothing listening
        store = open_store(url)
        app = SupervisorApp(store, theme="supervisor-dark", theme_folders=[REPO / "themes"])
        async with app.run_test(size=(140, 30)) as pilot:
            shown = pilot.app
            await until(pilot, lambda a=shown: "as soon as a relay ships them" in screen_text(a),
                        "the empty store's help")
            assert "supervisor relay --store URL --host NAME" in screen_text(shown)
            said = [str(n.message) for n in shown._notifications]
            if url.endswith(":1/0"):
                said = await until(pilot, lambda a=shown: [
                    m for n in a._notifications if "cannot read the store" in (m := str(n.message))
                ], "the unreachable store said")
                assert "cannot reach the server" in said[0]
            else:
                assert not any("cannot read the store" in m for m in said)
        store.close()
