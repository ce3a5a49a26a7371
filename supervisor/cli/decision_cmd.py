"""`supervisor pause|resume|guide|abort|reset SESSION [TEXT]`: the operator commands that differ
only by their decision kind, made from the registry rather than written one module each.

A kind whose command line (`DecisionKind.cli`) is `supervisor WORD SESSION`, or
`supervisor WORD SESSION TEXT` for one that needs a text, is the command `WORD` here: its help is
the kind's summary, and it runs `followup.run_command` (refuse what cannot apply, write the
decision, follow it through). A new kind of that shape is a command with no edit to the CLI; a
kind whose command does more (`answer`, `split`, `quiet`) keeps its own module.
"""

from __future__ import annotations

import argparse
import re

from supervisor.cli.common import CliError, add_store_arguments
from supervisor.cli.followup import add_follow_arguments, run_command

_SHAPE = re.compile(r"supervisor ([a-z][a-z-]*) SESSION( TEXT)?")
"""The command lines this module makes a command of."""


def rows() -> list[tuple[str, str, str]]:
    """`COMMANDS` rows (name, this module, one-line help) for every kind of that shape."""
    from supervisor.protocol.decisions import KINDS

    return [(kind.cli_command, __name__, kind.summary) for kind in KINDS.values()
            if kind.command and _SHAPE.fullmatch(kind.cli)]


class KindCommand:
    """The command of one decision kind: `add_arguments(parser)` and `run(args)`, as a command
    module has."""

    def __init__(self, name: str, needs_text: bool) -> None:
        self.name = name
        """The kind's name (`guidance` for `supervisor guide`)."""
        self.needs_text = needs_text

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_store_arguments(parser)
        parser.add_argument("session", help="session id")
        if self.needs_text:
            parser.add_argument("text", help=f"the {self.name}, as the agent will read it")
        add_follow_arguments(parser)

    def run(self, args: argparse.Namespace) -> int:
        text = args.text if self.needs_text else None
        if text is not None and not text.strip():
            raise CliError(f"the {self.name} needs a text")
        return run_command(args, self.name, text=text)


def command(word: str) -> KindCommand:
    """The command `supervisor WORD` (one of `rows()`)."""
    from supervisor.protocol.decisions import KINDS

    for kind in KINDS.values():
        shape = _SHAPE.fullmatch(kind.cli)
        if kind.command and shape and shape.group(1) == word:
            return KindCommand(kind.name, shape.group(2) is not None)
    raise KeyError(word)
