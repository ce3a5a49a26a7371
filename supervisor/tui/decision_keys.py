"""The dashboard's keys for operator decisions, from the decision-kind registry.

The escalation prompt binds each answer an escalation may offer to its kind's `key`; the
sessions and session screens bind each command that has a `command_key`. Both key sets are
deliberate keys (`supervisor.tui.deliberate`: ignored when they come in a burst). Nothing here
lists an action: a new kind with a key gets its binding, its help line and its burst rule; and
`distinct` checks the keys as a screen binds them, so a kind's key that another binding of the
screen (or of a panel shown in it) already has fails the import instead of shadowing it.
"""

from collections.abc import Iterable

from textual.binding import Binding, BindingType

from supervisor.protocol.decisions import KINDS, escalation_options, session_commands


def answer_bindings() -> list[Binding]:
    """`a` approve, `g` guidance, ...: one binding per answer, in the registry's order."""
    return [Binding(str(KINDS[name].key), f"decide('{name}')", KINDS[name].title, show=True)
            for name in escalation_options()]


def command_bindings() -> list[Binding]:
    """`P` pause, `G` guidance, ...: one binding per command with a key."""
    return [Binding(str(KINDS[name].command_key), f"command('{name}')", KINDS[name].title,
                    show=KINDS[name].command_shown)
            for name in session_commands()]


ANSWER_KEYS = frozenset(str(KINDS[name].key) for name in escalation_options())
COMMAND_KEYS = frozenset(str(KINDS[name].command_key) for name in session_commands())


def distinct(where: str, bindings: Iterable[BindingType],
             *beside: Iterable[BindingType]) -> list[BindingType]:
    """`bindings`, checked as they are bound (as pluggy checks a hook implementation): a key
    two of them bind, or one of them and a widget in `beside` shown with them (a session
    screen's panels, each on its own), raises `ValueError` naming both actions, instead of one
    quietly shadowing the other (a decision kind's command key `E` and the plan panel's `E`)."""
    bindings = list(bindings)
    own = _keys(where, bindings)
    for group in beside:
        theirs = _keys(where, group)
        for key in sorted(own.keys() & theirs.keys()):
            raise ValueError(f"{where}: the key {key!r} is bound to both {own[key]!r} and "
                             f"{theirs[key]!r}")
    return bindings


def _keys(where: str, bindings: Iterable[BindingType]) -> dict[str, str]:
    out: dict[str, str] = {}
    for binding in bindings:
        if not isinstance(binding, Binding):
            continue
        for key in binding.key.split(","):
            key = key.strip()
            if out.setdefault(key, binding.action) != binding.action:
                raise ValueError(f"{where}: the key {key!r} is bound to both {out[key]!r} and "
                                 f"{binding.action!r}")
    return out
