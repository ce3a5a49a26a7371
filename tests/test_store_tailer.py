"""The tailer: incremental reads of one growing file that never raise on its content."""

import os
import tracemalloc
from pathlib import Path

import pytest

from supervisor.protocol.lines import encode_line
from supervisor.store.tailer import Tailer


def line(seq: int, text: str = "hi") -> bytes:
    return encode_line({"v": 1, "seq": seq, "ts": 1.0, "type": "message", "role": "user",
                        "text": text})


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def seqs(batch) -> list[int]:
    return [e.seq for e in batch.events]


def test_missing_then_empty_then_growing(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    tailer = Tailer(path)
    first = tailer.poll()
    assert first.missing and not first
    path.write_bytes(b"")
    empty = tailer.poll()
    assert not empty.missing and not empty and tailer.offset == 0
    append(path, line(1) + line(2))
    batch = tailer.poll()
    assert seqs(batch) == [1, 2] and batch.offsets == [0, len(line(1))]
    assert not tailer.poll()


def test_partial_line_is_held_until_complete(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    whole = line(1, "split across writes")
    path.write_bytes(whole[:10])
    tailer = Tailer(path)
    assert not tailer.poll()
    assert tailer.offset == 0 and tailer.read_position == 10
    append(path, whole[10:-1])
    assert not tailer.poll()
    append(path, b"\n" + line(2)[:5])
    batch = tailer.poll()
    assert seqs(batch) == [1] and batch.offsets == [0] and not batch.bad_lines
    assert tailer.offset == len(whole)
    append(path, line(2)[5:])
    assert seqs(tailer.poll()) == [2]


def test_truncation_starts_over_with_reset(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(line(1) + line(2) + line(3))
    tailer = Tailer(path)
    assert seqs(tailer.poll()) == [1, 2, 3]
    path.write_bytes(line(1, "new"))  # truncates in place: same inode, smaller
    batch = tailer.poll()
    assert batch.reset and seqs(batch) == [1] and batch.events[0].text == "new"


def test_replacement_reopens_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(line(1))
    tailer = Tailer(path)
    assert seqs(tailer.poll()) == [1]
    other = tmp_path / "new.jsonl"
    other.write_bytes(line(1, "a") + line(2, "b") + line(3, "c"))  # larger than the old one
    os.replace(other, path)
    batch = tailer.poll()
    assert batch.reset and [e.text for e in batch.events] == ["a", "b", "c"]


def test_vanished_file_is_reported_and_its_successor_read_from_the_start(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(line(1) + line(2))
    tailer = Tailer(path)
    assert seqs(tailer.poll()) == [1, 2]
    path.unlink()
    gone = tailer.poll()
    assert gone.missing and gone.reset
    # The successor may get the same inode number back (tmpfs and ext4 reuse them): it must
    # still be read from its start, not from the old offset.
    path.write_bytes(line(1, "x") + line(2, "y") + line(3, "z"))
    batch = tailer.poll()
    assert [e.text for e in batch.events] == ["x", "y", "z"]


def test_vanished_file_with_reused_inode_is_read_from_the_start(tmp_path: Path) -> None:
    """Forces the same inode: truncate-and-grow cannot be told apart, but delete-and-recreate
    seen as missing in between must restart even when the inode number comes back."""
    path = tmp_path / "events.jsonl"
    path.write_bytes(line(1) + line(2))
    tailer = Tailer(path)
    tailer.poll()
    hidden = tmp_path / "hidden.jsonl"
    os.rename(path, hidden)  # keeps the inode
    assert tailer.poll().missing
    append(hidden, line(3))
    os.rename(hidden, path)  # same inode, larger than before
    batch = tailer.poll()
    assert seqs(batch) == [1, 2, 3]


def test_huge_line_is_reported_with_offset_and_size_and_reading_resumes(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    limit = 64 * 1024
    huge = b'{"v":1,"seq":2,"ts":1,"type":"message","role":"user","text":"' + b"x" * 300_000
    huge += b'"}\n'
    path.write_bytes(line(1) + huge[:100_000])
    tailer = Tailer(path, max_line_bytes=limit)
    first = tailer.poll()
    assert seqs(first) == [1] and not first.bad_lines
    append(path, huge[100_000:] + line(3))
    batch = tailer.poll()
    assert seqs(batch) == [3]
    [bad] = batch.bad_lines
    assert bad.offset == len(line(1)) and bad.size == len(huge)
    assert bad.reason == f"line exceeds {limit} bytes"
    assert len(bad.raw) <= 64 * 1024 and bad.raw.startswith(b'{"v":1,"seq":2')
    assert batch.offsets == [len(line(1)) + len(huge)]


@pytest.mark.slow
def test_huge_line_memory_stays_bounded(tmp_path: Path) -> None:
    """A 200 MB line without a newline does not get held in memory."""
    path = tmp_path / "events.jsonl"
    chunk = b"y" * (1024 * 1024)
    with open(path, "wb") as f:
        for _ in range(200):
            f.write(chunk)
        f.write(b"\n" + line(1))
    tracemalloc.start()
    try:
        batch = Tailer(path).poll()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seqs(batch) == [1] and batch.bad_lines[0].size == 200 * 1024 * 1024 + 1
    assert peak < 16 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB for a 200 MiB line"


def test_invalid_utf8_and_garbage_lines_are_bad_lines_with_offsets(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    bad_utf8 = b'{"v":1,"seq":2,"ts":1,"type":"message","role":"user","text":"\xc3\x28"}\n'
    path.write_bytes(line(1) + bad_utf8 + b"not json\n" + b"\n  \n" + line(4))
    batch = Tailer(path).poll()
    assert seqs(batch) == [1, 4]
    assert [(b.offset, b.reason.split(" at")[0]) for b in batch.bad_lines] == [
        (len(line(1)), "invalid UTF-8"),
        (len(line(1)) + len(bad_utf8), "invalid JSON: Expecting value"),
    ]


def test_crlf_line_endings(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(line(1)[:-1] + b"\r\n" + line(2)[:-1] + b"\r\n")
    batch = Tailer(path).poll()
    assert seqs(batch) == [1, 2] and not batch.bad_lines


def test_poll_budget_sets_more_and_the_rest_follows(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(line(i, "z" * 1000) for i in range(1, 3001)))  # ~3 MB
    tailer = Tailer(path)
    got: list[int] = []
    polls = 0
    while True:
        batch = tailer.poll(max_bytes=1024 * 1024)
        polls += 1
        got += seqs(batch)
        if not batch.more:
            break
    assert got == list(range(1, 3001)) and polls >= 3


def test_unreadable_file_is_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.mkdir()  # a directory where the file should be: open works, read fails
    batch = Tailer(path).poll()
    assert batch.bad_lines and "failed" in batch.bad_lines[0].reason


def test_control_kind(tmp_path: Path) -> None:
    path = tmp_path / "control.jsonl"
    path.write_bytes(encode_line({"v": 1, "seq": 1, "ts": 2.0, "type": "decision",
                                  "decision_id": "d1", "escalation_id": None,
                                  "action": "approve", "operator": "me"}))
    [event] = Tailer(path, "control").poll().events
    assert event.decision_id == "d1"


def test_unopenable_file_is_reported_once_per_episode(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(line(1))
    path.chmod(0)
    tailer = Tailer(path)
    if os.geteuid() == 0:  # root opens anything: use a name too long to open instead
        tailer = Tailer(tmp_path / ("x" * 300))
    first, second = tailer.poll(), tailer.poll()
    assert len(first.bad_lines) == 1 and "cannot open file" in first.bad_lines[0].reason
    assert not second.bad_lines
