"""What every panel of the session screen's side bar is: a widget with a title, a key, and
`update(state, now)`.

The session screen composes one tab per entry of `supervisor.tui.panels.PANELS` and derives its
key bindings, the command palette's "Show ..." commands and the help screen's lines from that
list, so a new panel is one new module and one registry line. It makes a panel only when its
tab is first shown (the first one with the screen), so `title` is a class method: a tab says
its count before its panel exists. A panel reads only the session's
`SessionState` (the model layer, never paths) and renders agent text through
`supervisor.safetext` (via `supervisor.tui.format`). Anything slow (git, a big file) runs in a
worker that posts its result back; a panel asks the screen to show history rows by posting
`ShowInHistory`, and the app to write a decision by posting `DecisionRequested`
(`supervisor.tui.messages`); it is given the `DashboardView` and the session it shows.
"""

from typing import ClassVar

from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget

from supervisor.tui.model import SessionState
from supervisor.tui.view import DashboardView


class Panel(Vertical):
    """One tab of the side bar. Subclasses set the four class attributes and `update`."""

    ID: ClassVar[str]
    """Identifier: the tab's id, the argument of the screen's `panel` action."""
    TITLE: ClassVar[str]
    KEY: ClassVar[str]
    """The key that shows this panel on the session screen."""
    HELP: ClassVar[str]
    """One line for the palette and the help screen."""

    class ShowInHistory(Message):
        """Move the history's cursor to `seq` and highlight `highlight` (evidence)."""

        def __init__(self, seq: int, highlight: set[int] | None = None) -> None:
            super().__init__()
            self.seq = seq
            self.highlight = highlight

    def __init__(self, view: DashboardView, state: SessionState) -> None:
        super().__init__(id=f"panel-{self.ID}")
        self.view = view
        self.state = state
        """The session shown (the model's own object, as `update` is given it)."""
        self.session_id = state.session_id

    @classmethod
    def title(cls, state: "SessionState") -> str:
        """The tab's label (it may carry a count)."""
        return cls.TITLE

    def update(self, state: "SessionState", now: float) -> None:
        """Show `state` at time `now` (called on the app's tick when the session changed)."""
        raise NotImplementedError

    def focus_target(self) -> Widget:
        """The widget that takes the focus when the panel is shown by its key."""
        return self
