"""The process in a run's tmux pane: `python -m supervisor.host.pane SPEC`.

It reads the run's spec (the agent's command line, the caller's environment and directory;
a 0600 file it deletes at once), starts the agent as its child with that environment (plus
the run's session and this process's pid, `supervisor.runenv`, and tmux's own `TERM`/`TMUX`),
waits for it, removes the run's private files (the per-run hook settings) and exits with the
agent's status. Its pid is the pane's pid: it lives exactly as long as the agent, which is what
`dead` is judged from. Ctrl+C and friends typed in the pane are for the agent, not for it; a
hang-up or termination is passed on to the agent (`supervisor stop` kills what outlives it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from supervisor.runenv import RUN_PID_ENV, RUN_SESSION_ENV

FROM_TMUX = ("TERM", "TMUX", "TMUX_PANE", "COLORTERM")
"""Taken from the pane, not from the caller: they describe the terminal the agent runs in."""


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

    def pass_on(number: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(number)

    signal.signal(signal.SIGHUP, pass_on)
    signal.signal(signal.SIGTERM, pass_on)
    status = child.wait()  # retried after a signal handler ran (PEP 475)
    _clean(spec)
    print(f"\n[supervisor] the agent exited with status {status}")
    return status if status >= 0 else 128 - status


def _clean(spec: dict[str, Any]) -> None:
    for path in spec.get("cleanup", []):
        shutil.rmtree(path, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
