"""Start, stop, merge and discard agents from the dashboard, as `supervisor run`, `stop` and
`worktree merge|discard` do: through the same code (`supervisor.host`), so what the dashboard
refuses, makes and removes is exactly what the command line does (docs/run.md).

`n` asks what to run (`screens.new_run`, opened by the sessions screen as the key is
handled, so the keys typed right after `n` are the form's); `K` stops the highlighted session's
agent, `M` merges its worktree into the repository's current branch and `D` throws it away,
each after a confirmation (`y`) that says what will happen: the branch and its diffstat for a
merge or a discard. tmux and git run in a thread, never on the app's. Runs are agents of this
machine: a dashboard on Redis (or read-only) starts and stops nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from supervisor.safetext import clean
from supervisor.tui.format import safe
from supervisor.tui.screens.modals import ConfirmScreen

if TYPE_CHECKING:
    from supervisor.host.records import RunRecord
    from supervisor.store.base import Store
    from supervisor.tui.app import SupervisorApp
    from supervisor.tui.screens.new_run import NewRun

ACTIONS = ("new", "stop", "merge", "discard")


def local_root(store: Store) -> Path | None:
    """The store's root when it is a local one (runs live on this machine), else None."""
    root = getattr(store, "root", None)
    return Path(root) if root is not None else None


def refusal(store: Store, read_only: bool) -> str | None:
    """Why no run is started or stopped from this dashboard, or None."""
    if read_only or local_root(store) is None:
        return ("runs are started and stopped on a local root only"
                + (" (read-only here)" if read_only else " (this store is shared)"))
    return None


async def act(app: SupervisorApp, action: str, session_id: str | None,
              new_run: NewRun | None = None) -> None:
    """Do `action` (one of `ACTIONS`) for `session_id` (`new`: start what the form asked,
    `new_run`); from a worker."""
    from supervisor.host import HostError
    from supervisor.operator.send import default_operator

    root = local_root(app.store)
    refused = refusal(app.store, app.read_only)
    if refused or root is None:
        app.notify(refused or "", severity="warning", markup=False)
        return
    try:
        if action == "new":
            assert new_run is not None  # the sessions screen asks it with the form
            await _start(app, root, new_run)
            return
        assert session_id is not None
        record = await asyncio.to_thread(_record, root, session_id)
        if action == "stop":
            await _stop(app, root, record, default_operator())
        else:
            await _finish(app, root, record, action, default_operator())
    except (HostError, OSError, ValueError) as exc:
        app.notify(clean(str(exc), keep_newlines=False, limit=400), title=action,
                   severity="error", timeout=15, markup=False)


def _record(root: Path, session_id: str) -> RunRecord:
    from supervisor.host import HostError, records

    record = records.find(root, session_id)
    if record is None:
        raise HostError(f"{session_id} was not started by supervisor run (or its run is over): "
                        "nothing to stop, merge or discard here")
    return record


async def _start(app: SupervisorApp, root: Path, asked: NewRun) -> None:
    from supervisor.host.launch import RunRequest, start_run

    request = RunRequest(root=root, agent=asked.agent, args=[], cmd=asked.cmd, name=asked.name,
                         worktree=asked.worktree, cwd=asked.folder)
    record = await asyncio.to_thread(start_run, request)
    where = (f" in worktree {record.worktree.path} on branch {record.worktree.branch}"
             if record.worktree is not None else f" in {record.cwd}")
    app.notify(clean(f"started {record.session} ({record.agent}){where}: its row appears as "
                     "soon as it records; T on its session shows its terminal",
                     keep_newlines=False, limit=400), markup=False, timeout=10)


async def _stop(app: SupervisorApp, root: Path, record: RunRecord, operator: str) -> None:
    from supervisor.host.control import stop

    alive = await asyncio.to_thread(record.alive)
    question = Text("Stop ", style="bold")
    question.append_text(safe(record.session, 60, "bold"))
    question.append("? " + ("Its agent is ended (SIGTERM, then SIGKILL after 5 s) "
                            if alive else "Its agent has exited: its tmux session is closed ")
                    + ("and its worktree stays, to merge (M) or discard (D)."
                       if record.worktree is not None else "and the run is forgotten."))
    if not await app.push_screen_wait(ConfirmScreen(question)):
        return
    done = await asyncio.to_thread(stop, root, record.session, operator)
    app.notify(clean(done, keep_newlines=False, limit=400), markup=False, timeout=10)


async def _finish(app: SupervisorApp, root: Path, record: RunRecord, how: str,
                  operator: str) -> None:
    from supervisor.host import HostError, worktree
    from supervisor.host.control import finish

    tree = record.worktree
    if tree is None:
        raise HostError(f"{record.session} runs in no worktree of its own: nothing to {how}")
    if await asyncio.to_thread(record.alive):
        raise HostError(f"{record.session} is still running: stop it first (K)")
    stat = await asyncio.to_thread(worktree.diffstat, tree)
    question = Text(f"{how.capitalize()} ", style="bold")
    question.append_text(safe(tree.branch, 80, "bold"))
    question.append(" (")
    question.append_text(safe(stat, 120))
    question.append(")?\n")
    if how == "merge":
        question.append("Its work is committed on the branch, merged into the current branch of ")
        question.append_text(safe(tree.repo, 200))
        question.append(", then the worktree and the branch are removed (a conflict changes "
                        "nothing).")
    else:
        question.append("The worktree ")
        question.append_text(safe(tree.path, 200))
        question.append(" and the branch are deleted, with every change in them.")
    if not await app.push_screen_wait(ConfirmScreen(question)):
        return
    done = await asyncio.to_thread(finish, root, record.session, how, operator)
    app.notify(clean(done, keep_newlines=False, limit=400), markup=False, timeout=10)
