"""`supervisor quiet SESSION --detector NAME [--signature SIG] [--calls N] [--lift]`: quiet one
loop detector (or one loop signature of it) in one session, for N tool calls or until the session
ends; `--lift` ends such a quiet at once. Recorded as a decision; the guard applies it at the
agent's next tool call and the engine drops that detector's findings while it lasts
(docs/engine.md, "Operator decisions"); hard limits are never quieted."""

import argparse
import time

from supervisor.cli.common import CliError, add_store_arguments, store_from
from supervisor.cli.followup import add_follow_arguments, refuse, send_and_follow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("--detector", required=True, metavar="NAME",
                        help="the detector to quiet (see `supervisor policy show`)")
    parser.add_argument("--signature", metavar="SIG",
                        help="only this loop signature of it (as the detection shows it)")
    parser.add_argument("--calls", type=int, metavar="N",
                        help="for the next N tool calls (default: until the session ends)")
    parser.add_argument("--lift", action="store_true",
                        help="end the quiet of this detector (and signature) now: its findings "
                             "count again")
    add_follow_arguments(parser, default_wait=10.0)


def run(args: argparse.Namespace) -> int:
    from supervisor.engine.detectors import NAMES
    from supervisor.operator.refusals import command_refusal

    if args.detector not in NAMES:
        raise CliError(f"unknown detector '{args.detector}' (one of {', '.join(NAMES)})")
    if args.lift and args.calls is not None:
        raise CliError("--lift takes no --calls")
    if args.calls is not None and args.calls < 1:
        raise CliError("--calls must be at least 1")
    with store_from(args) as store:
        store.require(args.session)
        summary = store.summary(args.session)
        if summary.started_ts is None:
            raise CliError(f"session '{args.session}' has not started")
        refuse(args.session, command_refusal(summary, "quiet", time.time()))
        return send_and_follow(store, args.session, "quiet", args, detector=args.detector,
                               signature=args.signature, calls=args.calls, lift=args.lift)
