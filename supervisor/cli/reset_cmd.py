"""`supervisor reset SESSION`: clear the session's loop counters (the seeds' `/clear`), bounded
by the policy's `resets_per_conversation`; what a reset clears and keeps is the engine's
`reset_description` (docs/engine.md)."""

import argparse

from supervisor.cli.common import CliError, add_store_arguments, store_from
from supervisor.cli.followup import add_follow_arguments, refuse, send_and_follow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    add_follow_arguments(parser, default_wait=3.0)


def run(args: argparse.Namespace) -> int:
    import time

    from supervisor.guard.refusals import command_refusal, unread_decisions

    with store_from(args) as store:
        store.require(args.session)
        summary = store.summary(args.session)
        if summary.started_ts is None:
            raise CliError(f"session '{args.session}' has not started")
        refuse(args.session, command_refusal(summary, "reset", time.time(),
                                             unread_decisions(store, args.session, summary)))
        return send_and_follow(store, args.session, "reset", args)
