"""Writers: whole lines under a lock, `seq` strictly increasing across processes, no half lines."""

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import tracemalloc
from pathlib import Path

import pytest

from supervisor.protocol.codec import BadLine, parse_line
from supervisor.store.errors import InvalidSessionId, StoreError
from supervisor.store.paths import (
    ensure_session_dir,
    resolve_root,
    sanitize_session_id,
    session_files,
    validate_session_id,
)
from supervisor.store.writer import LineWriter, control_writer, event_writer
from tests.conftest import cli_env

WRITER_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    from supervisor.store.writer import event_writer
    root, worker, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    sys.stdin.readline()  # start together
    with event_writer(root, "shared") as writer:
        for i in range(count):
            writer.append({"type": "message", "role": "assistant", "text": f"w{worker}-{i}"})
""")


@pytest.mark.slow
def test_eight_processes_append_at_once_without_loss(tmp_path: Path) -> None:
    workers, count = 8, 2000
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER_SCRIPT, str(tmp_path), str(w), str(count)],
                         env=cli_env(), stdin=subprocess.PIPE, text=True)
        for w in range(workers)
    ]
    for proc in procs:  # all started (imports done at their own pace); now release them
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        proc.stdin.close()
        assert proc.wait(timeout=120) == 0
    raw_lines = session_files(tmp_path, "shared").events.read_bytes().split(b"\n")
    assert raw_lines[-1] == b""
    events = [parse_line(raw) for raw in raw_lines[:-1]]
    assert not [e for e in events if isinstance(e, BadLine)]
    assert [e.seq for e in events] == list(range(1, workers * count + 1))
    texts = {e.text for e in events}
    assert texts == {f"w{w}-{i}" for w in range(workers) for i in range(count)}
    for w in range(workers):  # each worker's own order is kept
        mine = [int(e.text.split("-")[1]) for e in events if e.text.startswith(f"w{w}-")]
        assert mine == list(range(count))


def test_seq_v_ts_are_assigned_and_caller_values_for_seq_and_v_ignored(tmp_path: Path) -> None:
    ticks = iter([100.0, 200.0])
    with LineWriter(tmp_path / "e.jsonl", clock=lambda: next(ticks)) as writer:
        first = writer.append({"type": "heartbeat", "seq": 99, "v": 7})
        rest = writer.append_many([{"type": "heartbeat"}, {"type": "heartbeat", "ts": 5.5}])
    assert (first["seq"], first["v"], first["ts"]) == (1, 1, 100.0)
    assert [(e["seq"], e["ts"]) for e in rest] == [(2, 200.0), (3, 5.5)]
    lines = (tmp_path / "e.jsonl").read_bytes().splitlines()
    assert [json.loads(x)["seq"] for x in lines] == [1, 2, 3]


def test_seq_continues_after_reopening_and_across_writers(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    a, b = LineWriter(path), LineWriter(path)
    a.append({"type": "heartbeat"})
    b.append({"type": "heartbeat"})
    a.append({"type": "heartbeat"})
    a.close()
    b.close()
    assert LineWriter(path).append({"type": "heartbeat"})["seq"] == 4


def test_large_log_last_seq_found_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """50 MB of garbage (no newline, no seq) then one valid line: only the tail is read."""
    path = tmp_path / "e.jsonl"
    with open(path, "wb") as f:
        f.write(b"\xff" * (50 * 1024 * 1024))
        f.write(b"\n" + json.dumps({"v": 1, "seq": 41, "ts": 1, "type": "heartbeat"}).encode())
        f.write(b"\n")
    read = []
    real_pread = os.pread

    def counting_pread(fd: int, n: int, offset: int) -> bytes:
        data = real_pread(fd, n, offset)
        read.append(len(data))
        return data

    monkeypatch.setattr(os, "pread", counting_pread)
    assert LineWriter(path).append({"type": "heartbeat"})["seq"] == 42
    assert sum(read) <= 256 * 1024, f"read {sum(read)} bytes of a 50 MB log"


def test_last_seq_search_skips_a_huge_trailing_line_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    with open(path, "wb") as f:
        f.write(json.dumps({"v": 1, "seq": 7, "ts": 1, "type": "heartbeat"}).encode() + b"\n")
        f.write(b"x" * (20 * 1024 * 1024) + b"\n")
    tracemalloc.start()
    try:
        assert LineWriter(path).append({"type": "heartbeat"})["seq"] == 8
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"peak {peak / 2**20:.0f} MiB for a 20 MiB last line"


def test_half_line_at_the_end_is_terminated_first(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b'{"v":1,"seq":1,"ts":1,"type":"heartbeat"}\n{"v":1,"seq":2,"ts"')
    LineWriter(path).append({"type": "heartbeat"})
    lines = path.read_bytes().split(b"\n")
    assert lines[1] == b'{"v":1,"seq":2,"ts"' and lines[-1] == b""
    assert parse_line(lines[2]).seq == 2  # the half line had no readable seq: 1 was the last


def test_failed_write_leaves_the_file_exactly_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "e.jsonl"
    writer = LineWriter(path)
    writer.append({"type": "heartbeat"})
    path.write_bytes(path.read_bytes() + b'{"half')  # also a missing newline to add
    before = path.read_bytes()
    real_write = os.write
    calls = []

    def disk_full(fd: int, data: bytes) -> int:
        if fd != writer._fd:
            return real_write(fd, data)
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:7]))  # a partial write...
        raise OSError(errno.ENOSPC, "No space left on device")  # ...then the disk is full

    monkeypatch.setattr(os, "write", disk_full)
    with pytest.raises(StoreError, match="No space left"):
        writer.append_many([{"type": "message", "role": "user", "text": "x" * 100}] * 3)
    assert path.read_bytes() == before
    monkeypatch.setattr(os, "write", real_write)
    assert writer.append({"type": "heartbeat"})["seq"] == 2
    assert parse_line(path.read_bytes().split(b"\n")[-2]).seq == 2


def test_unencodable_event_is_refused_and_nothing_written(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    writer = LineWriter(path)
    writer.append({"type": "heartbeat"})
    before = path.read_bytes()
    with pytest.raises(StoreError, match="cannot be written as JSON"):
        writer.append_many([{"type": "heartbeat"}, {"type": "limit", "value": float("nan")}])
    assert path.read_bytes() == before
    assert writer.append({"type": "heartbeat"})["seq"] == 2


def test_replaced_file_is_reopened_and_seq_follows_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    writer = LineWriter(path)
    writer.append({"type": "heartbeat"})
    path.unlink()
    assert writer.append({"type": "heartbeat"})["seq"] == 1
    assert len(path.read_bytes().splitlines()) == 1


def test_private_modes_including_a_new_root(tmp_path: Path) -> None:
    root = tmp_path / "deep" / "root"
    old = os.umask(0o022)
    try:
        with event_writer(root, "s1") as w:
            w.append({"type": "heartbeat"})
        with control_writer(root, "s1") as w:
            w.append({"type": "decision", "decision_id": "d", "action": "approve",
                      "operator": "me"})
    finally:
        os.umask(old)
    for directory in (tmp_path / "deep", root, root / "sessions", root / "sessions" / "s1"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
    for file in (session_files(root, "s1").events, session_files(root, "s1").control):
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


@pytest.mark.parametrize(
    "bad",
    ["", "..", ".", "../etc", "a/b", "a\\b", "/abs", ".hidden", "-dash", "a b", "a\n",
     "x" * 129, "caf\u00e9", "nul\x00", "a/../../b"],
)
def test_invalid_session_ids_are_refused_clearly(tmp_path: Path, bad: str) -> None:
    with pytest.raises(InvalidSessionId, match="invalid session id") as info:
        ensure_session_dir(tmp_path, bad)
    assert "letters, digits" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(InvalidSessionId):
        event_writer(tmp_path, bad)
    assert not (tmp_path / "sessions").exists() or not any((tmp_path / "sessions").iterdir())
    assert not (tmp_path.parent / "etc").exists()


@pytest.mark.parametrize("good", ["a", "A.b_c-9", "0" * 128, "claude-1f2e.3"])
def test_valid_session_ids(good: str) -> None:
    assert validate_session_id(good) == good


@pytest.mark.parametrize("raw", ["../../x", "héllo wörld", "...", "a" * 300, ""])
def test_sanitize_gives_a_valid_id(raw: str) -> None:
    assert validate_session_id(sanitize_session_id(raw))


def test_root_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPERVISOR_HOME", str(tmp_path / "env"))
    assert resolve_root(tmp_path / "explicit") == tmp_path / "explicit"
    assert resolve_root(None) == tmp_path / "env"
    monkeypatch.delenv("SUPERVISOR_HOME")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert resolve_root(None) == tmp_path / "state" / "agent-supervisor"


def test_one_writer_shared_by_threads(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    writer = LineWriter(path)

    def work(n: int) -> None:
        for i in range(400):
            writer.append({"type": "message", "role": "user", "text": f"{n}-{i}"})

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    events = [parse_line(raw) for raw in path.read_bytes().splitlines()]
    assert [e.seq for e in events] == list(range(1, 1601))
