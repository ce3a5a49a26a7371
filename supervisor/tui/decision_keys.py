"""The dashboard's keys for operator decisions, from the decision-kind registry.

The escalation prompt binds each answer an escalation may offer to its kind's `key`; the
sessions and session screens bind each command that has a `command_key`. Both key sets are
deliberate keys (`supervisor.tui.deliberate`: ignored when they come in a burst). Nothing here
lists an action: a new kind with a key gets its binding, its help line and its burst rule.

A screen with decision keys (`RegistryKeys`) binds them as it is built, from the registry as it
is then, not as it was when its module was imported: a kind registered later (a plugin, a test)
has its key like the others. `distinct` checks the keys as a screen binds them, so a kind's key
that another binding of the screen (or of a panel shown in it) already has fails instead of
shadowing it: at the screen's import (what `keys.load_app` reports), and again at its build.
"""

from collections.abc import Iterable
from typing import Any, ClassVar

from textual.binding import Binding, BindingsMap, BindingType

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


class RegistryKeys:
    """A screen's decision keys, bound from the registry when the screen is built.

    A screen lists its own bindings in `BINDINGS` and says which decisions it binds
    (`decision_bindings`: `answer_bindings` or `command_bindings`, or a choice of them), where
    it is (for the errors) and which panels' bindings are shown with it (`BESIDE`). Its
    `DELIBERATE_KEYS` are then its decision keys and `OTHER_DELIBERATE_KEYS`.

    Mixed in before the Textual screen (`class S(RegistryKeys, ModalScreen[str])`), and not a
    `DOMNode` itself: Textual inherits CSS along the first base that is a `DOMNode`, so a
    DOMNode mixin would cut the screen off its base's CSS (a modal's dimmed background)."""

    BINDINGS: ClassVar[list[BindingType]]
    _bindings: BindingsMap

    KEYS_WHERE: ClassVar[str] = "a screen"
    """The screen in words, for a clash's error."""
    BESIDE: ClassVar[tuple[Iterable[BindingType], ...]] = ()
    """Bindings of widgets shown with the screen, each group on its own (`distinct`)."""
    OTHER_DELIBERATE_KEYS: ClassVar[frozenset[str]] = frozenset()
    """The screen's own keys that are deliberate too (`supervisor.tui.deliberate`)."""
    DELIBERATE_KEYS: frozenset[str]
    """The keys that decide here, never taken from a burst of keys: set as it is built."""

    @classmethod
    def decision_bindings(cls) -> list[Binding]:
        """The registry's decisions this screen binds, as of now."""
        raise NotImplementedError

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "decision_bindings" in cls.__dict__ or "BINDINGS" in cls.__dict__:
            cls.checked_bindings()  # at import: what `keys.load_app` reports

    @classmethod
    def checked_bindings(cls) -> list[Binding]:
        """The screen's decision bindings, checked against its own and `BESIDE`'s."""
        decisions = cls.decision_bindings()
        distinct(cls.KEYS_WHERE, [*decisions, *cls.BINDINGS], *cls.BESIDE)
        return decisions

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        decisions = self.checked_bindings()
        for binding in decisions:  # Textual has no public way to add a screen's binding
            self._bindings.key_to_bindings.setdefault(binding.key, []).append(binding)
        self.DELIBERATE_KEYS = self.OTHER_DELIBERATE_KEYS | {b.key for b in decisions}


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
