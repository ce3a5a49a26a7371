"""Operator decisions: the registry of decision kinds and the one validator of decision lines.

Each operator action is one module here (`approve.py`, `guidance.py`, ...), a `DecisionKind`
(`base.py`) saying what it needs, whether it answers an escalation, when it is refused and why,
what it does on the agent's side, its engine effect and what the agent is told. `KINDS`
(`registry.py`) lists them; from it derive the protocol's action list (`actions()`), the
validator (`validate.py`), the options an escalation offers (`escalation_options()`), the
senders' refusals
(`supervisor.operator.refusals`), the guard's application (`supervisor.guard.desk`), the engine's
effect (`supervisor.engine.decisions`), the dashboard's answer keys and docs/decisions.md.

To add an action: a module with a `DecisionKind` subclass and `KIND = MyKind()`, one line in
`KINDS` (`registry.py`), its engine effect in `engine/decisions.py` if it has a new one, and the
command that sends it (`cli/`); the docs' table is checked against the registry by a test.
"""

from supervisor.protocol.decisions.base import (
    Context,
    DecisionKind,
    Desk,
    Ignored,
    Result,
    SessionView,
    Skipped,
    not_an_option,
)
from supervisor.protocol.decisions.plan import plan_problem
from supervisor.protocol.decisions.registry import (
    KINDS,
    actions,
    escalation_options,
    holding,
    is_hold,
    meant,
    register,
    session_commands,
)
from supervisor.protocol.decisions.validate import common_problem, decision_problem, read_decision

__all__ = [
    "KINDS", "Context", "DecisionKind", "Desk", "Ignored", "Result", "SessionView", "Skipped",
    "actions", "common_problem", "decision_problem", "escalation_options", "holding", "is_hold",
    "meant", "not_an_option", "plan_problem", "read_decision", "register", "session_commands",
]
