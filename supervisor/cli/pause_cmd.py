"""`supervisor pause SESSION`: stop a running agent at its next tool call until an operator
resumes it (`supervisor resume`) or decides; no deadline unless the guard's `pause_deadline_s`
sets one."""

import argparse

from supervisor.cli.common import add_store_arguments
from supervisor.cli.followup import add_follow_arguments, run_command


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    add_follow_arguments(parser)


def run(args: argparse.Namespace) -> int:
    return run_command(args, "pause")
