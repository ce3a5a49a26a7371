"""`supervisor validate FILE...`: list the problems of protocol files; exit 1 if any.

A problem is a bad line (see docs/protocol.md: its offset, reason and an escaped preview) or a
`seq` that does not increase (the protocol wants it strictly increasing within a file). Each is
printed as `FILE:LINE: reason (byte OFFSET)`: `FILE:N:` is read as a line number by people,
editors and `grep -n` alike, so N is the line, and the readers' byte offset follows in words.
"""

import argparse
from pathlib import Path

from supervisor.cli.common import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="events.jsonl or control.jsonl (a session directory means its "
                             "events.jsonl)")
    parser.add_argument(
        "--kind", choices=("events", "control", "auto"), default="auto",
        help="line kind (default: control for control.jsonl, else events)",
    )


def run(args: argparse.Namespace) -> int:
    from supervisor.safetext import clean
    from supervisor.store.reading import read_file

    problems_total = 0
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
        shown = clean(str(path), keep_newlines=False)
        problems: list[tuple[int, str]] = []
        for bad in batch.bad_lines:
            size = f" ({bad.size} bytes)" if bad.size else ""
            problems.append((bad.offset or 0, f"{bad.reason}{size}: {bad.preview(80)!r}"))
        previous = 0
        seq_errors = 0
        for event, offset in zip(batch.events, batch.offsets, strict=True):
            if event.seq <= previous:
                seq_errors += 1
                problems.append((offset, f"seq {event.seq} does not increase "
                                         f"(previous {previous})"))
            previous = max(previous, event.seq)
        problems.sort(key=lambda p: p[0])
        lines = line_numbers(path, [offset for offset, _ in problems])
        for offset, text in problems:
            print(clean(f"{shown}:{lines[offset]}: {text} (byte {offset})", keep_newlines=False))
        problems_total += len(problems)
        seq_note = f", {seq_errors} seq errors" if seq_errors else ""
        print(f"{shown}: {len(batch.events)} events, {len(batch.bad_lines)} bad lines{seq_note}")
    return 1 if problems_total else 0


def line_numbers(path: Path, offsets: list[int]) -> dict[int, int]:
    """The line (from 1) that starts at each byte offset of `offsets` (sorted), counting the
    newlines before it in one streamed pass: a file of millions of events is not held whole."""
    found: dict[int, int] = {}
    line, position = 1, 0
    with open(path, "rb") as file:
        for offset in offsets:
            while position < offset:
                chunk = file.read(min(1 << 20, offset - position))
                if not chunk:
                    break
                line += chunk.count(b"\n")
                position += len(chunk)
            found[offset] = line
    return found
