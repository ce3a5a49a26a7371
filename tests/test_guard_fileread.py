"""The guard's bounded read of a workspace file (supervisor.guard.fileread), on real files: a
huge one is never read whole, a FIFO never blocks, every odd file gets a status."""

import os
from pathlib import Path

import pytest

from supervisor.guard import fileread
from supervisor.guard.fileread import read_file


def test_text_file_relative_to_the_agents_directory(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n", encoding="utf-8")
    got = read_file("src/a.py", cwd=tmp_path)
    assert (got.status, got.text, got.size) == ("ok", "x = 1\n", 6)
    assert got.path == str(tmp_path / "src" / "a.py")
    again = read_file(str(tmp_path / "src" / "a.py"), cwd=tmp_path)
    assert got.digest and got.digest == again.digest


def test_missing_file_and_missing_directory(tmp_path: Path) -> None:
    assert read_file("nope.py", cwd=tmp_path).status == "missing"
    assert read_file("no/such/dir/x.py", cwd=tmp_path).status == "missing"
    (tmp_path / "f").write_text("")
    assert read_file("f/under-a-file", cwd=tmp_path).status == "missing"


def test_directory_is_not_a_file(tmp_path: Path) -> None:
    got = read_file(str(tmp_path), cwd=tmp_path.parent)
    assert (got.status, got.detail) == ("not_a_file", "a directory")


def test_fifo_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = read_file(str(fifo), cwd=tmp_path)  # an open() without O_NONBLOCK would hang here
    assert (got.status, got.detail) == ("not_a_file", "not a regular file")


def test_binary_and_non_utf8(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x7fELF\0\0\x01")
    (tmp_path / "l.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    got = read_file("b.bin", cwd=tmp_path)
    assert (got.status, got.text) == ("binary", None)
    assert got.digest
    assert read_file("l.txt", cwd=tmp_path).detail == "not UTF-8 text"


def test_huge_file_is_refused_without_reading_it(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    big = tmp_path / "big.log"
    with big.open("wb") as fh:  # sparse: 3 GiB on paper, nothing on disk
        fh.truncate(3 * 1024 ** 3)
    read_bytes = []
    real_read = os.read
    monkeypatch.setattr(fileread.os, "read",
                        lambda fd, n: read_bytes.append(n) or real_read(fd, n))
    got = read_file(str(big), cwd=tmp_path)
    assert got.status == "too_large"
    assert got.size == 3 * 1024 ** 3
    assert "3072.0 MiB" in got.detail
    assert read_bytes == []


def test_a_file_at_the_bound_is_read_and_one_over_it_is_not(tmp_path: Path) -> None:
    (tmp_path / "edge").write_text("a" * 100)
    (tmp_path / "over").write_text("a" * 101)
    assert read_file("edge", cwd=tmp_path, max_bytes=100).status == "ok"
    assert read_file("over", cwd=tmp_path, max_bytes=100).status == "too_large"


def test_a_file_growing_while_read_is_cut_at_the_bound(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "growing"
    path.write_text("a" * 10)
    read_bytes = []
    real_read = os.read

    def growing_read(fd: int, n: int) -> bytes:
        read_bytes.append(n)
        with path.open("a") as fh:  # the writer appends while we read
            fh.write("b" * 500)
        return real_read(fd, n)

    monkeypatch.setattr(fileread.os, "read", growing_read)
    got = read_file(str(path), cwd=tmp_path, max_bytes=100)
    assert got.status == "too_large"
    assert sum(read_bytes) <= 101


def test_paths_the_system_refuses_are_unreadable(tmp_path: Path) -> None:
    assert read_file("x" * 5000, cwd=tmp_path).status == "unreadable"  # name too long
    assert read_file("a\0b", cwd=tmp_path).status == "unreadable"      # NUL in the name
