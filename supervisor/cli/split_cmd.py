"""`supervisor split SESSION "step one" "step two" … [--file F]`: split the agent's task into
sub-tasks it takes one by one (docs/plans.md).

With an escalation pending, the split answers it (the agent, waiting, gets step 1 at once);
otherwise the agent gets step 1 at its next tool call. Refused in one line, writing nothing: an
empty plan, an unreadable plan file, a sub-task over the limit, a session that has ended.
"""

import argparse
import time

from supervisor.cli.common import CliError, add_store_arguments, store_from
from supervisor.cli.followup import add_follow_arguments, refuse, send_and_follow
from supervisor.cli.plan_input import read_plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    parser.add_argument("steps", nargs="*", metavar="STEP",
                        help="the sub-tasks, in order, as the agent will read them")
    parser.add_argument("--file", metavar="F",
                        help="read the sub-tasks from F, one per line (after any STEPs)")
    add_follow_arguments(parser, default_wait=10.0)


def run(args: argparse.Namespace) -> int:
    from supervisor.guard.refusals import answer_refusal, command_refusal, unread_decisions

    tasks = read_plan(args.steps, args.file)
    with store_from(args) as store:
        store.require(args.session)
        summary = store.summary(args.session)
        if summary.started_ts is None:
            raise CliError(f"session '{args.session}' has not started")
        unread = unread_decisions(store, args.session, summary)
        pending = next(iter(summary.pending.values()), None)
        now = time.time()
        if pending is not None:
            escalation = str(pending.get("escalation_id"))
            refuse(args.session, answer_refusal(summary, escalation, "split", now, unread))
            return send_and_follow(store, args.session, "split", args, escalation_id=escalation,
                                   tasks=tasks, agent_waits=True)
        refuse(args.session, command_refusal(summary, "split", now, unread))
        return send_and_follow(store, args.session, "split", args, tasks=tasks)
