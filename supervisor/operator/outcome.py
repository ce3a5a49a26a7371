"""What the operator is told of a decision the agent side applied: one wording, for the
dashboard, the CLI, the web page and its answer's reply alike.

The one true account of what a decision did is the guard's own, recorded in its
`decision_applied` event (`outcome`, and `escalation_id`: the escalation it answered, if it
answered one). Each view used to word it its own way: the dashboard put the action first
(`applied: guidance. guidance delivered to the agent`), the CLI put a kind's note in its place
(`applied: guidance delivered, and the agent resumed (esc-1 answered)`, said when the
guidance was sent while an escalation was pending, even if the guard then applied it as a
command because the escalation's deadline had passed first), the web page said the outcome
alone and never that the agent still waits. Now every view says what the event says.
"""


def applied_said(outcome: object, answered: object, waits: str | None = None) -> str:
    """`applied: <the guard's outcome>`, then `(<escalation> answered)` when the event says it
    answered one, then `— but <waits>` (`guard.inspect.still_waiting`: what the agent still
    waits for, since "applied" alone reads as if it went on). Raw: the caller cleans it."""
    said = f"applied: {outcome}"
    if isinstance(answered, str) and answered:
        said += f" ({answered} answered)"
    return f"{said} — but {waits}" if waits else said


def answered_said(action: str | None, operator: str | None, decision_id: str | None,
                  outcome: str | None, ended: str | None = None) -> str:
    """How an escalation that no longer waits was decided, for a view that offered it: `already
    answered by alice: skip (d-…) task t1 skipped`, the deadline's fallback, or, with nothing
    recorded (`action` None), the session's end (`ended`: its status). Raw: the caller cleans
    it. A view's own refusal ("the agent has not applied it yet") is of its moment: once the
    escalation has left the queue this is what is true."""
    if action is None:
        return (f"no longer waiting: the session ended ({ended}) unanswered" if ended
                else "already answered")
    if decision_id == "fallback":
        return f"the deadline passed: the fallback ({action}) applied. {outcome or ''}".rstrip()
    by = f" by {operator}" if operator else ""
    return f"already answered{by}: {action} ({decision_id}) {outcome or ''}".rstrip()

