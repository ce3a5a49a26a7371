"""`supervisor-hook TARGET [--timeout S] [--root DIR]`: the thin client every hook event runs.

An agent CLI starts one process per hook event, and importing the guard costs far more than the
step itself. So this client imports only `sys`, `os`, `time`, `_socket`, `json` and the target
names (`supervisor.hooks.targets`, not the targets themselves) and hands the payload to the
resident server of its root (`supervisor.hooks.server`) over a Unix socket in `<root>/run/`. It
trusts only a server that runs as the same user (its socket's peer credentials) behind a
directory no one else may write to; it creates the root and `run/` 0700.
With no server there, it starts one in the background and handles this call in-process through
`supervisor.hooks.local.run_hook`, exactly as without a server. `SUPERVISOR_HOOK_DAEMON=0`
always runs in-process. Like the hook, it never exits 2 (that would block the call): if the
server dies after it got the payload, the client prints nothing and exits 0 (the call goes on).
"""

import _socket
import json
import os
import stat as _stat
import sys
import time

from supervisor import __version__
from supervisor.hooks.args import parse_args
from supervisor.runenv import run_of

ENV_DAEMON = "SUPERVISOR_HOOK_DAEMON"
REPLY_MARGIN_S = 0.5
"""The socket gives up on the server's answer this long before the agent's timeout (the
server answers a second before it at the latest): a wedged server gets the fail-safe answer,
nothing, in time."""
HTTP_CONFIG = "hooks-http.json"
"""The root's HTTP hook configuration (`supervisor.hooks.http_transport.CONFIG_FILE`)."""
HTTP_START_WAIT_S = 10.0
"""With HTTP hooks configured, a client that starts the server waits this long for it."""
READ_LIMIT_BYTES = 16 * 1024 * 1024
"""At most this much of stdin is kept (`supervisor.hooks.server.READ_LIMIT_BYTES`: a payload
over the 8 MiB limit is recorded from its first bytes); the rest is read and dropped, so a
400 MB payload never sits in memory (the agent's write end is never left blocked)."""


def main(argv: list[str] | None = None) -> int:
    """Run one hook call, through the resident server when possible; returns the exit status."""
    started = time.monotonic()
    args = list(sys.argv[1:] if argv is None else argv)
    parsed = _parse(args)
    if parsed is None or os.environ.get(ENV_DAEMON) == "0":
        return _in_process(args, None, started)  # bad command lines get run_hook's message
    target, timeout, root = parsed
    data = read_stdin()
    path = socket_path(root)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(max(timeout - (time.monotonic() - started) - REPLY_MARGIN_S, 0.05))
        try:
            cwd = os.getcwd()
        except OSError:
            return _in_process(args, data, started)
        try:
            # relative to the socket's directory: AF_UNIX paths are limited to ~100 bytes
            os.chdir(os.path.dirname(path))
            sock.connect(os.path.basename(path))
        except OSError:
            os.chdir(cwd)
            _start_server(root, path, timeout - (time.monotonic() - started))
            return _in_process(args, data, started)
        os.chdir(cwd)
        if not _trusted(sock, path):
            # not our own server: never trust its answers (the in-process step refuses a root
            # another user controls, with the reason)
            return _in_process(args, data, started)
        try:
            # the server's budget: what is left of the agent's timeout now
            left = timeout - (time.monotonic() - started)
            header = {"target": target, "cwd": cwd, "version": __version__, "root": root,
                      "timeout": left, "run": run_of(os.environ)}  # `supervisor run`'s session
            sock.sendall(json.dumps(header).encode() + b"\n" + data)
            sock.shutdown(_socket.SHUT_WR)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
            reply = json.loads(b"".join(chunks))
        except (OSError, ValueError):
            return 0  # the server died or wedged with the payload: the call goes on in time
    finally:
        sock.close()
    if not isinstance(reply, dict) or reply.get("error") == "version":
        return _in_process(args, data, started)
    text = reply.get("stdout")
    if isinstance(text, str) and text:
        sys.stdout.write(text)
        sys.stdout.flush()
    status = reply.get("status")
    return status if status in (0, 1) else 0


def read_stdin(limit: int = READ_LIMIT_BYTES) -> bytes:
    """stdin's first `limit` bytes; the rest is drained and dropped."""
    stream = sys.stdin.buffer
    data = stream.read(limit)
    while stream.read(1 << 20):
        pass
    return data


def _trusted(sock: "_socket.socket", path: str) -> bool:
    """True when the server on the other end runs as this user (its peer credentials) and its
    socket lies in a directory nobody else may write to (so it cannot be swapped)."""
    me = os.geteuid()
    try:
        run = os.lstat(os.path.dirname(path))
        if run.st_uid != me or run.st_mode & 0o022 or not _stat.S_ISDIR(run.st_mode):
            return False
        peer_option = getattr(_socket, "SO_PEERCRED", None)
        if peer_option is None:  # no peer credentials here: the socket file's owner
            return os.lstat(path).st_uid == me
        raw = sock.getsockopt(_socket.SOL_SOCKET, peer_option, 12)
        _pid, uid, _gid = (int.from_bytes(raw[i:i + 4], sys.byteorder) for i in (0, 4, 8))
        return uid == me
    except OSError:
        return False


