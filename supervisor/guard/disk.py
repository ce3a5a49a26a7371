"""What a workspace file holds on disk, for the engine (which does no I/O).

Two questions the engine asks the guard, on every hook target and the SDK alike:

- before a file read the file cache could answer (`file_state`): is the file still the one
  that was read? Its size, modification time and a content digest go with the `tool_call`
  (field `file`); the engine compares them with what it cached and lets the read run on any
  difference (a change by the user's editor, a background job, another agent);
- after a call that may write files (`digests`): what do they hold now? Their digests go with
  the `tool_result` (field `files`), so an edit that changed nothing is no change and an undo
  brings the workspace back to an earlier version.

Both are bounded (`fileread.read_file`: never a whole huge file, never a blocking FIFO),
confined to the session's work tree (`fileread.confine`: of a file outside it, not even the size
or time is looked at) and recorded in the event log, so a replay sees what the live engine saw.
"""

from __future__ import annotations

import os
from typing import Any

from supervisor.guard.fileread import MAX_BYTES, confine, read_confined, resolve

MAX_FILES = 16
"""Files hashed after one call at most (a command naming more is judged by the first ones)."""


def file_state(path: str, cwd: str | os.PathLike[str] | None) -> dict[str, Any]:
    """`{path, size, mtime, digest}` of the file the agent names (`digest` None for a file too
    large to read whole), or `{path, status}` when it is missing or not a readable file."""
    where = resolve(path, cwd)
    real = confine(path, cwd)
    if real is None:
        return {"path": str(where), "status": "outside"}
    try:
        info = os.stat(real, follow_symlinks=False)
    except OSError:
        return {"path": str(where), "status": "missing"}
    got = read_confined(str(where), real, MAX_BYTES)
    if got.status not in ("ok", "binary", "too_large"):
        return {"path": str(where), "status": got.status}
    return {"path": str(where), "size": info.st_size, "mtime": info.st_mtime_ns,
            "digest": got.digest}


def digests(paths: list[str], cwd: str | os.PathLike[str] | None) -> dict[str, str | None]:
    """The content digest of each file a call may have written, by the name the call gave it
    (None: missing). A file too large to hash whole is named by its size and mtime."""
    out: dict[str, str | None] = {}
    for path in paths[:MAX_FILES]:
        state = file_state(path, cwd)
        if "status" in state:
            out[path] = None if state["status"] == "missing" else f"unreadable:{state['status']}"
        else:
            out[path] = state["digest"] or f"stat:{state['size']}:{state['mtime']}"
    return out
