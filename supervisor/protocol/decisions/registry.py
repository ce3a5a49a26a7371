"""The registry of decision kinds: one line per operator action (see the package docstring)."""

from supervisor.protocol.decisions import (
    abort,
    approve,
    drop_plan,
    guidance,
    pause,
    quiet,
    replan,
    reset,
    resume,
    rollback,
    skip,
    split,
)
from supervisor.protocol.decisions.base import DecisionKind

KINDS: dict[str, DecisionKind] = {kind.name: kind for kind in (
    approve.KIND,
    pause.KIND,
    guidance.KIND,
    rollback.KIND,
    reset.KIND,
    skip.KIND,
    abort.KIND,
    split.KIND,
    replan.KIND,
    drop_plan.KIND,
    quiet.KIND,
    resume.KIND,
)}
"""Every operator action, by name, in the order the dashboard and the docs show them."""

ACTIONS: tuple[str, ...] = tuple(name for name, kind in KINDS.items() if kind.wire is None)
"""The actions a decision line may carry (`resume` is written as `approve`)."""
ESCALATION_OPTIONS: tuple[str, ...] = tuple(name for name, kind in KINDS.items()
                                            if kind.answers)
"""What an escalation offers, in this order (`rollback` only while checkpoints are on)."""
SESSION_COMMANDS: tuple[str, ...] = tuple(name for name, kind in KINDS.items()
                                          if kind.command_key)
"""The commands the dashboard's session screens bind to a key (and list in the palette)."""
NEWS: frozenset[str] = frozenset(name for name, kind in KINDS.items() if kind.news)
"""The kinds whose words reach an agent between tool calls too (`DecisionKind.news`)."""
