"""`supervisor validate FILE...`: list the bad lines of protocol files; exit 1 if any."""

import argparse
from pathlib import Path

from supervisor.cli.common import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="events.jsonl or control.jsonl")
    parser.add_argument(
        "--kind", choices=("events", "control", "auto"), default="auto",
        help="line kind (default: control for control.jsonl, else events)",
    )


def run(args: argparse.Namespace) -> int:
    from supervisor.store.reading import read_file

    bad_total = 0
    for name in args.files:
        path = Path(name)
        if path.is_dir():
            path = path / "events.jsonl"
        if not path.is_file():
            raise CliError(f"no such file: {name}")
        kind = args.kind if args.kind != "auto" else (
            "control" if path.name == "control.jsonl" else "events"
        )
        batch = read_file(path, kind)
        for bad in batch.bad_lines:
            size = f" ({bad.size} bytes)" if bad.size else ""
            print(f"{path}:{bad.offset}: {bad.reason}{size}: {bad.preview(80)!r}")
        bad_total += len(batch.bad_lines)
        print(f"{path}: {len(batch.events)} events, {len(batch.bad_lines)} bad lines")
    return 1 if bad_total else 0
