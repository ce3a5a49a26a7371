"""`supervisor otel [--root R | --store URL] [--follow]`: the store's sessions as OTLP traces and
metrics (docs/otel.md).

Without `--follow` it exports what the store holds and exits: 0 when the collector took
everything, 1 when something was not sent (the line says what; the next run sends it). With
`--follow` it keeps exporting until SIGTERM or Ctrl-C, retrying a collector that is down.
Configuration is the standard `OTEL_EXPORTER_OTLP_*` variables; a malformed endpoint is one line
and exit 2.
"""

import argparse
from pathlib import Path

from supervisor.cli.common import CliError, add_store_arguments, store_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("--follow", action="store_true",
                        help="keep exporting as sessions go on (until Ctrl-C or SIGTERM)")
    parser.add_argument("--include-content", action="store_true",
                        help="add each tool call's arguments and result to its span "
                             "(gen_ai.tool.call.arguments/result; off by default: they may "
                             "hold secrets)")
    parser.add_argument("--cursor", metavar="FILE", type=Path,
                        help="where to keep how far each session was exported (default: one "
                             "file per store and collector in the user state directory)")
    parser.add_argument("--from-start", action="store_true",
                        help="ignore the saved cursor: send every session again")
    parser.add_argument("--interval", type=float, default=0.5, metavar="S",
                        help="with --follow: how often the store is read (default 0.5 s)")


def run(args: argparse.Namespace) -> int:
    import signal
    import threading

    from supervisor.otel import sdk
    from supervisor.otel.cursor import CursorBusy, CursorFile, default_path
    from supervisor.otel.export import Export, run_follow, run_once
    from supervisor.otel.reach import probe, request_timeout_s

    if not 0.05 <= args.interval <= 3600:
        raise CliError("--interval must be between 0.05 and 3600 seconds")
    try:
        endpoint = sdk.check_endpoints()
        errors = sdk.capture_sdk_logs()
        spans = sdk.span_exporter()
        metrics = sdk.metric_exporter()
    except sdk.OtelConfigError as exc:
        raise CliError(str(exc)) from exc
    store = store_from(args)
    label = store.describe()
    try:
        cursors = CursorFile(args.cursor or default_path(label, endpoint),
                             from_start=args.from_start)
    except CursorBusy as exc:
        store.close()
        raise CliError(str(exc)) from exc
    except ValueError as exc:
        store.close()
        raise CliError(str(exc)) from exc
    res = sdk.resource(label)
    if args.follow:
        print(f"otel: exporting {label} to {endpoint} (Ctrl-C stops)", flush=True)
    reach = probe(endpoint)  # the exporter says nothing for its whole timeout: say it first
    refused = reach.outcome == "refused" and not args.follow
    if reach.outcome == "refused" and args.follow:
        print(f"otel: no collector at {endpoint} ({reach.reason}); retrying until one answers",
              flush=True)
    elif reach.outcome == "silent":
        print(f"otel: waiting for the collector at {endpoint} ({reach.reason}; each request "
              f"waits up to {request_timeout_s():g} s)", flush=True)

    def by_status() -> dict[str, int]:
        import time

        counts: dict[str, int] = {}
        now = time.time()
        for summary in store.summaries():
            status = summary.status(now)
            counts[status] = counts.get(status, 0) + 1
        return counts

    interval_ms = None if args.follow else 3_600_000  # one-shot: sent once, at the end
    # refused: nothing is sent (not even the metrics), at once; the spans are still counted
    meters = None if refused else sdk.Meters(res, metrics, by_status, interval_ms)
    export = Export(spans, meters, cursors, res, errors, include_content=args.include_content,
                    say=lambda line: print(line, flush=True))
    if refused:
        export.failure = f"no collector answers at {endpoint}: {reach.reason}"
    follower = store.follower()
    stop = threading.Event()
    try:
        if args.follow:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stop.set())
            run_follow(export, follower.scan, stop, args.interval)
        else:
            run_once(export, follower.scan)
    finally:
        if meters is not None and export.failure is not None:
            meters.exporter.refuse(export.failure)
        metrics_ok = meters is not None and meters.finish()
        spans.shutdown()
        cursors.close()
        store.close()
    totals = export.totals
    print(f"otel: sent {totals.spans_sent} span(s) of {len(totals.sessions)} session(s) "
          f"to {endpoint}; metrics {'sent' if metrics_ok else 'NOT sent'}")
    if totals.spans_unsent:
        raise CliError(
            f"not sent: {totals.spans_unsent} span(s) of {len(totals.unsent_sessions)} "
            f"session(s) ({export.failure}); the store is untouched and the next run sends "
            "them", 1)
    if refused:
        raise CliError(f"{export.failure}; nothing was sent, the metrics neither", 1)
    if not metrics_ok:
        raise CliError(f"the collector at {endpoint} did not take the metrics "
                       f"({errors.take() or export.failure or 'no reason given'})", 1)
    return 0
