"""What an operator does to a run's agent, from the command line or the dashboard: read its
screen, type a line to it, attach to its pane, stop it, and finish its worktree (merge or
discard).

Each takes the store root and a session id, and refuses a session `supervisor run` did not
start (`records.load`). What is typed is recorded in the session as a `message` from the user
with `by` (the operator) and `via: "send-keys"`, so the history shows who said what to the
agent.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from supervisor.host import HostError, records, tmux
from supervisor.safetext import clean, is_clean
from supervisor.store.paths import session_files

STOP_WAIT_S = 5.0
"""After its tmux session is killed, the agent gets this long to exit before SIGKILL."""


def server_of(record: records.RunRecord) -> tmux.Server:
    return tmux.Server(record.socket)


def screen(root: Path, session: str, *, colours: bool = False) -> str:
    """The agent's current screen, raw (sanitise it before showing it)."""
    record = records.load(root, session)
    server = server_of(record)
    if not server.has_session(record.tmux_session):
        raise HostError(f"the tmux session of {session} is gone (stopped)")
    return server.capture(record.tmux_session, colours=colours)


def send(root: Path, session: str, text: str, operator: str) -> None:
    """Type one line to the agent (then Enter) and record it in the session."""
    if "\n" in text or "\r" in text or not is_clean(text):
        raise HostError("the text must be one line with no control characters")
    record = records.load(root, session)
    server = server_of(record)
    if not server.has_session(record.tmux_session) or server.pane_dead(record.tmux_session):
        raise HostError(f"the agent of {session} is not running")
    server.send_line(record.tmux_session, text)
    files = session_files(root, session)
    if files.dir.is_dir():  # an agent that has not recorded anything yet has no session yet
        from supervisor.store.voice import LineSealer
        from supervisor.store.writer import LineWriter

        # sealed: the guard takes a person's line for a new cycle only with its seal
        with LineWriter(files.events, sealer=LineSealer(root, session)) as writer:
            writer.append({"type": "message", "role": "user", "text": text, "by": operator,
                           "via": "send-keys"})


def attach_command(root: Path, session: str) -> tuple[list[str], dict[str, str]]:
    """(argv, env) that attach this terminal to the agent's pane (`switch-client` from inside
    the supervisor's own tmux server)."""
    record = records.load(root, session)
    server = server_of(record)
    if not server.has_session(record.tmux_session):
        raise HostError(f"the tmux session of {session} is gone (stopped)")
    argv = server.attach_command(record.tmux_session)
    env = dict(os.environ) if "switch-client" in argv else tmux.attach_env()
    return argv, env


def attach(root: Path, session: str) -> int:
    argv, env = attach_command(root, session)
    return subprocess.run(argv, env=env).returncode


def stop(root: Path, session: str, operator: str) -> str:
    """End the agent and its tmux session; the worktree stays. Returns what was done. A tmux
    session left without its record (a run finished by an older `worktree merge|discard`) is
    closed too."""
    record = records.find(root, session)
    if record is None:
        leftover = tmux.Server(tmux.socket_name(root))
        name = tmux.session_name(session)
        if leftover.has_session(name):
            leftover.kill_session(name)
            return f"closed the tmux session left by {session} (its run was already finished)"
        record = records.load(root, session)  # says why there is nothing to stop
    server = server_of(record)
    was_alive = record.alive()
    if was_alive:
        # SIGTERM first, while the agent's terminal still exists: an agent on the SDK ends its
        # session as `terminated` itself. Killing the tmux session first made its next write
        # to the vanished terminal fail (EIO) before the SIGHUP arrived, and the session
        # ended as `failed` for a stop the operator asked for.
        _signal_group(record.pid, signal.SIGTERM)
        _wait_gone(record, STOP_WAIT_S / 2)
    server.kill_session(record.tmux_session)  # what is left of the pane gets SIGHUP
    if was_alive:  # a signal only ever goes to the run's own process (`RunRecord.alive`)
        _wait_gone(record, STOP_WAIT_S)
        if record.alive():
            _kill_group(record.pid)
    _end_session(root, session, operator)
    shutil.rmtree(records.private_dir(root, session), ignore_errors=True)  # a killed pane's
    if record.worktree is None:
        records.remove(root, session)
        tail = ""
    else:
        tail = (f"; its worktree {clean(record.worktree.path)} stays: supervisor worktree "
                f"merge|discard {session}")
    return f"{'stopped' if was_alive else 'cleaned up'} {session}{tail}"


def finish(root: Path, session: str, how: str, operator: str) -> str:
    """Merge (`how="merge"`) or discard the worktree of a run whose agent is over, then forget
    the run: its tmux session (a pane kept after the agent exited) is killed and its record
    removed, so nothing of it is left for `stop` to clean. Refused while the agent runs; a
    refused merge (a conflict) changes nothing and keeps the run. Returns what was done."""
    from supervisor.host import worktree

    if how not in ("merge", "discard"):
        raise ValueError(f"finish a worktree with merge or discard, not {how!r}")
    record = records.load(root, session)
    tree = record.worktree
    if tree is None:
        raise HostError(f"{session} runs in no worktree of its own")
    if record.alive():
        raise HostError(f"{session} is still running: supervisor stop {session} first")
    if how == "merge":
        done = worktree.merge(tree, session)
    else:
        worktree.remove(tree)
        done = f"discarded {clean(tree.branch)} and its worktree {clean(tree.path)}"
    server_of(record).kill_session(record.tmux_session)
    _end_session(root, session, operator)
    shutil.rmtree(records.private_dir(root, session), ignore_errors=True)
    records.remove(root, session)
    return done


def _wait_gone(record: records.RunRecord, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while record.alive() and time.monotonic() < deadline:
        time.sleep(0.05)


def _signal_group(pid: int, signum: int) -> None:
    """`signum` to the pane's process group (the agent and what it started), else to `pid`."""
    try:
        os.killpg(os.getpgid(pid), signum)
    except OSError:
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(os.getpgid(pid), signal.SIGKILL),
                 lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            continue


def _end_session(root: Path, session: str, operator: str) -> None:
    """Record the end the agent had no time to record (a hook agent killed mid-turn)."""
    files = session_files(root, session)
    if not (files.dir / "state.json").is_file():
        return
    from supervisor.guard.core import Guard

    with Guard.open(root, session) as guard:
        if guard.started and not guard.ended:
            guard.end("terminated", f"stopped by {operator} (supervisor stop)")
