"""Helpers shared by the command modules: the root option, errors, safe output."""

import argparse
import sys
from pathlib import Path

from supervisor.safetext import clean


class CliError(Exception):
    """An error to show as one line (`supervisor: error: ...`) with an exit status."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


def report_error(message: str, status: int) -> int:
    print(f"supervisor: error: {clean(message, keep_newlines=False)}", file=sys.stderr)
    return status


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="store root (default: $SUPERVISOR_HOME, else the user state directory)",
    )


def root_from(args: argparse.Namespace) -> Path:
    from supervisor.store.paths import resolve_root

    return resolve_root(getattr(args, "root", None))
