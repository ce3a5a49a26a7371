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
