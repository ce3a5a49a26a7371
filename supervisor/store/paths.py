"""Where sessions live: root resolution, session-id validation, private files.

The root is, in order: an explicit `--root`, `$SUPERVISOR_HOME`, then the platform's user state
directory (e.g. `~/.local/state/agent-supervisor` on Linux). Directories are created 0700 and
files 0600 because event logs hold whatever the agent saw, secrets included.

Every store directory (the root, `sessions/`, each session, `run/`) must belong to the current
user (or to root, which can read everything anyway) and must not be writable by anyone else:
`require_private` refuses it otherwise, with the reason. A root another user created first (the
documented `--root /tmp/sv`, made by someone else) would let that user read every event, write
"operator" decisions the guard applies, and answer in the hook server's place. A directory of
ours that others may read (made by an older version with the umask's 0755) is made 0700.
"""

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from supervisor.protocol.names import (
    CHECKPOINTS_DIR,
    CONTROL_FILE,
    EVENTS_FILE,
    READS_DIR,
    SESSIONS_DIR,
)
from supervisor.store.errors import (
    InvalidSessionId,
    SessionNotFound,
    UnreadableStore,
    UnsafeStore,
)

APP_NAME = "agent-supervisor"
ENV_HOME = "SUPERVISOR_HOME"
SESSION_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def resolve_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The store root: `explicit`, else `$SUPERVISOR_HOME`, else the user state directory."""
    if explicit:  # (a `Path` without `~` is itself: the resident server's calls give one)
        return (explicit if isinstance(explicit, Path) else Path(explicit)).expanduser()
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
    return root / SESSIONS_DIR


def session_dir(root: Path, session_id: str) -> Path:
    """The directory of one session (validated id; nothing is created)."""
    return session_files(root, session_id).dir


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """Where one session's files are on this machine (see docs/protocol.md, "Layout")."""

    root: Path
    """The store root the session is under."""
    dir: Path
    events: Path = field(init=False, repr=False, compare=False)
    control: Path = field(init=False, repr=False, compare=False)
    checkpoints: Path = field(init=False, repr=False, compare=False)
    """The shadow git repository of the session's checkpoints."""
    reads: Path = field(init=False, repr=False, compare=False)
    """Copies of files as the agent last read them (the guard's edit guidance shows the
    lines that changed since)."""
    _named: dict[str, Path] = field(default_factory=dict, init=False, repr=False,
                                    compare=False)

    def __post_init__(self) -> None:
        # joined once, not at each use: the hook step uses them at every call
        for name, leaf in (("events", EVENTS_FILE), ("control", CONTROL_FILE),
                           ("checkpoints", CHECKPOINTS_DIR), ("reads", READS_DIR)):
            object.__setattr__(self, name, self.dir / leaf)

    def file(self, name: str) -> Path:
        """`dir / name`, joined once per session: the files of other layers (the hook's
        memory and lock, its run pointer, a state kept aside) are named at every hook call,
        and a `pathlib` join costs microseconds. `name` is one of a few constants."""
        path = self._named.get(name)
        if path is None:
            path = self._named[name] = self.dir / name
        return path


def session_files(root: Path, session_id: str) -> SessionFiles:
    """The files of one session (validated id; nothing is created or checked)."""
    return _session_files(root if isinstance(root, Path) else Path(root), session_id)


@functools.lru_cache(maxsize=1024)
def _session_files(root: Path, session_id: str) -> SessionFiles:
    # the one cache of a session's folder and its files' paths, made once per session: a hook
    # step names them a dozen times
    return SessionFiles(root, sessions_dir(root) / validate_session_id(session_id))


def require_private(path: Path, what: str = "store directory") -> Path:
    """`path` if the current user (or root) owns it and nobody else may write to it (a symlink:
    the link and what it points to), else `UnsafeStore` saying why and what to do. A directory
    of ours that others may read or enter is made 0700 (a file 0600) on the way."""
    me = os.geteuid()
    try:
        link = os.lstat(path)
        st = os.stat(path) if stat.S_ISLNK(link.st_mode) else link
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise UnsafeStore(f"cannot check {what} {path}: {exc.strerror or exc}") from None
    for found in (link, st):
        if found.st_uid not in (me, 0):
            raise UnsafeStore(
                f"{what} {path} belongs to {_user_name(found.st_uid)}, not to you: refusing "
                "to use it (that user could read the sessions and forge decisions); use a root "
                "of your own (--root or $SUPERVISOR_HOME)")
        if found.st_mode & 0o022 and not stat.S_ISLNK(found.st_mode):
            raise UnsafeStore(
                f"{what} {path} is writable by other users (mode "
                f"{stat.S_IMODE(found.st_mode):04o}): refusing to use it; check what is in it, "
                f"then `chmod go-w {path}` (or use another root)")
    if st.st_uid == me and st.st_mode & 0o077:
        os.chmod(path, 0o700 if stat.S_ISDIR(st.st_mode) else 0o600)
    return path


def _user_name(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` and every missing parent as 0700, and check `path` itself with
    `require_private` (existing parents are left as they are: they need not be ours).

    Each missing level is made on its own: `mkdir(parents=True)` would give the parents the
    umask's mode (usually 0755), leaving the store root readable by everyone.
    """
    if path.is_dir():
        return require_private(path)
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
    return require_private(path)


def write_private(path: Path, data: bytes) -> None:
    """Replace `path` atomically with `data`, as a 0600 file (a temporary file beside it, then
    a rename: a reader sees the old content or the new, never half of it)."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{id(data):x}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(temp, path)


def ensure_session_dir(root: Path, session_id: str) -> Path:
    """Create the session directory (and the root and its `sessions/`) privately, each checked
    with `require_private`; return it."""
    ensure_private_dir(Path(root))
    ensure_private_dir(sessions_dir(root))
    return ensure_private_dir(session_dir(root, session_id))


def existing_session_dir(root: Path, session_id: str) -> Path:
    """The directory of a session that must already exist, else `SessionNotFound`; it, the
    root and `sessions/` are checked with `require_private` (unless the root is a read-only
    recording: nothing is ever written there)."""
    from supervisor.store.recordings import is_recording

    path = session_dir(root, session_id)
    if not path.is_dir():
        raise SessionNotFound(f"no session '{session_id}'{_where_not(Path(root))}")
    if not is_recording(Path(root)):
        for directory in (Path(root), sessions_dir(root), path):
            require_private(directory)
    return path


def _where_not(root: Path) -> str:
    """Where a session was looked for, said so that a wrong root is seen as such: a root that
    is a file (`--root events.jsonl`) or missing (a typo) was told as a session missing from
    a `sessions/` folder that could not be there at all."""
    if root.is_file():
        return f": the root {root} is a file, not a store root (a folder)"
    if not root.exists():
        return (f": the root {root} does not exist (a typo? agents write to "
                f"${ENV_HOME}, else the user state directory)")
    return f" under {sessions_dir(root)}"


def list_session_ids(root: Path) -> list[str]:
    """Ids of the session directories under the root, sorted; invalid names are skipped."""
    base = sessions_dir(root)
    try:
        entries = list(os.scandir(base))
    except FileNotFoundError:
        return []
    except OSError as exc:  # another user's root, a permission, a file in its place
        if Path(root).is_file():
            raise UnreadableStore(f"the root {root} is a file, not a store root (a folder)"
                                  ) from exc
        raise UnreadableStore(f"cannot read the sessions folder ({exc.strerror or exc}): "
                              f"{base}") from exc
    return sorted(
        e.name for e in entries if SESSION_ID_RE.fullmatch(e.name) and e.is_dir()
    )
