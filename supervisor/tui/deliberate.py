"""A decision comes from a person, never from a burst of keys.

Text typed into the wrong tmux pane (a shell command, a paste) reaches the dashboard as a burst.
A key that sends or confirms a decision, or opens the step that does (a screen lists them in
`DELIBERATE_KEYS`), counts only when it came alone: the only key of its read of the terminal,
after a quiet of at least `BURST_GAP_S` that the terminal driver saw (`supervisor.tui.key_arrival`:
both are facts of the input thread, which a loaded machine can delay but not fake, so the rule
holds at any load). A person who reads the screen before pressing takes longer than that; one
who pressed too fast is told so and presses again. Keys that come from no terminal read (a
test's Pilot) are judged by their parse time (`KeyPace`).

Second steps, on top of that rule: approve, skip and abort ask for `y` (a confirmation, itself a
deliberate key, hence pressed alone after a quiet that began once the question was asked);
rollback needs `enter` in the checkpoint picker, which shows what it throws away; guidance needs
its text and `ctrl+s`. Resuming an operator's pause and pausing act at once: they can be taken
back (pause again, resume).
"""

from typing import Protocol, runtime_checkable

BURST_GAP_S = 0.3
"""Keys closer together than this are a burst: faster than a person presses a key they chose
(fast typists type 80-120 ms apart, but not after reading a new screen)."""


@runtime_checkable
class HasDeliberateKeys(Protocol):
    """A screen whose keys that decide are never taken from a burst (`RegistryKeys` screens,
    the new-run form): what the app's key filter asks of the screen shown."""

    DELIBERATE_KEYS: frozenset[str]


class KeyPace:
    """The parse time of the previous key, to tell a burst from a deliberate press when the
    driver recorded no arrival (keys a test presses)."""

    def __init__(self, gap: float = BURST_GAP_S) -> None:
        self.gap = gap
        self.last: float | None = None

    def in_burst(self, at: float) -> bool:
        """Record a key that arrived at `at` (monotonic seconds); True when it came less than
        `gap` after the previous one."""
        previous, self.last = self.last, at
        return previous is not None and at - previous < self.gap


def key_matches(keys: frozenset[str], key: str, character: str | None) -> bool:
    """Whether a key event is one of `keys` (a binding's name, or the character typed)."""
    return key in keys or (character is not None and len(character) == 1
                           and character.isprintable() and character in keys)
