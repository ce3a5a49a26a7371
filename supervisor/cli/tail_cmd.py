"""`supervisor tail SESSION [--follow] [--full | --json] [--heartbeats]`: a session's events as
readable, escaped lines.

Runs of heartbeats are folded into one line ("… 42 heartbeats, 3 min") unless `--heartbeats`;
`--full` prints each event whole (a call's arguments, a result's entire output, a message's
entire text, indented under its line); `--json` prints each event as one JSON object (ASCII
escapes, so agent text cannot reach the terminal as control bytes; every event, heartbeats
too) and each bad line as `{"bad_line": {...}}`.
"""

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from supervisor.cli.common import (
    CliError,
    add_store_arguments,
    hide_store_password,
    store_from,
)
from supervisor.safetext import clean

if TYPE_CHECKING:
    from supervisor.protocol.bad_line import BadLine
    from supervisor.protocol.models import Event
    from supervisor.store.base import SessionBatch, SessionReader, Store

FOLLOW_INTERVAL_S = 0.2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("-f", "--follow", action="store_true", help="keep printing new events")
    parser.add_argument("-n", "--lines", type=int, default=None, metavar="N",
                        help="only the last N events (and bad lines)")
    shape = parser.add_mutually_exclusive_group()
    shape.add_argument("--full", action="store_true",
                       help="every event whole: arguments, the entire output, the entire text")
    shape.add_argument("--json", action="store_true",
                       help="one JSON object per event (bad lines as {\"bad_line\": ...})")
    parser.add_argument("--heartbeats", action="store_true",
                        help="print every heartbeat (default: fold each run into one line)")


def run(args: argparse.Namespace) -> int:
    if args.lines is not None and args.lines < 0:
        raise CliError("-n/--lines must be 0 or more")
    if args.follow:
        hide_store_password(args)  # it may run for hours: no password in the process list
    with store_from(args) as store:
        store.require(args.session)
        printer, reader, entries = _from_the_end(args, store)
        if args.lines is not None:
            entries = entries[max(0, len(entries) - args.lines):] if args.lines else []
        _write(entries)
        if not entries and store.summary(args.session).vanished:  # not a session yet to write
            raise CliError(f"session {clean(args.session, limit=60)}: its events.jsonl was "
                           "removed after it was read (`supervisor sessions` lists it as "
                           "vanished); nothing to show", 1)
        if not args.follow:
            return 0
        try:
            while True:
                batch = reader.poll(timeout=FOLLOW_INTERVAL_S)
                if batch.reset and batch.missing:  # removed, not replaced: as the dashboard
                    _write([*printer.flush(),  # and `sessions` say, the session vanished
                            ["-- the session vanished (its events.jsonl was removed) --"]])
                    return 1
                if batch.reset:
                    _write([*printer.flush(),
                            ["-- the log was truncated or replaced; reading from the start --"]])
                _write(printer.render(batch))
                if batch.missing and not store.exists(args.session):
                    _write([*printer.flush(), ["-- the session vanished --"]])
                    return 1
        except KeyboardInterrupt:
            _write(printer.flush())  # a run of heartbeats still open
            raise


def _from_the_end(args: argparse.Namespace, store: "Store") -> tuple[
        "Printer", "SessionReader", list[list[str]]]:
    """The printer, the reader and the entries to show: with `-n N`, read from where the last
    lines start (`tail_cursor`), reading further back until more than N entries came (a run
    of heartbeats folds many lines into one, and the first entry may be a run cut short), or
    the start was reached; without it, the whole log."""
    want = args.lines + 1 if args.lines is not None else None
    while True:
        start = store.tail_cursor(args.session, want) if want is not None else None
        printer = Printer(full=args.full, json=args.json,
                          fold=not (args.heartbeats or args.json))
        reader = store.reader(args.session, start=start)
        entries = printer.render(reader.poll())
        if not args.follow:
            entries += printer.flush()
        if start is None or want is None or len(entries) > args.lines:
            return printer, reader, entries
        want *= 4


@dataclass(slots=True)
class Printer:
    """Turns batches into entries (the lines of one event), folding runs of heartbeats."""

    full: bool = False
    json: bool = False
    fold: bool = True
    _first: "Event | None" = None
    """The first heartbeat of the run not printed yet."""
    _last: "Event | None" = None
    _count: int = 0

    def render(self, batch: "SessionBatch") -> list[list[str]]:
        """Events and bad lines of a batch in log order; an open heartbeat run is held back
        until the next event (or `flush`)."""
        from supervisor.protocol.bad_line import BadLine
        from supervisor.store.render import describe_bad_line

        rows: list[tuple[int, Event | BadLine]] = list(
            zip(batch.cursors, batch.events, strict=True))
        rows += list(zip(batch.bad_cursors, batch.bad_lines, strict=True))
        rows.sort(key=lambda row: row[0])
        out: list[list[str]] = []
        for _, item in rows:
            if isinstance(item, BadLine):
                out += self.flush()
                out.append([_bad_json(item) if self.json else describe_bad_line(item)])
            elif self.fold and item.type == "heartbeat":
                self._first = self._first or item
                self._last = item
                self._count += 1
            else:
                out += self.flush()
                out.append(self._event(item))
        return out

    def flush(self) -> list[list[str]]:
        """The pending run of heartbeats as its line (a single heartbeat as itself)."""
        first, last, count = self._first, self._last, self._count
        self._first, self._last, self._count = None, None, 0
        if first is None or last is None:
            return []
        if count == 1:
            return [self._event(first)]
        from supervisor.store.render import clock, heartbeat_run

        return [[f"{first.seq:>6} {clock(first.ts)} {'heartbeat':<16} "
                 f"{heartbeat_run(count, first.ts, last.ts)} (to #{last.seq} at "
                 f"{clock(last.ts)})"]]

    def _event(self, event: "Event") -> list[str]:
        from supervisor.store.render import describe_event, describe_full

        if self.json:
            import json

            return [json.dumps(event.model_dump(mode="json"), ensure_ascii=True)]
        return describe_full(event) if self.full else [describe_event(event)]


def _bad_json(bad: "BadLine") -> str:
    import json

    return json.dumps({"bad_line": {"offset": bad.offset, "reason": bad.reason,
                                    "size": bad.size, "preview": bad.preview(200)}},
                      ensure_ascii=True)


def _write(entries: list[list[str]]) -> None:
    if entries:
        sys.stdout.write("".join(line + "\n" for entry in entries for line in entry))
    sys.stdout.flush()  # --follow output goes to pipes too: show it now, not at exit
