"""`supervisor run [--name N] [--worktree[=BRANCH]] [--root DIR] AGENT|--cmd COMMAND [-- ARGS...]`:
start an agent in the supervisor's own tmux, supervised from its first call (docs/run.md)."""

import argparse
from pathlib import Path

from supervisor.cli.common import CliError, add_root_argument, root_from


def add_where(parser: argparse.ArgumentParser) -> None:
    """`--root DIR` or `--store URL` (a local one: the agents run on this machine)."""
    add_root_argument(parser)
    parser.add_argument("--store", metavar="URL",
                        help="a local store: a root's path or file:///DIR (a relay ships the "
                        "sessions of run agents to Redis like any other)")


def host_root(args: argparse.Namespace) -> Path:
    """The local root the run agents of this command record into."""
    if args.store and args.root:
        raise CliError("give --root or --store, not both")
    if not args.store:
        return root_from(args)
    from urllib.parse import urlsplit

    scheme = urlsplit(args.store).scheme.lower() if "://" in args.store else ""
    if scheme not in ("", "file"):
        raise CliError(f"run agents live on this machine: --store must be a local root (a path "
                       f"or file:///DIR), not {scheme}://; ship their sessions with supervisor "
                       "relay")
    from supervisor.store.local import LocalStore
    from supervisor.store.open import open_store

    store = open_store(args.store)
    assert isinstance(store, LocalStore)
    return store.root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from supervisor.host.agents import agent_names

    parser.add_argument(
        "agent", nargs="?", metavar="AGENT",
        help=f"the agent CLI to start: {', '.join(agent_names())} (the hook targets)",
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, metavar="-- ARGS",
                        help="arguments for the agent, after --")
    parser.add_argument("--cmd", metavar="COMMAND",
                        help="start this shell command instead (an agent on the guard SDK "
                        "records into the run's session by itself)")
    parser.add_argument("--name", metavar="N", help="the session id (default: AGENT-time-xxxx)")
    parser.add_argument(
        "--worktree", nargs="?", const="", metavar="BRANCH",
        help="run in a new git worktree on a new branch (default branch: run/SESSION); "
        "write --worktree=BRANCH to name it",
    )
    parser.add_argument("--worktree-dir", metavar="DIR",
                        help="where worktrees go (default: $SUPERVISOR_WORKTREES, else "
                        "REPO.worktrees/ beside the repository)")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    from supervisor.host import HostError
    from supervisor.host.agents import agent_names
    from supervisor.host.launch import RunRequest, start_run

    agent, branch = args.agent, args.worktree or None
    if agent is None and args.cmd is None and branch in agent_names():
        agent, branch = branch, None  # `--worktree claude`: the agent, not a branch
    extra = list(args.args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    request = RunRequest(
        root=host_root(args), agent=agent, args=extra, cmd=args.cmd, name=args.name,
        worktree=args.worktree is not None, branch=branch, worktree_dir=args.worktree_dir,
        cwd=Path.cwd(),
    )
    try:
        record = start_run(request)
    except HostError as exc:
        raise CliError(str(exc)) from exc
    print(f"started {record.session} (tmux session {record.tmux_session}, pid {record.pid})")
    if record.worktree is not None:
        print(f"worktree {record.worktree.path} on branch {record.worktree.branch}")
    print(f"see it: supervisor screen {record.session} | supervisor attach {record.session}")
    return 0
