"""`supervisor send SESSION TEXT`: type a line to a run agent (Enter included), recorded in the
session as the operator's message (docs/run.md)."""

import argparse

from supervisor.cli.common import CliError
from supervisor.cli.run_cmd import add_where, host_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION")
    parser.add_argument("text", metavar="TEXT", help="one line")
    parser.add_argument("--operator", help="your name in the session (default: login name)")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    from supervisor.host import HostError
    from supervisor.host.control import send
    from supervisor.operator.send import default_operator

    try:
        send(host_root(args), args.session, args.text, args.operator or default_operator())
    except (HostError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    print(f"typed into the terminal of {args.session} (then Enter): {args.text}")
    return 0
