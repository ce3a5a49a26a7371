"""`supervisor split SESSION "step one" "step two" … [--file F]`: split the agent's task into
sub-tasks it takes one by one (docs/plans.md). With `--remaining`, the steps replace the
sub-tasks after the current one of the session's plan (`replan`); `--drop` drops them
(`drop_plan`).

With an escalation pending, the split answers it (the agent, waiting, gets step 1 at once);
otherwise the agent gets step 1 at its next tool call. Refused in one line, writing nothing: an
empty plan, an unreadable plan file, a sub-task over the limit, a session that has ended.
"""

import argparse
import time
from typing import Any

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
    change = parser.add_mutually_exclusive_group()
    change.add_argument("--remaining", action="store_true",
                        help="replace the sub-tasks after the current one of the plan")
    change.add_argument("--drop", action="store_true",
                        help="drop the sub-tasks after the current one of the plan")
    add_follow_arguments(parser, default_wait=10.0)


def run(args: argparse.Namespace) -> int:
    from supervisor.operator.refusals import answer_refusal, command_refusal, unread_decisions

    if args.drop and (args.steps or args.file):
        raise CliError("--drop takes no sub-tasks; nothing was written")
    tasks = None if args.drop else read_plan(args.steps, args.file)
    with store_from(args) as store:
        store.require(args.session)
        summary = store.summary(args.session)
        if summary.started_ts is None:
            raise CliError(f"session '{args.session}' has not started")
        unread = unread_decisions(store, args.session, summary)
        if args.drop or args.remaining:
            kind = "drop_plan" if args.drop else "replan"
            return _change(store, args, tasks, command_refusal(summary, kind, time.time(),
                                                               unread))
        pending = next(iter(summary.pending.values()), None)
        now = time.time()
        if pending is not None:
            escalation = str(pending.get("escalation_id"))
            refuse(args.session, answer_refusal(summary, escalation, "split", now, unread))
            return send_and_follow(store, args.session, "split", args, escalation_id=escalation,
                                   tasks=tasks, agent_waits=True)
        refuse(args.session, command_refusal(summary, "split", now, unread))
        return send_and_follow(store, args.session, "split", args, tasks=tasks)


def _change(store: Any, args: argparse.Namespace, tasks: list[str] | None,
            refusal: str | None) -> int:
    """`--remaining` / `--drop`: change the session's plan, which must have steps left."""
    from supervisor.store.plan_view import PlanView

    refuse(args.session, refusal)
    plan = PlanView()
    for event in store.read_all(args.session).events:
        plan.apply(event)
    if not plan.active:
        refuse(args.session, "there is no plan to change (split the task first)")
    action = "drop_plan" if args.drop else "replan"
    return send_and_follow(store, args.session, action, args, tasks=tasks)
