"""Where sessions live: root resolution, session-id validation, private files.

The root is, in order: an explicit `--root`, `$SUPERVISOR_HOME`, then the platform's user state
directory (e.g. `~/.local/state/agent-supervisor` on Linux). Directories are created 0700 and
files 0600 because event logs hold whatever the agent saw, secrets included.
"""

import os
import re
from dataclasses import dataclass
from pathlib import Path

from supervisor.protocol.names import CHECKPOINTS_DIR, CONTROL_FILE, EVENTS_FILE, READS_DIR
from supervisor.store.errors import InvalidSessionId, SessionNotFound

APP_NAME = "agent-supervisor"
ENV_HOME = "SUPERVISOR_HOME"
SESSION_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def resolve_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The store root: `explicit`, else `$SUPERVISOR_HOME`, else the user state directory."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get(ENV_HOME)
    if env:
        return Path(env).expanduser()
    from platformdirs import user_state_dir  # only when needed: keeps the hook's start-up light

    return Path(user_state_dir(APP_NAME, appauthor=False))


def validate_session_id(session_id: str) -> str:
    """Return `session_id` if it matches `[A-Za-z0-9][A-Za-z0-9._-]{0,127}`, else raise."""
    if not isinstance(session_id, str) or not SESSION_ID_RE.fullmatch(session_id):
        shown = repr(session_id)[:80]
        raise InvalidSessionId(
            f"invalid session id {shown}: use 1-128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return session_id


def sanitize_session_id(raw: str) -> str:
    """Turn any text (such as another tool's session id) into a valid session id."""
    cleaned = _UNSAFE.sub("-", raw).strip("._-")[:128]
    return cleaned or "session"


def sessions_dir(root: Path) -> Path:
    return root / "sessions"


def session_dir(root: Path, session_id: str) -> Path:
    """The directory of one session (validated id; nothing is created)."""
    return sessions_dir(root) / validate_session_id(session_id)


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """Where one session's files are on this machine (see docs/protocol.md, "Layout")."""

    root: Path
    """The store root the session is under."""
    dir: Path

    @property
    def events(self) -> Path:
        return self.dir / EVENTS_FILE

    @property
    def control(self) -> Path:
        return self.dir / CONTROL_FILE

    @property
    def checkpoints(self) -> Path:
        """The shadow git repository of the session's checkpoints."""
        return self.dir / CHECKPOINTS_DIR

    @property
    def reads(self) -> Path:
        """Copies of files as the agent last read them (the guard's edit guidance shows the
        lines that changed since)."""
        return self.dir / READS_DIR


def session_files(root: Path, session_id: str) -> SessionFiles:
    """The files of one session (validated id; nothing is created or checked)."""
    return SessionFiles(Path(root), session_dir(root, session_id))


def ensure_private_dir(path: Path) -> Path:
    """Create `path` and every missing parent as 0700 (existing ones are left as they are).

    Each missing level is made on its own: `mkdir(parents=True)` would give the parents the
    umask's mode (usually 0755), leaving the store root readable by everyone.
    """
    if path.is_dir():
        return path
    missing = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=0o700)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue
        os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
    return path


def ensure_session_dir(root: Path, session_id: str) -> Path:
    """Create the session directory (and the root's `sessions/`) privately; return it."""
    ensure_private_dir(sessions_dir(root))
    return ensure_private_dir(session_dir(root, session_id))


def existing_session_dir(root: Path, session_id: str) -> Path:
    """The directory of a session that must already exist, else `SessionNotFound`."""
    path = session_dir(root, session_id)
    if not path.is_dir():
        raise SessionNotFound(f"no session '{session_id}' under {sessions_dir(root)}")
    return path


def list_session_ids(root: Path) -> list[str]:
    """Ids of the session directories under the root, sorted; invalid names are skipped."""
    base = sessions_dir(root)
    try:
        entries = list(os.scandir(base))
    except FileNotFoundError:
        return []
    return sorted(
        e.name for e in entries if SESSION_ID_RE.fullmatch(e.name) and e.is_dir()
    )
