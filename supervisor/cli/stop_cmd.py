"""`supervisor stop SESSION`: end a run agent and its tmux session; its worktree stays."""

import argparse

from supervisor.cli.common import CliError
from supervisor.cli.run_cmd import add_where, host_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION")
    parser.add_argument("--operator", help="your name in the session (default: login name)")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    from supervisor.host import HostError
    from supervisor.host.control import stop
    from supervisor.operator.send import default_operator

    try:
        print(stop(host_root(args), args.session, args.operator or default_operator()))
    except (HostError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    return 0
