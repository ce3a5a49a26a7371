"""`supervisor attach SESSION`: this terminal on a run agent's pane (detach: C-b d)."""

import argparse

from supervisor.cli.common import CliError
from supervisor.cli.run_cmd import add_where, host_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    from supervisor.host import HostError
    from supervisor.host.control import attach

    try:
        return attach(host_root(args), args.session)
    except (HostError, ValueError) as exc:
        raise CliError(str(exc)) from exc
