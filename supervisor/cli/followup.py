"""Send an operator's decision and follow it through, for every command that writes one
(`answer`, `split`, `quiet` and the commands `decision_cmd` makes: `pause`, `resume`, `guide`,
`abort`, `reset`).

One path for all of them, through the store (so `--store URL` works alike): refuse what cannot
apply before writing anything (`supervisor.operator.refusals`), write the decision, then wait for
what the agent side made of it and say so:

    applied: agent paused at its next tool call          exit 0
    ignored: late: esc-1 was already decided (d-...)     exit 1
    the session ended (completed) before the agent read it   exit 1
    not picked up yet: ... (why, and when it will be)    exit 0
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from supervisor.cli.common import CliError, store_from

if TYPE_CHECKING:
    from supervisor.store.base import Store


WAIT_S = 10.0
"""How long every command waits for the agent side to apply its decision by default: the
dashboard's wait before it says "not responding" (`supervisor.tui.followup.RESPONSE_WAIT_S`). An
agent waiting on an escalation answers at once; one that picks a command up at its next tool call
may need a few seconds: one default for both, so no command gives up sooner than another."""


def add_follow_arguments(parser: argparse.ArgumentParser, default_wait: float = WAIT_S) -> None:
    """`--operator NAME`, `--wait SECONDS` (`WAIT_S` unless a command has a stated reason to
    differ) and `--no-wait`."""
    parser.add_argument("--operator", metavar="NAME",
                        help="your name (default: $SUPERVISOR_OPERATOR, else your login name)")
    parser.add_argument("--wait", type=float, default=default_wait, metavar="SECONDS",
                        help="how long to wait for the agent to apply it (default "
                             f"{default_wait:g}; 0: don't)")
    parser.add_argument("--no-wait", dest="wait", action="store_const", const=0.0,
                        help="write the decision and return at once")


def send_and_follow(
    store: Store, session: str, action: str, args: argparse.Namespace, *,
    escalation_id: str | None = None, text: str | None = None,
    checkpoint_id: str | None = None, agent_waits: bool = False,
    tasks: list[str] | None = None,
    detector: str | None = None, signature: str | None = None, calls: int | None = None,
    lift: bool = False,
) -> int:
    """Write the decision, then report its outcome (see the module docstring).
    `agent_waits`: the agent is waiting on an escalation (it reads the decision at once),
    rather than picking it up at its next tool call. `tasks`: a
    `split`'s or `replan`'s; `detector`, `signature`, `calls`, `lift`: a `quiet`'s."""
    from supervisor.operator.send import DecisionError, send_decision

    after = store.end_cursor(session)
    try:
        decision_id = send_decision(store, session, action, escalation_id=escalation_id,
                                    text=text, checkpoint_id=checkpoint_id,
                                    operator=args.operator, tasks=tasks, detector=detector,
                                    signature=signature, calls=calls, lift=lift)
    except DecisionError as exc:
        raise CliError(str(exc)) from exc
    if escalation_id is not None:
        late = _answered_first(store, session, escalation_id, decision_id)
        if late:
            print(f"decision {decision_id} written, but too late: {late}; the agent will "
                  "ignore yours")
            return 1
    return report_outcome(store, session, decision_id, after, args.wait,
                          agent_waits=agent_waits)


def _answered_first(store: Store, session: str, escalation_id: str,
                    decision_id: str) -> str | None:
    """Who answered `escalation_id` before `decision_id` did (two operators at once: both
    passed the checks, and the control file's order decides), or None. The loser is told now,
    not left with "not picked up yet"."""
    from supervisor.operator.refusals import unread_decisions

    summary = store.summary(session)
    answer = summary.answers.get(escalation_id)
    if answer is not None and answer.decision_id != decision_id:
        return f"{answer.operator or 'an operator'} answered it first ({answer.action})"
    for other in unread_decisions(store, session, summary):
        if other.decision_id == decision_id:
            return None
        if other.escalation_id == escalation_id:
            return f"{other.operator or 'an operator'} answered it first ({other.action})"
    return None