def socket_path(root: str) -> str:
    """`<root>/run/hook-<hash>.sock`: one server per policy setting, interpreter and version."""
    return os.path.join(root, "run", f"hook-{server_key()}.sock")


SHARED_ENV = ("HOME", "XDG_CONFIG_HOME", "PATH")
"""Environment the hook step depends on besides `$SUPERVISOR_POLICY` (the home directory is
never checkpointed; git, run for checkpoints, reads its configuration there and is found on
PATH): a server serves only clients that agree on these."""


def server_key() -> str:
    """A short stable hash of what a server must share with its clients (FNV-1a, no hashlib):
    the policy setting, the interpreter, the version and `SHARED_ENV` (`PATH` as
    `shared_path` gives it)."""
    shared = [shared_path() if name == "PATH" else os.environ.get(name, "")
              for name in SHARED_ENV]
    text = "\0".join((_policy_env() or "", sys.executable, __version__, *shared))
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"[:12]


def shared_path() -> str:
    """`$PATH` without the entries an agent CLI puts in front of it for one run only: Codex
    prepends `$CODEX_HOME/tmp/arg0*/codex-arg0XXXXXX` (a fresh directory of aliases to its own
    binary, removed when it exits), so with the whole `PATH` in the key every Codex session
    started a resident server of its own and paid its start and its imports in its first
    calls. A server is started with this `PATH` (`_start_server`), so it never runs anything
    from such a directory. `fastclient.c` and `plugin_client.js` drop the same entries."""
    return ":".join(entry for entry in os.environ.get("PATH", "").split(":")
                    if not _per_run(entry))


def _per_run(entry: str) -> bool:
    parent, _, name = entry.rpartition("/")
    return name.startswith("codex-arg0") and parent.rpartition("/")[2].startswith("arg0")


def _policy_env() -> str | None:
    """`$SUPERVISOR_POLICY` made absolute: the server resolves it from its own directory."""
    value = os.environ.get("SUPERVISOR_POLICY")
    return os.path.abspath(os.path.expanduser(value)) if value else None


def _parse(args: list[str]) -> tuple[str, float, str] | None:
    """(target, timeout, absolute root), or None when the call should run in-process (a
    command line that is not plainly right gets `run_hook`'s own message there)."""
    try:
        target, timeout, root = parse_args(args)
    except ValueError:
        return None
    root = root or os.environ.get("SUPERVISOR_HOME") or _default_root()
    if not root:
        return None
    return target, timeout, os.path.abspath(os.path.expanduser(root))


def _default_root() -> str | None:
    """The store root `supervisor.store.paths.resolve_root` gives on Linux (platformdirs'
    `user_state_dir("agent-supervisor")`), computed without importing it; None elsewhere (then
    the call runs in-process, where `resolve_root` decides)."""
    if not sys.platform.startswith("linux"):
        return None
    base = os.environ.get("XDG_STATE_HOME", "").strip()
    if not base:
        base = os.path.expanduser("~/.local/state")
    return os.path.join(base, "agent-supervisor")


def _start_server(root: str, path: str, budget_left: float) -> None:
    """Start a detached server for `root`; its own lock makes racing starts end with one."""
    if not _private_root(root):
        return  # another user's root: create nothing there (in-process refuses it, saying why)
    try:
        import subprocess

        run = os.path.dirname(path)
        _private_dirs(run)
        env = dict(os.environ)
        if "PATH" in env:
            env["PATH"] = shared_path()
        policy = _policy_env()
        if policy:
            env["SUPERVISOR_POLICY"] = policy
        fd = os.open(os.path.join(run, "hookd.log"), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                     0o600)
        try:
            os.write(fd, f"client[{os.getpid()}] starting a server\n".encode())
            subprocess.Popen(
                [sys.executable, "-m", "supervisor.hooks.server",
                 "--root", root, "--socket", path],
                stdin=subprocess.DEVNULL, stdout=fd, stderr=fd, cwd=run, env=env,
                start_new_session=True, close_fds=True,
            )
        finally:
            os.close(fd)
        if os.path.exists(os.path.join(root, HTTP_CONFIG)):
            # the agent's HTTP hooks reach only a running server: let it come up first
            deadline = time.monotonic() + min(HTTP_START_WAIT_S, budget_left / 4)
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.02)
    except Exception:  # no server this time: the call is still handled in-process
        return


def _private_root(root: str) -> bool:
    """`store.paths.require_private`'s rule without importing it: the root (if it exists; the
    link and what it points to) belongs to this user or to root, and nobody else may write to
    it."""
    me = os.geteuid()
    try:
        found = [os.lstat(root), os.stat(root)]
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return all(st.st_uid in (me, 0) and (_stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o022)
               for st in found)


def _private_dirs(path: str) -> None:
    """Make `path` and every missing parent 0700, one level at a time (`os.makedirs` would
    give the parents, the store root among them, the umask's 0755)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            continue
        os.chmod(directory, 0o700)


def _in_process(args: list[str], data: bytes | None, started: float) -> int:
    from supervisor.hooks.local import run_hook

    return run_hook(args, data, started)


if __name__ == "__main__":
    sys.exit(main())
