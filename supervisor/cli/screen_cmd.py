"""`supervisor screen SESSION`: print a run agent's current screen, sanitised (docs/run.md)."""

import argparse

from supervisor.cli.common import CliError
from supervisor.cli.run_cmd import add_where, host_root


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("session", metavar="SESSION")
    parser.add_argument("--colour", "--color", action="store_true",
                        help="keep the screen's colours (SGR sequences only; everything else "
                        "is stripped)")
    add_where(parser)


def run(args: argparse.Namespace) -> int:
    import sys

    from supervisor.host import HostError
    from supervisor.host.control import screen
    from supervisor.safetext import clean, clean_sgr

    try:
        text = screen(host_root(args), args.session, colours=args.colour)
    except (HostError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    if args.colour:
        sys.stdout.flush()
        sys.stdout.buffer.write(clean_sgr(text).encode())  # SafeOutput would strip the SGR
        sys.stdout.buffer.flush()
    else:
        print(clean(text).rstrip("\n"))
    return 0