def report_outcome(store: Store, session: str, decision_id: str, after: int, wait: float, *,
                   agent_waits: bool = False) -> int:
    """Print what became of a decision: applied (0, worded as every view words it:
    `operator.outcome`), ignored (1), the session ended before it was read (1), or not picked
    up yet (0)."""
    from supervisor.safetext import clean

    print(f"decision {decision_id} written")
    if wait <= 0:
        return 0
    outcome = store.wait_outcome(session, decision_id, after, wait)
    if outcome is None:
        from supervisor.guard.inspect import why_not_applied_yet

        summary = store.summary(session)
        print("not picked up yet: "
              f"{why_not_applied_yet(summary, time.time(), agent_waits=agent_waits)}")
        return 0
    if outcome["type"] == "decision_applied":
        from supervisor.guard.inspect import still_waiting
        from supervisor.operator.outcome import applied_said

        print(clean(applied_said(outcome.get("outcome"), outcome.get("escalation_id"),
                                 still_waiting(store.summary(session), session)),
                    keep_newlines=False))
        return 0
    if outcome["type"] == "session_end":
        print(f"the session ended ({clean(str(outcome.get('status')), keep_newlines=False)}) "
              "before the agent read it")
        return 1
    print(f"ignored: {clean(str(outcome.get('reason')), keep_newlines=False)}")
    return 1


def refuse(session: str, reason: str | None) -> None:
    """Raise the one-line error for a decision that cannot apply (nothing was written)."""
    if reason:
        raise CliError(f"session '{session}': {reason}; nothing was written")


def run_command(args: argparse.Namespace, name: str, *, text: str | None = None) -> int:
    """`supervisor pause|resume|guide|abort|reset SESSION` (`decision_cmd`): the decision kind
    `name` as an operator command. Refuse what cannot apply, say what it does under the
    session's recorded policy when the engine has words for it (a reset), else write the
    decision and follow it through: a kind written as another action (`resume`) answers the
    session's pending escalation with it; a kind that is also an answer answers a pending one
    (and says so)."""
    from supervisor.operator.refusals import command_refusal, unread_decisions
    from supervisor.operator.send import effect_text
    from supervisor.protocol.decisions import KINDS, is_hold

    kind = KINDS[name]
    with store_from(args) as store:
        store.require(args.session)
        summary = store.summary(args.session)
        if summary.started_ts is None:
            raise CliError(f"session '{args.session}' has not started")
        refuse(args.session, command_refusal(summary, name, time.time(),
                                             unread_decisions(store, args.session, summary)))
        described = effect_text(kind, recorded_policy(store, args.session))
        if described:  # a reset: what it clears and keeps under this session's policy
            print(described)
        pending = next(iter(summary.pending.values()), None)
        if kind.wire is not None:  # resume: an approve of the pause (command_refusal checked)
            assert pending is not None
            return send_and_follow(store, args.session, kind.action, args,
                                   escalation_id=str(pending["escalation_id"]),
                                   agent_waits=True)
        if pending is not None and kind.answers:
            what = "paused" if is_hold(pending) else "waiting for an answer"
            eid = pending.get("escalation_id")
            print(f"the agent is {what} ({eid}): this {kind.cli_command} answers it"
                  + (f", so {kind.answer_note}" if kind.answer_note else ""))
        return send_and_follow(store, args.session, name, args, text=text,
                               agent_waits=pending is not None)


def recorded_policy(store: Store, session: str) -> dict[str, Any] | None:
    """The policy the session's `session_start` recorded (None when it recorded none)."""
    reader = store.reader(session)
    try:
        batch = reader.poll()
    finally:
        reader.close()
    start = next((e for e in batch.events if e.type == "session_start"), None)
    policy = getattr(start, "policy", None)
    return policy if isinstance(policy, dict) else None
