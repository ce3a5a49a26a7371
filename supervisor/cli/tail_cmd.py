"""`supervisor tail SESSION [--follow]`: a session's events as readable, escaped lines."""

import argparse
import sys
from typing import TYPE_CHECKING

from supervisor.cli.common import CliError, add_store_arguments, store_from

if TYPE_CHECKING:
    from supervisor.store.base import SessionBatch

FOLLOW_INTERVAL_S = 0.2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    parser.add_argument("-n", "--lines", type=int, default=None, metavar="N",
                        help="only the last N events (and bad lines)")


def run(args: argparse.Namespace) -> int:
    if args.lines is not None and args.lines < 0:
        raise CliError("-n/--lines must be 0 or more")
    with store_from(args) as store:
        store.require(args.session)
        reader = store.reader(args.session)
        lines = _render(reader.poll())
        if args.lines is not None:
            lines = lines[len(lines) - args.lines :] if args.lines else []
        _write(lines)
        if not args.follow:
            return 0
        while True:
            batch = reader.poll(timeout=FOLLOW_INTERVAL_S)
            if batch.reset:
                _write(["-- the log was truncated or replaced; reading from the start --"])
            _write(_render(batch))
            if batch.missing and not store.exists(args.session):
                _write(["-- the session vanished --"])
                return 1


def _render(batch: "SessionBatch") -> list[str]:
    """Events and bad lines of a batch in log order, one line each."""
    from supervisor.store.render import describe_bad_line, describe_event

    rows = [(c, describe_event(e)) for e, c in zip(batch.events, batch.cursors, strict=True)]
    rows += [(c, describe_bad_line(b))
             for b, c in zip(batch.bad_lines, batch.bad_cursors, strict=True)]
    rows.sort(key=lambda row: row[0])
    return [text for _, text in rows]


def _write(lines: list[str]) -> None:
    if lines:
        sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()  # --follow output goes to pipes too: show it now, not at exit
