"""`supervisor reset SESSION`: clear the session's loop counters (the seeds' `/clear`), bounded
by the policy's `resets_per_conversation`; it says what a reset clears and keeps under the
session's recorded policy, in the engine's words (`reset_description`, docs/engine.md)."""

import argparse
from typing import TYPE_CHECKING, Any

from supervisor.cli.common import CliError, add_store_arguments, store_from
from supervisor.cli.followup import add_follow_arguments, refuse, send_and_follow

if TYPE_CHECKING:
    from supervisor.store.base import Store


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    add_follow_arguments(parser)


def run(args: argparse.Namespace) -> int:
    import time

    from supervisor.operator.refusals import command_refusal, unread_decisions

    with store_from(args) as store:
        store.require(args.session)
        summary = store.summary(args.session)
        if summary.started_ts is None:
            raise CliError(f"session '{args.session}' has not started")
        refuse(args.session, command_refusal(summary, "reset", time.time(),
                                             unread_decisions(store, args.session, summary)))
        from supervisor.operator.send import effect_text
        from supervisor.protocol.decisions import KINDS

        print(effect_text(KINDS["reset"], recorded_policy(store, args.session)))
        return send_and_follow(store, args.session, "reset", args)


def recorded_policy(store: "Store", session: str) -> dict[str, Any] | None:
    """The policy the session's `session_start` recorded (None when it recorded none)."""
    reader = store.reader(session)
    try:
        batch = reader.poll()
    finally:
        reader.close()
    start = next((e for e in batch.events if e.type == "session_start"), None)
    policy = getattr(start, "policy", None)
    return policy if isinstance(policy, dict) else None
