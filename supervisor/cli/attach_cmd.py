"""`supervisor attach SESSION`: this terminal on a run agent's pane (detach: C-b d)."""

import argparse

from supervisor.cli.common import CliError, add_root_argument, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION")
    add_root_argument(parser)


def run(args: argparse.Namespace) -> int:
    from supervisor.host import HostError
    from supervisor.host.control import attach

    try:
        return attach(root_from(args), args.session)
    except (HostError, ValueError) as exc:
        raise CliError(str(exc)) from exc
