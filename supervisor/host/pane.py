"""The process in a run's tmux pane: `python -m supervisor.host.pane SPEC`.

It reads the run's spec (the agent's command line, the caller's environment and directory;
a 0600 file it deletes at once), starts the agent as its child with that environment (plus
the run's session and this process's pid, `supervisor.runenv`, and tmux's own `TERM`/`TMUX`),
waits for it, removes the run's private files (the per-run hook settings) and exits with the
agent's status. Its pid is the pane's pid: it lives exactly as long as the agent, which is what
`dead` is judged from.

A `--cmd` run is a session from its start whatever the command records: when the command has not
started the run's session itself within `OWN_SESSION_GRACE_S` (an agent on the guard SDK does,
with its own name and pid), the pane starts it (agent `cmd`, the pane's pid, so `sessions` shows
it running, then `dead` if the pane is killed) and, when the command exits, ends it: `completed`
for status 0, `terminated` after a hang-up or termination it passed on, else `failed`; the status
in the reason. Ctrl+C and friends typed in the pane are for the agent, not for it; a
hang-up or termination is passed on to the agent (`supervisor stop` kills what outlives it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from supervisor.runenv import RUN_PID_ENV, RUN_SESSION_ENV

FROM_TMUX = ("TERM", "TMUX", "TMUX_PANE", "COLORTERM")
"""Taken from the pane, not from the caller: they describe the terminal the agent runs in."""

OWN_SESSION_GRACE_S = 5.0
"""How long a `--cmd` command has to start the run's session itself (an SDK agent's import and
start) before the pane records the run as a session of its own."""


def read_spec(path: Path) -> dict[str, Any]:
    """The spec, deleted as soon as read (it holds the caller's environment)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    finally:
        path.unlink(missing_ok=True)


def agent_env(spec: dict[str, Any]) -> dict[str, str]:
    env = dict(spec["env"])
    for name in FROM_TMUX:
        env.pop(name, None)
        if name in os.environ:
            env[name] = os.environ[name]
    env[RUN_SESSION_ENV] = spec["session"]
    env[RUN_PID_ENV] = str(os.getpid())
    return env


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    spec = read_spec(Path(args[0]))
    try:
        child = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=agent_env(spec))
    except OSError as exc:
        print(f"supervisor run: cannot start {spec['argv'][0]}: {exc.strerror or exc}")
        _clean(spec)
        return 127
    for name in (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(name, signal.SIG_IGN)  # typed in the pane: the agent's to handle

    passed_on: list[int] = []

    def pass_on(number: int, _frame: object) -> None:
        passed_on.append(number)
        if child.poll() is None:
            child.send_signal(number)

    signal.signal(signal.SIGHUP, pass_on)
    signal.signal(signal.SIGTERM, pass_on)
    recorded = _record_run(child, spec) if spec.get("own_session") else None
    status = child.wait()  # retried after a signal handler ran (PEP 475)
    if recorded is not None:
        _end_run(recorded, spec["session"], status, stopped=bool(passed_on))
    _clean(spec)
    print(f"\n[supervisor] the agent exited with status {status}")
    return _shell_status(status)


def _record_run(child: subprocess.Popen[bytes], spec: dict[str, Any]) -> Path | None:
    """Start the run's session unless the command does so itself within the grace; returns the
    root when the pane started it (so it ends it too), else None."""
    from supervisor.store.paths import session_dir

    root = Path(spec["own_session"])
    events = session_dir(root, spec["session"]) / "events.jsonl"
    deadline = time.monotonic() + OWN_SESSION_GRACE_S
    while not events.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    if events.exists():
        return None
    from supervisor.guard.core import Guard

    with Guard.open(root, spec["session"], cwd=Path(spec["cwd"])) as guard:
        if guard.started:
            return None
        guard.start("cmd", pid=os.getpid())
    return root


def _end_run(root: Path, session: str, status: int, *, stopped: bool) -> None:
    """End the session the pane started with the command's exit status (`terminated` when a
    hang-up or termination was passed on to it: `supervisor stop`, the tmux session killed)."""
    from supervisor.guard.core import Guard

    ended = "terminated" if stopped else "completed" if status == 0 else "failed"
    with Guard.open(root, session) as guard:
        if not guard.ended:
            guard.end(ended, f"the command exited with status {_shell_status(status)}")


def _shell_status(status: int) -> int:
    return status if status >= 0 else 128 - status


def _clean(spec: dict[str, Any]) -> None:
    for path in spec.get("cleanup", []):
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
