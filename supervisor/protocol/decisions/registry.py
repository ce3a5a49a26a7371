"""The registry of decision kinds: one line per operator action (see the package docstring)."""

from collections.abc import Mapping
from typing import Any

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
    """The kinds by name, each checked as it is registered (`register`)."""
    out: dict[str, DecisionKind] = {}
    for kind in kinds:
        register(kind, out)
    return out


def register(kind: DecisionKind, into: dict[str, DecisionKind] | None = None) -> None:
    """Add `kind` to the registry (`KINDS`, or `into`), checked as pluggy checks a hook
    implementation: a malformed name or key, or a name, answer key or command key another kind
    has, raises `ValueError` naming both kinds, instead of one quietly replacing the other in
    `KINDS` or in the dashboard's bindings. Everything that lists operator actions reads the
    registry when it lists them, so a kind added here is offered everywhere."""
    out = KINDS if into is None else into
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
        other = next((k.name for k in out.values() if getattr(k, what) == key), None)
        if other is not None:
            raise ValueError(f"decision kinds {other!r} and {name!r} share the {what} "
                             f"{key!r}")
    out[name] = kind


KINDS: dict[str, DecisionKind] = {}
"""Every operator action, by name, in the order the dashboard and the docs show them."""
KINDS.update(registered((
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
)))
BUILT_IN_KEYS: dict[str, tuple[str | None, str | None]] = {
    name: (kind.key, kind.command_key) for name, kind in KINDS.items()}
"""Each kind's (key, command key) as built, before an operator's `[keys]` or a kind registered
later: while the keys are these, the dashboard's screens are known to take them (its tests
check them), and it need not import every screen at start to check them
(`supervisor.tui.keys.load_app`)."""


def actions() -> tuple[str, ...]:
    """The actions a decision line may carry (`resume` is written as `approve`)."""
    return tuple(name for name, kind in KINDS.items() if kind.wire is None)


def escalation_options() -> tuple[str, ...]:
    """What an escalation offers, in this order (one that needs a checkpoint only while
    checkpoints are on)."""
    return tuple(name for name, kind in KINDS.items() if kind.answers)


def session_commands() -> tuple[str, ...]:
    """The commands the dashboard's session screens bind to a key (and list in the palette)."""
    return tuple(name for name, kind in KINDS.items() if kind.command_key)


def is_hold(escalation: Mapping[str, Any]) -> bool:
    """`escalation` is an operator's hold (a pause, `DecisionKind.holds`), not a loop."""
    kind = KINDS.get(str(escalation.get("kind")))
    return kind is not None and kind.holds


def holding() -> DecisionKind:
    """The kind an agent's own request to pause holds it as (`Guard.pause`, as the operator's
    command does): the registry's first kind that `holds` (`pause`)."""
    return next(kind for kind in KINDS.values() if kind.holds)


def meant(action: str, escalation: Mapping[str, Any]) -> DecisionKind:
    """The kind an operator means by answering `escalation` with `action`: on an operator's
    hold, the command written as that action (`approve` there is `resume`); else the action's
    own kind."""
    if is_hold(escalation):
        wired = next((k for k in KINDS.values() if k.wire == action), None)
        if wired is not None:
            return wired
    return KINDS[action]
