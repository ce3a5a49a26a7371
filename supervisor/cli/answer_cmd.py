"""`supervisor answer SESSION (--approve | --guidance TEXT | --rollback CP | --skip | --abort |
--split STEP... | --split-file F)`:
answer the session's pending escalation through its control channel."""

import argparse
from typing import TYPE_CHECKING

from supervisor.cli.common import CliError, add_store_arguments, store_from
from supervisor.cli.followup import add_follow_arguments, refuse, send_and_follow
from supervisor.protocol.decisions import KINDS, escalation_options

if TYPE_CHECKING:
    from supervisor.store.base import Store
    from supervisor.store.summary import SessionSummary


_METAVARS = {"text": "TEXT", "checkpoint": "CHECKPOINT", "tasks": "STEP"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_arguments(parser)
    parser.add_argument("session", help="session id")
    what = parser.add_mutually_exclusive_group(required=True)
    for name in escalation_options():  # one flag per answer an escalation may offer
        kind = KINDS[name]
        flag = "--" + name.replace("_", "-")
        if kind.needs is None:
            what.add_argument(flag, action="store_true", help=kind.summary)
        elif kind.needs == "tasks":
            what.add_argument(flag, metavar="STEP", action="append",
                              help=f"{kind.summary} (repeat it, once per sub-task, in order; "
                                   "docs/plans.md)")
            what.add_argument(f"{flag}-file", metavar="F",
                              help=f"{kind.summary}: the sub-tasks of F, one per line")
        else:
            what.add_argument(flag, metavar=_METAVARS[kind.needs], help=kind.summary)
    parser.add_argument("--escalation", metavar="ID",
                        help="the escalation to answer (default: the pending one)")
    add_follow_arguments(parser)


def run(args: argparse.Namespace) -> int:
    with store_from(args) as store:
        return _answer(store, args)


def _answer(store: "Store", args: argparse.Namespace) -> int:
    import time

    from supervisor.operator.refusals import answer_refusal, unread_decisions

    store.require(args.session)
    summary = store.summary(args.session)
    if summary.end_status is not None:
        raise CliError(f"session '{args.session}' has ended ({summary.end_status}); "
                       "there is nothing to answer")
    pending = list(summary.pending)
    action, text, checkpoint = _action(args)
    if args.escalation:
        if args.escalation not in pending and args.escalation not in summary.answers:
            shown = ", ".join(pending) if pending else "none"
            raise CliError(f"escalation '{args.escalation}' is not pending in session "
                           f"'{args.session}' (pending: {shown})")
        escalation = args.escalation
    elif not pending:
        raise CliError(f"session '{args.session}' has no pending escalation"
                       + _last_decided(summary, action, time.time()))
    elif len(pending) > 1:
        raise CliError(f"session '{args.session}' has {len(pending)} pending escalations "
                       f"({', '.join(pending)}): choose one with --escalation")
    else:
        escalation = pending[0]
    tasks = None
    if action == "split":
        from supervisor.cli.plan_input import read_plan

        tasks = read_plan(args.split, args.split_file)
    refuse(args.session, answer_refusal(summary, escalation, action, time.time(),
                                        unread_decisions(store, args.session, summary)))
    if checkpoint is not None:
        _check_checkpoint(store, args.session, checkpoint)
    return send_and_follow(store, args.session, action, args, escalation_id=escalation,
                           text=text, checkpoint_id=checkpoint, agent_waits=True,
                           tasks=tasks)


def _last_decided(summary: "SessionSummary", action: str, now: float) -> str:
    """How the session's last escalation was decided, in the refusals' words, for an operator
    told there is nothing to answer: of two operators answering at once, the one whose command
    looked after the agent had applied the other's learns who answered (the dashboard's prompt,
    which knows the escalation it shows, says the same)."""
    from supervisor.operator.refusals import answer_refusal

    last = next(reversed(summary.answers), None)
    if last is None:
        return ""
    return f" (the last, {last}: {answer_refusal(summary, last, action, now)})"


def _action(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    """The answer the flags ask for: (action, text, checkpoint)."""
    for name in escalation_options():
        given = getattr(args, name)
        needs = KINDS[name].needs
        if needs == "tasks" and getattr(args, f"{name}_file") is not None:
            return name, None, None
        if given is None or given is False:
            continue
        if needs == "text":
            if not given.strip():
                raise CliError(f"--{name} needs a text")
            return name, given, None
        if needs == "checkpoint":
            return name, None, given if given.startswith("cp-") else f"cp-{given}"
        return name, None, None
    raise CliError("say what the answer is")  # argparse requires one of the flags


def _check_checkpoint(store: "Store", session: str, checkpoint: str) -> None:
    """Refuse a rollback to a checkpoint the session does not have, before writing it: asked of
    its checkpoint repository when the session's files are here, else of its checkpoint
    events (the rollback itself runs on the agent's host)."""
    from supervisor.cli.checkpoints_cmd import checkpoint_store
    from supervisor.guard.checkpoints import CheckpointError

    if store.local_files(session) is None:
        known = [getattr(e, "checkpoint_id", None) for e in store.read_all(session).events
                 if e.type == "checkpoint"]
        if checkpoint not in known:
            raise CliError(f"no checkpoint '{checkpoint}' in session '{session}' (it has: "
                           f"{', '.join(k for k in known if k) or 'none'})")
        return
    try:
        checkpoint_store(store, session).get(checkpoint)
    except CheckpointError as exc:
        raise CliError(f"{exc}; `supervisor checkpoints {session}` lists them") from exc
