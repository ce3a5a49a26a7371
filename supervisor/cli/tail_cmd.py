"""`supervisor tail SESSION [--follow]`: a session's events as readable, escaped lines."""

import argparse
import sys
import time
from typing import TYPE_CHECKING

from supervisor.cli.common import CliError, add_root_argument, root_from

if TYPE_CHECKING:
    from supervisor.store.tailer import TailBatch

FOLLOW_INTERVAL_S = 0.2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    parser.add_argument("-n", "--lines", type=int, default=None, metavar="N",
                        help="only the last N events (and bad lines)")


def run(args: argparse.Namespace) -> int:
    from supervisor.store.paths import existing_session_dir
    from supervisor.store.tailer import Tailer

    if args.lines is not None and args.lines < 0:
        raise CliError("-n/--lines must be 0 or more")
    root = root_from(args)
    directory = existing_session_dir(root, args.session)
    tailer = Tailer(directory / "events.jsonl")
    lines = _render(tailer.poll())
    if args.lines is not None:
        lines = lines[len(lines) - args.lines :] if args.lines else []
    _write(lines)
    if not args.follow:
        return 0
    while True:
        time.sleep(FOLLOW_INTERVAL_S)
        batch = tailer.poll()
        if batch.reset:
            _write(["-- the file was truncated or replaced; reading from the start --"])
        _write(_render(batch))
        if batch.missing and not directory.exists():
            _write(["-- the session directory vanished --"])
            return 1


def _render(batch: "TailBatch") -> list[str]:
    """Events and bad lines of a batch in file order, one line each."""
    from supervisor.store.render import describe_bad_line, describe_event

    rows = [(o, describe_event(e)) for e, o in zip(batch.events, batch.offsets, strict=True)]
    rows += [(b.offset or 0, describe_bad_line(b)) for b in batch.bad_lines]
    rows.sort(key=lambda row: row[0])
    return [text for _, text in rows]


def _write(lines: list[str]) -> None:
    if lines:
        sys.stdout.write("".join(line + "\n" for line in lines))
    sys.stdout.flush()  # --follow output goes to pipes too: show it now, not at exit
