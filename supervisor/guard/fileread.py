"""Read a workspace file for the engine, bounded: never whole when huge, never blocking.

The guard sits on the agent's tool calls; when an edit fails it reads the file the edit was
for and hands the text to the engine (which stays pure). A file the agent names can be
anything: missing, a directory, a FIFO that would block an `open`, a 2 GB log, a binary, text
in another encoding. `read_file` answers every case with a `FileRead` (the engine's value type)
whose `status` says which, and reads at most `max_bytes + 1` bytes: the size is checked on the
open descriptor first, so a huge file is refused before any of it is read, and one that grows
while it is read is cut off at the bound.

What it shows goes into the agent's context and the event log (which a relay ships to Redis),
and it reads before the agent's own tool runs, whatever the agent CLI's permission rules say.
So every read is confined to the session's work tree (`confine`, the one rule for every
reader of workspace files): a relative path without `..`, or an absolute one, whose real path
(symbolic links followed) lies inside the real path of the work tree, opened without following
a last link (so one swapped in after the check is refused). Anything else is `unreadable`
("outside the session's work tree") and none of its bytes are read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import xxhash

from supervisor.engine.filestate import FileRead

MAX_BYTES = 1024 * 1024
"""Files larger than this are not read (`too_large`)."""
_CHUNK = 64 * 1024
_SNIFF = 8192
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(
    os, "O_NOCTTY", 0)


def resolve(path: str, cwd: str | os.PathLike[str] | None) -> Path:
    """`path` as the agent meant it: relative to its working directory when not absolute."""
    candidate = Path(os.path.expanduser(path))
    if not candidate.is_absolute() and cwd is not None:
        candidate = Path(cwd) / candidate
    return candidate


OUTSIDE = "outside the session's work tree"
"""The `detail` of a path `confine` refuses."""


def confine(path: str, cwd: str | os.PathLike[str] | None) -> Path | None:
    """The real path of the file `path` names when it lies inside the work tree `cwd`, else
    None: no work tree, a `..` component, a `~`, or a real path (after every symbolic link)
    outside the tree's real path. The tree itself is no file."""
    if cwd is None or not path or "\0" in path:
        return None
    if ".." in path.split("/") or path.startswith("~"):
        return None
    try:  # on strings: this runs for every file a call reads or writes, on every call
        tree = _real_tree(os.fspath(cwd))
        real = os.path.realpath(os.path.join(cwd, path))  # (an absolute `path` stays itself)
    except (OSError, ValueError):
        return None
    if real == tree or not real.startswith(tree.rstrip("/") + "/"):
        return None
    return Path(real)


_trees: dict[str, tuple[tuple[int, int], str]] = {}
"""work tree -> (the device and inode it led to, its real path): `realpath` walks every
component of a path in Python, and the work tree is the same at every call of a session."""


def _real_tree(cwd: str) -> str:
    """`os.path.realpath(cwd)`, computed again only when `cwd` leads to another directory."""
    try:
        info = os.stat(cwd)
    except OSError:  # no such directory (any more): nothing to remember
        return os.path.realpath(cwd)
    known = _trees.get(cwd)
    if known is not None and known[0] == (info.st_dev, info.st_ino):
        return known[1]
    real = os.path.realpath(cwd)
    if len(_trees) >= 256:
        _trees.clear()
    _trees[cwd] = ((info.st_dev, info.st_ino), real)
    return real


def read_file(path: str, *, cwd: str | os.PathLike[str] | None,
              max_bytes: int = MAX_BYTES) -> FileRead:
    """Read `path` (relative to the work tree `cwd`) as UTF-8 text, at most `max_bytes`;
    never raises. Only a file inside the work tree is read (`confine`)."""
    return read_confined(str(resolve(path, cwd)), confine(path, cwd), max_bytes)


def read_confined(shown: str, where: Path | None, max_bytes: int = MAX_BYTES) -> FileRead:
    """`read_file` of a path already confined (`where`: what `confine` answered, None for a
    path it refused; `shown`: the path as the agent meant it), for a caller that needed the
    real path first (`disk.file_state`): the real path is the costly part, one `lstat` a
    component, paid once."""
    if where is None:
        return FileRead(shown, "unreadable", detail=OUTSIDE)
    try:
        fd = os.open(where, _FLAGS | getattr(os, "O_NOFOLLOW", 0))
    except (FileNotFoundError, NotADirectoryError):
        return FileRead(shown, "missing", detail="no such file")
    except IsADirectoryError:
        return FileRead(shown, "not_a_file", detail="a directory")
    except PermissionError:
        return FileRead(shown, "unreadable", detail="permission denied")
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link swapped in after `confine` looked
            return FileRead(shown, "unreadable", detail=OUTSIDE)
        return FileRead(shown, "unreadable", detail=_reason(exc))
    except ValueError as exc:
        return FileRead(shown, "unreadable", detail=_reason(exc))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            return FileRead(shown, "not_a_file", detail=kind)
        if info.st_size > max_bytes:
            return FileRead(shown, "too_large", size=info.st_size,
                            detail=f"{_size(info.st_size)}, over the {_size(max_bytes)} read")
        data = _read_at_most(fd, max_bytes + 1)
    except OSError as exc:
        return FileRead(shown, "unreadable", detail=_reason(exc))
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew while we read it
        return FileRead(shown, "too_large", size=len(data),
                        detail=f"over the {_size(max_bytes)} read")
    digest = xxhash.xxh3_64_hexdigest(data)
    if b"\0" in data[:_SNIFF]:
        return FileRead(shown, "binary", size=len(data), digest=digest,
                        detail="binary (it holds NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return FileRead(shown, "binary", size=len(data), digest=digest, detail="not UTF-8 text")
    return FileRead(shown, "ok", text, len(data), digest)


def _read_at_most(fd: int, limit: int) -> bytes:
    parts: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(fd, min(_CHUNK, left))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / 1024 / 1024:.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.0f} KiB"
    return f"{n} bytes"


def _reason(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or type(exc).__name__
