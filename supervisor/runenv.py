"""The environment `supervisor run` gives the agent it starts (stdlib only: the hook reads it).

An agent started by `supervisor run` records into a session named before it starts, whatever id
the agent CLI gives itself: the hook (every target) and the guard SDK take the session from
`SUPERVISOR_RUN_SESSION`, and the hook records `SUPERVISOR_RUN_PID` (the tmux pane's process,
which lives exactly as long as the agent) in `session_start`, so a dead agent shows `dead`.
"""

import os

RUN_SESSION_ENV = "SUPERVISOR_RUN_SESSION"
RUN_PID_ENV = "SUPERVISOR_RUN_PID"


def run_of(environ: "os._Environ[str] | dict[str, str]") -> tuple[str, int | None] | None:
    """(the run's session, the pane's pid or None) from an environment; None outside a run."""
    session = environ.get(RUN_SESSION_ENV, "")
    if not session:
        return None
    pid = environ.get(RUN_PID_ENV, "")
    return session, int(pid) if pid.isdigit() else None
