"""How far each session was exported, kept in a file between runs of `supervisor otel`.

One file per (store, collector): exporting the same store to another collector starts from the
beginning there. It maps a session to the cursor of the last event whose spans and measures the
collector acknowledged, and to that session's trace id (a session directory replaced by another
of the same name is a new trace: its old cursor means nothing). It is written atomically (a
temporary file renamed over it, mode 0600) after each acknowledged export, and held under an
exclusive lock while an exporter runs, so a second exporter of the same store to the same
collector is refused instead of doubling every span.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

import xxhash

from supervisor.store.paths import ensure_private_dir


class CursorBusy(Exception):
    """Another exporter holds the cursor file."""


def default_path(store_label: str, endpoint: str) -> Path:
    """`<user state dir>/agent-supervisor/otel/<hash of store and endpoint>.json` (the folder
    made private: the cursor names the store's sessions)."""
    import platformdirs

    key = xxhash.xxh3_64_hexdigest(f"{store_label}\0{endpoint}".encode())
    folder = ensure_private_dir(Path(platformdirs.user_state_dir("agent-supervisor")) / "otel")
    return folder / f"{key}.json"


class CursorFile:
    """The cursor of every session, loaded at start and saved after each acknowledged export."""

    def __init__(self, path: Path, *, from_start: bool = False) -> None:
        self.path = path
        self._lock_fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            os.close(self._lock_fd)
            raise CursorBusy(f"another `supervisor otel` is exporting to this collector from "
                             f"this store (its cursor file {path} is locked)") from exc
        self.sessions: dict[str, dict[str, int]] = {} if from_start else self._load()

    def _load(self) -> dict[str, dict[str, int]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read the export cursor {self.path}: {exc}; "
                             "delete it or pass --from-start") from exc
        sessions = data.get("sessions") if isinstance(data, dict) else None
        if not isinstance(sessions, dict):
            raise ValueError(f"the export cursor {self.path} is not one of ours; "
                             "delete it or pass --from-start")
        return {sid: {"cursor": int(v["cursor"]), "trace": int(v["trace"])}
                for sid, v in sessions.items()
                if isinstance(v, dict) and isinstance(v.get("cursor"), int)
                and isinstance(v.get("trace"), int)}

    def done(self, session_id: str, trace: int) -> int:
        """The cursor up to which `session_id`'s trace `trace` was exported (-1: nothing)."""
        entry = self.sessions.get(session_id)
        if entry is None or entry["trace"] != trace:
            return -1
        return entry["cursor"]

    def advance(self, session_id: str, trace: int, cursor: int) -> None:
        self.sessions[session_id] = {"cursor": cursor, "trace": trace}

    def save(self) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": 1, "sessions": self.sessions}, out, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._lock_fd)
