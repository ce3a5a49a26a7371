"""The dashboard's keys for operator decisions, from the decision-kind registry.

The escalation prompt binds each answer an escalation may offer to its kind's `key`; the
sessions and session screens bind each command that has a `command_key`. Both key sets are
deliberate keys (`supervisor.tui.deliberate`: ignored when they come in a burst). Nothing here
lists an action: a new kind with a key gets its binding, its help line and its burst rule.
"""

from textual.binding import Binding

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
