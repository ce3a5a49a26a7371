"""`supervisor tail SESSION [--follow]`: a session's events as readable, escaped lines."""

import argparse
import time

from supervisor.cli.common import add_root_argument, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    parser.add_argument("-n", "--lines", type=int, default=None, help="only the last N events")


def run(args: argparse.Namespace) -> int:
    from supervisor.store.paths import existing_session_dir
    from supervisor.store.render import describe_bad_line, describe_event
    from supervisor.store.tailer import Tailer

    root = root_from(args)
    directory = existing_session_dir(root, args.session)
    tailer = Tailer(directory / "events.jsonl")
    batch = tailer.poll()
    lines = [describe_event(e) for e in batch.events]
    lines += [describe_bad_line(b) for b in batch.bad_lines]
    if args.lines is not None:
        lines = lines[-args.lines :] if args.lines > 0 else []
    for line in lines:
        print(line, flush=False)
    if not args.follow:
        return 0
    while True:
        time.sleep(0.2)
        batch = tailer.poll()
        if batch.reset:
            print("-- file was truncated or replaced; reading from the start --")
        for event in batch.events:
            print(describe_event(event), flush=True)
        for bad in batch.bad_lines:
            print(describe_bad_line(bad), flush=True)
        if batch.missing and not directory.exists():
            print("-- session directory vanished --")
            return 1
