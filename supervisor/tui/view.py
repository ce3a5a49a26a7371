"""What goes down to the screens: the `DashboardView` they read, and the `LiveScreen` seam the
app drives.

Every screen that shows the model is given a `DashboardView` when it is made (the model, the
store to read from, the clock, whether decisions may be written and why one would be refused),
never the app itself; what it wants done goes up as a message (`supervisor.tui.messages`).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.app import SystemCommand

from supervisor.store.base import Store
from supervisor.tui.model import DashboardModel


@dataclass(frozen=True, slots=True)
class DashboardView:
    """Read-only context of every screen and panel."""

    model: DashboardModel
    store: Store
    clock: Callable[[], float]
    clock_format: Callable[[float], str]
    read_only: bool
    """No decision is written from here (`--read-only`, or recordings)."""
    recordings: bool
    """The store holds recordings: nothing in it waits for anyone."""
    refusal: Callable[[str, str, str | None], str | None]
    """Why (session, action, escalation) cannot apply now, or None: asked before the operator
    types a guidance or picks a checkpoint that could not be used; the app asks again when it
    writes."""


class LiveScreen:
    """A screen that shows the model: once `ready` (composed and mounted) the app's tick calls
    `refresh_view`, which redraws by diff what changed; `commands` are its lines of the command
    palette. Mixed into a Textual `Screen` (`class S(LiveScreen, Screen[None])`)."""

    ready: bool = False

    def refresh_view(self) -> None:
        """Redraw what changed since the last call (called on the app's tick)."""
        raise NotImplementedError

    def commands(self) -> Iterable[SystemCommand]:
        """This screen's commands for the palette (the app adds the global ones)."""
        return ()
