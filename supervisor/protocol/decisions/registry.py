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


def registered(kinds: tuple[DecisionKind, ...]) -> dict[str, DecisionKind]:
    """The kinds by name, checked as they are registered (as pluggy checks a hook
    implementation): a malformed name or key, or a name, answer key or command key two kinds
    share, raises `ValueError` on importing the registry, naming both kinds, instead of one
    quietly replacing the other in `KINDS` or in the dashboard's bindings."""
    out: dict[str, DecisionKind] = {}
    keys: dict[tuple[str, str], str] = {}
    for kind in kinds:
        name = kind.name
        if not isinstance(name, str) or not name.isidentifier() or not name.islower():
            raise ValueError(f"decision kind {type(kind).__name__}: malformed name {name!r}")
        if name in out:
            raise ValueError(f"decision kinds {type(out[name]).__name__} and "
                             f"{type(kind).__name__} are both named {name!r}")
        for what in ("key", "command_key"):
            key = getattr(kind, what)
            if key is None:
                continue
            if not isinstance(key, str) or len(key) != 1 or not key.isalpha():
                raise ValueError(f"decision kind {name!r}: its {what} must be one letter, "
                                 f"not {key!r}")
            other = keys.setdefault((what, key), name)
            if other != name:
                raise ValueError(f"decision kinds {other!r} and {name!r} share the {what} "
                                 f"{key!r}")
        out[name] = kind
    return out


KINDS: dict[str, DecisionKind] = registered((
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
))
"""Every operator action, by name, in the order the dashboard and the docs show them."""

ACTIONS: tuple[str, ...] = tuple(name for name, kind in KINDS.items() if kind.wire is None)
"""The actions a decision line may carry (`resume` is written as `approve`)."""
ESCALATION_OPTIONS: tuple[str, ...] = tuple(name for name, kind in KINDS.items()
                                            if kind.answers)
"""What an escalation offers, in this order (`rollback` only while checkpoints are on)."""
SESSION_COMMANDS: tuple[str, ...] = tuple(name for name, kind in KINDS.items()
                                          if kind.command_key)
"""The commands the dashboard's session screens bind to a key (and list in the palette)."""
