"""`supervisor guide SESSION TEXT`: tell a running agent what to do; it gets the text with its
next tool call (or at once, as the answer, when it waits on an escalation)."""

import argparse

from supervisor.cli.common import CliError, add_store_arguments
from supervisor.cli.followup import add_follow_arguments, run_command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("text", help="the guidance, as the agent will read it")
    add_follow_arguments(parser)


def run(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise CliError("the guidance needs a text")
    return run_command(args, "guidance", text=args.text)
