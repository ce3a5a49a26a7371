"""`start_run`: from `supervisor run ...` to an agent running, supervised, in a tmux session of
the supervisor's own.

Everything that can be refused is checked before anything is made (the agent, its executable,
tmux, the session name, the worktree), and whatever was made is undone if a later step fails,
so bad input leaves nothing behind.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from supervisor.host import HostError, agents, records, tmux, worktree
from supervisor.store.liveness import process_start
from supervisor.store.paths import (
    ENV_HOME,
    ensure_private_dir,
    session_dir,
    validate_session_id,
    write_private,
)


@dataclass(frozen=True, slots=True)
class RunRequest:
    root: Path
    agent: str | None
    """A hook target or alias; None with `cmd`."""
    args: list[str]
    cmd: str | None = None
    name: str | None = None
    worktree: bool = False
    branch: str | None = None
    worktree_dir: str | None = None
    cwd: Path | None = None
    env: dict[str, str] | None = None


def start_run(request: RunRequest) -> records.RunRecord:
    """Start the agent; return its run record. `HostError` for bad input (nothing left)."""
    root = request.root.absolute()
    env = dict(os.environ if request.env is None else request.env)
    cwd = (request.cwd or Path.cwd()).absolute()
    if request.cmd is not None:
        if request.agent is not None:
            raise HostError("give AGENT or --cmd, not both")
        target = launcher = None
        label = "cmd"
        command = ["/bin/sh", "-c", request.cmd, *request.args]
    elif request.agent is None:
        raise HostError(f"name an AGENT ({', '.join(agents.agent_names())}) or --cmd COMMAND")
    else:
        target, launcher = agents.resolve(request.agent)
        label = target.name
        found = shutil.which(launcher.executable, path=env.get("PATH"))
        if found is None:
            raise HostError(f"{target.label} is not installed: no {launcher.executable!r} "
                            "on PATH")
        command = [found]
    tmux.require_tmux()
    session = _session_name(request.name, label)
    server = tmux.Server(tmux.socket_name(root))
    _require_free(root, session, server)
    planned = worktree.plan(cwd, session, request.branch, request.worktree_dir) \
        if request.worktree else None

    made: list[Path] = []
    tree = None
    try:
        private = records.private_dir(root, session)
        ensure_private_dir(root)
        ensure_private_dir(records.host_dir(root))
        ensure_private_dir(private)
        made.append(private)
        if target is not None and launcher is not None:
            wiring = launcher.wire(target, agents.hooks_document(target, launcher, root), private)
            command = [command[0], *wiring.args, *request.args]
            env.update(wiring.env)
        if planned is not None:
            tree = worktree.create(planned)
            cwd = planned.path / planned.subdir
        env[ENV_HOME] = str(root)
        spec = private / "spec.json"
        write_private(spec, json.dumps({
            "session": session, "argv": command, "env": env, "cwd": str(cwd),
            "cleanup": [str(private)],
            # a command may record nothing itself: the pane records the run (host.pane)
            "own_session": str(root) if target is None else None,
        }).encode())
        record = records.RunRecord(
            session=session, agent=label, command=command, cwd=str(cwd),
            socket=server.socket, tmux_session=tmux.session_name(session), worktree=tree,
        )
        records.save(root, record)
        record.pid = server.new_session(
            record.tmux_session, cwd, [sys.executable, "-m", "supervisor.host.pane", str(spec)])
        record.started = process_start(record.pid)
        records.save(root, record)
        return record
    except BaseException:
        server.kill_session(tmux.session_name(session))
        records.remove(root, session)
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
        if tree is not None:
            worktree.remove(tree)
        raise


def _session_name(name: str | None, label: str) -> str:
    if name:
        try:
            return validate_session_id(name)
        except ValueError as exc:
            raise HostError(str(exc)) from None
    return f"{label}-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:4]}"


def _require_free(root: Path, session: str, server: tmux.Server) -> None:
    record = records.find(root, session)
    if record is not None and record.alive():
        raise HostError(f"a run named {session} is already running (supervisor stop {session})")
    if session_dir(root, session).exists() or record is not None:
        raise HostError(f"session {session} already exists in {root}: pick another --name")
    if server.has_session(tmux.session_name(session)):
        raise HostError(f"a run named like {session} is already running in the supervisor's tmux")
