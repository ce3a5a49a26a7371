"""The store interface, the same tests for every backend (`store_world` in conftest: the local
root, and Redis fed by a real relay from a local root).

Each test writes events the way the agent side does (into a local root) and reads them back
through the store, as the dashboard and the CLI do.
"""

import asyncio
import threading
import time

import pytest

from supervisor.operator.send import send_decision
from supervisor.store.errors import InvalidSessionId, SessionNotFound

WAIT_S = 15.0


def msg(text: str) -> dict:
    return {"type": "message", "role": "user", "text": text}


def texts(batch) -> list[str]:
    return [e.text for e in batch.events if e.type == "message"]


def test_sessions_summaries_and_missing_ones(store_world) -> None:
    w = store_world
    w.write("a", [{"type": "session_start", "agent": "bot", "task": "t"}, msg("x")])
    w.write("b", [msg("y")])
    w.sync()
    store = w.store
    assert store.session_ids() == [w.name("a"), w.name("b")]
    assert store.exists(w.name("a")) and not store.exists(w.name("zz"))
    summary = store.summary(w.name("a"))
    assert summary.agent == "bot" and summary.events == 2
    assert [s.session_id for s in store.summaries()] == [w.name("b"), w.name("a")]
    with pytest.raises(SessionNotFound):
        store.require(w.name("zz"))
    with pytest.raises(InvalidSessionId):
        store.require("../etc")


def test_reader_from_a_cursor_sees_only_what_follows(store_world) -> None:
    w = store_world
    w.write("s", [msg("one"), msg("two")])
    w.sync()
    store = w.store
    sid = w.name("s")
    whole = store.read_all(sid)
    assert texts(whole) == ["one", "two"]
    assert whole.cursors == sorted(whole.cursors) and len(set(whole.cursors)) == 2
    end = store.end_cursor(sid)
    reader = store.reader(sid, start=end)
    assert not reader.poll()
    w.write("s", [msg("three")])
    w.sync()
    got = reader.poll(timeout=WAIT_S)
    assert texts(got) == ["three"] and got.cursors[0] > whole.cursors[-1]
    reader.close()
    again = store.reader(sid, start=whole.cursors[1])
    assert texts(again.poll()) == ["two", "three"]
    again.close()


def test_reader_waits_for_news(store_world) -> None:
    w = store_world
    w.write("s", [msg("one")])
    w.sync()
    reader = w.store.reader(w.name("s"), start=w.store.end_cursor(w.name("s")))

    def later() -> None:
        time.sleep(0.3)
        w.write("s", [msg("late")])
        w.sync()

    thread = threading.Thread(target=later)
    started = time.monotonic()
    thread.start()
    got = reader.poll(timeout=WAIT_S)
    thread.join()
    assert texts(got) == ["late"] and time.monotonic() - started < WAIT_S
    reader.close()


def test_log_reads_back_by_cursor_and_finds_text(store_world) -> None:
    w = store_world
    w.write("s", [msg("alpha"), msg("Beta gamma"), msg("delta")])
    w.sync()
    store = w.store
    sid = w.name("s")
    cursors = store.read_all(sid).cursors
    log = store.log(sid)
    lines = log.lines_at([cursors[2], cursors[0]])
    assert [line["text"] for line in lines] == ["delta", "alpha"]
    assert log.find("GAMMA", cursors[0]) == [cursors[1]]
    assert log.find("a", cursors[1]) == cursors[1:]


def test_a_decision_reaches_the_agent_and_its_outcome_comes_back(store_world) -> None:
    w = store_world
    w.write("s", [{"type": "session_start", "agent": "bot", "task": None}])
    w.sync()
    store = w.store
    sid = w.name("s")
    after = store.end_cursor(sid)
    decision_id = send_decision(store, sid, "guidance", text="read it first", operator="ana")
    lines = w.control_lines("s", wait=WAIT_S)
    assert [(d["decision_id"], d["text"], d["operator"]) for d in lines] == [
        (decision_id, "read it first", "ana")]
    w.write("s", [{"type": "decision_applied", "escalation_id": None,
                   "decision_id": decision_id, "action": "guidance", "outcome": "delivered"}])
    w.sync()
    outcome = store.wait_outcome(sid, decision_id, after, WAIT_S)
    assert outcome is not None and outcome["outcome"] == "delivered"
    assert store.wait_outcome(sid, "d-other", after, 0.2) is None
    control = store.read_all(sid, "control")
    assert [e.decision_id for e in control.events] == [decision_id]


def test_decisions_need_an_existing_session(store_world) -> None:
    with pytest.raises(SessionNotFound):
        send_decision(store_world.store, store_world.name("nope"), "abort")


def test_bad_lines_travel_with_their_place(store_world) -> None:
    w = store_world
    w.write("s", [msg("one")])
    w.write_raw("s", b'{"not": "an event"}\n')
    w.write("s", [msg("two")])
    w.sync()
    batch = w.store.read_all(w.name("s"))
    assert texts(batch) == ["one", "two"] and len(batch.bad_lines) == 1
    assert batch.cursors[0] < batch.bad_cursors[0] < batch.cursors[1]
    assert batch.bad_lines[0].offset == w.offset_of_line("s", 1)


def test_follower_delivers_existing_and_new_events(store_world) -> None:
    w = store_world
    w.write("a", [msg("first")])
    w.sync()
    got: list = []

    async def consumer(batches) -> None:
        got.extend(batches)

    def seen(sid: str) -> list[str]:
        return [e.text for b in got if b.session_id == sid and b.kind == "events"
                for e in b.events]

    async def main() -> None:
        stop = asyncio.Event()
        follower = w.store.follower()
        task = asyncio.create_task(follower.run(consumer, stop))
        try:
            await until(lambda: seen(w.name("a")) == ["first"])
            await asyncio.sleep(0.2)
            w.write("a", [msg("second")])
            w.write("b", [msg("hello")])
            await asyncio.to_thread(w.sync)
            await until(lambda: seen(w.name("a")) == ["first", "second"]
                        and seen(w.name("b")) == ["hello"])
            send_decision(w.store, w.name("b"), "pause", operator="ana")
            await until(lambda: any(b.kind == "control" and b.events for b in got))
        finally:
            stop.set()
            await asyncio.wait_for(task, WAIT_S)

    asyncio.run(main())


async def until(condition) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)
