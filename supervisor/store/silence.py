"""Supervision that went silent: an agent that goes on working while its hooks no longer reach
the supervisor (a hook command that stopped resolving, hooks removed from its settings, a broken
installation) looks, from its events alone, like an agent that is merely quiet. Its transcript
tells them apart: the agent CLI appends to it on every turn, so a transcript that changed well
after the last hook event means the agent works unsupervised.

    reason = unsupervised(summary, now)   # "its transcript changed 3 min after the last hook
                                          #  event: its hooks no longer reach the supervisor"

Only the transcript's metadata is read (`os.stat`), never its content. Sessions that promise
heartbeats (SDK agents) are judged by `liveness` instead; ended sessions are never unsupervised.
A caller that may read hook settings passes `hooks` (`supervisor.hooks.installed`'s
`broken_project_hook`): for a session found silent, the reason then names the hook command that
no longer resolves, when that is the cause.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from supervisor.store.summary import SessionSummary

SILENT_AFTER_S = 60.0
"""A transcript that changed this long after the last hook event: the hooks stopped."""


def unsupervised(summary: SessionSummary, now: float, *, after_s: float = SILENT_AFTER_S,
                 stat: Callable[[str], os.stat_result] = os.stat,
                 hooks: Callable[[str | None, str | None], str | None] | None = None
                 ) -> str | None:
    """Why the session's agent is working unsupervised at `now`, or None when it is not (or
    nothing shows it)."""
    path = summary.transcript_path
    if (path is None or summary.ended or summary.heartbeat_s or summary.imported
            or summary.last_seen_ts is None):
        return None
    try:
        changed = stat(path).st_mtime
    except (OSError, ValueError):
        return None  # not on this machine, or gone: nothing to go by
    late = changed - summary.last_seen_ts
    if late <= after_s or changed > now + after_s:  # a clock far ahead proves nothing
        return None
    said = f"its transcript changed {_span(late)} after the last hook event: its hooks no " \
           "longer reach the supervisor"
    broken = hooks(summary.agent, summary.cwd) if hooks is not None else None
    if broken is not None:
        return f"{said}: {broken} (run `supervisor install` again, see `supervisor doctor`)"
    return f"{said} (check `supervisor install` and the hook command)"


def _span(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"
