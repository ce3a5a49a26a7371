"""The follower: one real watchfiles watcher over a real directory tree, batches per session.

The safety re-scan is set far beyond each test's time, so what arrives comes from the watcher.
"""

import asyncio
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from supervisor.store.follower import Follower, SessionBatch
from supervisor.store.paths import session_files
from supervisor.store.writer import control_writer, event_writer

WAIT_S = 10.0


def message(text: str) -> dict:
    return {"type": "message", "role": "user", "text": text}


class Recorder:
    """Collects delivered batches; lets a test wait for a condition on them."""

    def __init__(self) -> None:
        self.batches: list[SessionBatch] = []

    async def __call__(self, batches: list[SessionBatch]) -> None:
        self.batches.extend(batches)

    def texts(self, session_id: str) -> list[str]:
        return [e.text for b in self.batches if b.session_id == session_id and b.kind == "events"
                for e in b.events]

    async def until(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + WAIT_S
        while not condition():
            assert time.monotonic() < deadline, f"timed out; got {self.batches}"
            await asyncio.sleep(0.02)


def follow(root: Path, scenario: Callable[[Recorder], object], **options: object) -> Recorder:
    """Run a Follower on `root` while `scenario(recorder)` (a coroutine function) runs."""
    recorder = Recorder()

    async def main() -> None:
        stop = asyncio.Event()
        follower = Follower(root, rescan_interval=60, **options)
        task = asyncio.create_task(follower.run(recorder, stop))
        try:
            await scenario(recorder)
        finally:
            stop.set()
            await asyncio.wait_for(task, WAIT_S)

    asyncio.run(main())
    return recorder


def test_existing_sessions_then_appends_then_a_new_session(root: Path) -> None:
    with event_writer(root, "old") as w:
        w.append_many([message("a"), message("b")])

    async def scenario(rec: Recorder) -> None:
        await rec.until(lambda: rec.texts("old") == ["a", "b"])
        await asyncio.sleep(0.2)  # let the watcher settle
        with event_writer(root, "old") as w:
            w.append(message("c"))
        await rec.until(lambda: rec.texts("old") == ["a", "b", "c"])
        with event_writer(root, "new") as w:
            w.append(message("hello"))
        await rec.until(lambda: rec.texts("new") == ["hello"])
        with control_writer(root, "new") as w:
            w.append({"type": "decision", "decision_id": "d1", "action": "pause",
                      "operator": "me"})
        await rec.until(lambda: any(b.kind == "control" and b.events for b in rec.batches))

    rec = follow(root, scenario)
    offsets = [o for b in rec.batches if b.session_id == "old" for o in b.cursors]
    assert offsets == sorted(offsets) and len(offsets) == 3


def test_a_missing_root_is_created_and_watched(tmp_path: Path) -> None:
    root = tmp_path / "not-yet"

    async def scenario(rec: Recorder) -> None:
        await asyncio.sleep(0.3)
        with event_writer(root, "s") as w:
            w.append(message("first"))
        await rec.until(lambda: rec.texts("s") == ["first"])

    follow(root, scenario)


def test_vanished_session_is_reported_gone(root: Path) -> None:
    with event_writer(root, "doomed") as w:
        w.append(message("x"))

    async def scenario(rec: Recorder) -> None:
        await rec.until(lambda: rec.texts("doomed") == ["x"])
        await asyncio.sleep(0.2)
        shutil.rmtree(root / "sessions" / "doomed")
        await rec.until(lambda: any(b.gone and b.session_id == "doomed" for b in rec.batches))

    follow(root, scenario)


def test_truncation_is_delivered_as_reset(root: Path) -> None:
    with event_writer(root, "t") as w:
        w.append_many([message("1"), message("2"), message("3")])

    async def scenario(rec: Recorder) -> None:
        await rec.until(lambda: rec.texts("t") == ["1", "2", "3"])
        await asyncio.sleep(0.2)
        session_files(root, "t").events.write_bytes(b"")
        with event_writer(root, "t") as w:
            w.append(message("again"))
        await rec.until(lambda: rec.texts("t")[-1:] == ["again"])

    rec = follow(root, scenario)
    resets = [b for b in rec.batches if b.session_id == "t" and b.reset]
    assert resets, rec.batches
    after = rec.batches[rec.batches.index(resets[0]):]
    assert [e.text for b in after if b.session_id == "t" for e in b.events] == ["again"]


def test_bad_lines_arrive_with_offsets(root: Path) -> None:
    async def scenario(rec: Recorder) -> None:
        with event_writer(root, "b") as w:
            w.append(message("ok"))
        path = session_files(root, "b").events
        size = path.stat().st_size
        with open(path, "ab") as f:
            f.write(b"garbage\n")
        await rec.until(lambda: any(b.bad_lines for b in rec.batches))
        [bad] = [bad for b in rec.batches for bad in b.bad_lines]
        assert bad.offset == size and bad.raw == b"garbage"

    follow(root, scenario)


def test_large_first_load_arrives_in_several_batches(root: Path) -> None:
    with event_writer(root, "big") as w:
        w.append_many([message("y" * 1000) for _ in range(2000)])  # ~2 MB

    async def scenario(rec: Recorder) -> None:
        await rec.until(lambda: len(rec.texts("big")) == 2000)

    rec = follow(root, scenario, poll_budget=256 * 1024)
    assert len([b for b in rec.batches if b.session_id == "big"]) >= 8


def test_scan_is_a_synchronous_one_shot(root: Path) -> None:
    with event_writer(root, "s1") as w:
        w.append(message("a"))
    follower = Follower(root)
    [batch] = follower.scan()
    assert (batch.session_id, [e.text for e in batch.events]) == ("s1", ["a"])
    assert follower.scan() == []
    shutil.rmtree(root / "sessions" / "s1")
    [gone] = follower.scan()
    assert gone.gone and gone.session_id == "s1"


def test_the_first_load_comes_in_pieces_newest_first_and_says_how_far_it_got(
        tmp_path: Path, monkeypatch) -> None:
    """Each piece of the first load is delivered as soon as it is read, the most recently
    written sessions first; `loading` counts the sessions read until the piece that completes
    the load, then is None (nothing is said to be loading any more)."""
    import os

    from supervisor.store import follower as follower_module

    for n, sid in enumerate(("old", "newest", "middle")):
        with event_writer(tmp_path, sid) as w:
            w.append(message(sid))
        os.utime(session_files(tmp_path, sid).events, (0, {"old": 1e9, "middle": 2e9,
                                                          "newest": 3e9}[sid] + n))
    monkeypatch.setattr(follower_module, "FIRST_LOAD_BYTES", 1)  # one session per piece
    follower = Follower(tmp_path, rescan_interval=60)
    assert follower.loading == (0, 0)  # not read yet: nothing can be called empty
    pieces: list[tuple[list[str], tuple[int, int] | None]] = []

    async def consumer(batches: list[SessionBatch]) -> None:
        pieces.append(([b.session_id for b in batches], follower.loading))

    async def main() -> None:
        stop = asyncio.Event()
        task = asyncio.create_task(follower.run(consumer, stop))
        deadline = time.monotonic() + WAIT_S
        while len(pieces) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(task, WAIT_S)

    asyncio.run(main())
    assert pieces == [(["newest"], (1, 3)), (["middle"], (2, 3)), (["old"], None)]
    assert follower.loading is None
