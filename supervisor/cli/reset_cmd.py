"""`supervisor reset SESSION`: clear the session's loop counters (the seeds' `/clear`), bounded
by the policy's `resets_per_conversation`."""

import argparse

from supervisor.cli.common import CliError, add_store_arguments, store_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("--operator", metavar="NAME", help="your name (default: login name)")
    parser.add_argument("--wait", type=float, default=3.0, metavar="SECONDS",
                        help="how long to wait for the agent to apply it (default 3; 0: don't)")


def run(args: argparse.Namespace) -> int:
    from supervisor.cli.answer_cmd import report_outcome
    from supervisor.guard.operator import send_decision

    store = store_from(args)
    store.require(args.session)
    events = [e.model_dump(mode="json") for e in store.read_all(args.session).events]
    start = next((e for e in events if e.get("type") == "session_start"), None)
    if start is None:
        raise CliError(f"session '{args.session}' has not started")
    if any(e.get("type") == "session_end" for e in events):
        raise CliError(f"session '{args.session}' has ended; there is nothing to reset")
    limit = _reset_limit(start.get("policy"))
    done = sum(1 for e in events
               if e.get("type") == "decision_applied" and e.get("action") == "reset")
    if limit is not None and done >= limit:
        raise CliError(f"session '{args.session}' already had {done} reset(s): the limit "
                       f"(resets_per_conversation) is {limit:g}")
    after = store.end_cursor(args.session)
    decision_id = send_decision(store, args.session, "reset", operator=args.operator)
    return report_outcome(store, args.session, decision_id, after, args.wait)


def _reset_limit(policy: object) -> float | None:
    try:
        value = policy["limits"]["resets_per_conversation"]["limit"]  # type: ignore[index]
    except (TypeError, KeyError):
        return None
    return float(value) if isinstance(value, int | float) and value > 0 else None
