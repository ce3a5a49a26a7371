"""`supervisor answer SESSION (--approve | --guidance TEXT | --rollback CP | --skip | --abort)`:
answer the session's pending escalation through its control channel."""

import argparse
from pathlib import Path

from supervisor.cli.common import CliError, add_root_argument, root_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_root_argument(parser)
    parser.add_argument("session", help="session id")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--approve", action="store_true",
                      help="continue; the escalated call may repeat a bounded number of times")
    what.add_argument("--guidance", metavar="TEXT", help="tell the agent what to do instead")
    what.add_argument("--rollback", metavar="CHECKPOINT",
                      help="restore a checkpoint (see `supervisor checkpoints`) and go on")
    what.add_argument("--skip", action="store_true", help="end the current task as skipped")
    what.add_argument("--abort", action="store_true", help="end the session")
    parser.add_argument("--escalation", metavar="ID",
                        help="the escalation to answer (default: the pending one)")
    parser.add_argument("--operator", metavar="NAME", help="your name (default: login name)")
    parser.add_argument("--wait", type=float, default=3.0, metavar="SECONDS",
                        help="how long to wait for the agent to apply it (default 3; 0: don't)")


def run(args: argparse.Namespace) -> int:
    from supervisor.guard.operator import DecisionError, events_size, send_decision
    from supervisor.store.paths import existing_session_dir
    from supervisor.store.reading import summarize_session

    root = root_from(args)
    existing_session_dir(root, args.session)
    summary = summarize_session(root, args.session)
    if summary.end_status is not None:
        raise CliError(f"session '{args.session}' has ended ({summary.end_status}); "
                       "there is nothing to answer")
    pending = list(summary.pending)
    if args.escalation:
        if args.escalation not in pending:
            shown = ", ".join(pending) if pending else "none"
            raise CliError(f"escalation '{args.escalation}' is not pending in session "
                           f"'{args.session}' (pending: {shown})")
        escalation = args.escalation
    elif not pending:
        raise CliError(f"session '{args.session}' has no pending escalation")
    elif len(pending) > 1:
        raise CliError(f"session '{args.session}' has {len(pending)} pending escalations "
                       f"({', '.join(pending)}): choose one with --escalation")
    else:
        escalation = pending[0]
    action, text, checkpoint = _action(args)
    options = summary.pending[escalation].get("options") or []
    if options and action not in options:
        raise CliError(f"'{action}' is not an option of {escalation} "
                       f"(options: {', '.join(options)})")
    if checkpoint is not None:
        _check_checkpoint(root, args.session, checkpoint)
    offset = events_size(root, args.session)
    try:
        decision_id = send_decision(
            root, args.session, action, escalation_id=escalation, text=text,
            checkpoint_id=checkpoint, operator=args.operator,
        )
    except DecisionError as exc:
        raise CliError(str(exc)) from exc
    return report_outcome(root, args.session, decision_id, offset, args.wait)


def report_outcome(root: Path, session: str, decision_id: str, offset: int, wait: float) -> int:
    """Print what became of a decision: applied (0), ignored (1), or not yet picked up (0)."""
    from supervisor.guard.operator import wait_for_outcome
    from supervisor.safetext import clean

    print(f"decision {decision_id} written")
    if wait <= 0:
        return 0
    outcome = wait_for_outcome(root, session, decision_id, offset, wait)
    if outcome is None:
        print("not picked up yet: the agent applies it at its next step")
        return 0
    if outcome["type"] == "decision_applied":
        print(f"applied: {clean(str(outcome.get('outcome')), keep_newlines=False)}")
        return 0
    print(f"ignored: {clean(str(outcome.get('reason')), keep_newlines=False)}")
    return 1


def _action(args: argparse.Namespace) -> tuple[str, str | None, str | None]:
    if args.approve:
        return "approve", None, None
    if args.guidance is not None:
        if not args.guidance.strip():
            raise CliError("--guidance needs a text")
        return "guidance", args.guidance, None
    if args.rollback is not None:
        cp = args.rollback if args.rollback.startswith("cp-") else f"cp-{args.rollback}"
        return "rollback", None, cp
    if args.skip:
        return "skip", None, None
    return "abort", None, None


def _check_checkpoint(root: Path, session: str, checkpoint: str) -> None:
    """Refuse a rollback to a checkpoint the session does not have, before writing it."""
    from supervisor.cli.checkpoints_cmd import open_store
    from supervisor.guard.checkpoints import CheckpointError

    try:
        open_store(root, session).get(checkpoint)
    except CheckpointError as exc:
        raise CliError(f"{exc} in session '{session}' (see `supervisor checkpoints {session}`)")\
            from exc
