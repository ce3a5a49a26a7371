"""What screens, panels and widgets ask of the app: messages that go up, handled in one place.

State goes down (each screen is given the `DashboardView` and the session it shows), requests
come up as these messages: a view never writes a decision or opens another session's screen
itself. The app handles each message type in one handler; a decision above all is refused,
written, recorded in the model and announced only in `SupervisorApp.on_decision_requested`.
"""

from typing import TYPE_CHECKING

from textual.message import Message
from textual.message_pump import MessagePump

if TYPE_CHECKING:
    from supervisor.tui.screens.new_run import NewRun


class DecisionRequested(Message):
    """Write one decision for a session: an answer to `escalation_id`, or (without one) an
    operator command such as pause, quiet, replan. The app refuses it as the CLI would
    (`supervisor.operator.refusals`), or writes it and records it as sent."""

    def __init__(self, session_id: str, action: str, *, escalation_id: str | None = None,
                 text: str | None = None, checkpoint_id: str | None = None,
                 tasks: list[str] | None = None, detector: str | None = None,
                 calls: int | None = None, lift: bool = False, follow: bool = False,
                 reply_to: MessagePump | None = None) -> None:
        super().__init__()
        self.session_id = session_id
        self.action = action
        self.escalation_id = escalation_id
        self.text = text
        self.checkpoint_id = checkpoint_id
        self.tasks = tasks
        self.detector = detector
        self.calls = calls
        self.lift = lift
        self.follow = follow
        """The app says it was sent and then what became of it (applied, ignored, ...)."""
        self.reply_to = reply_to
        """Told the result (`DecisionResult`): the escalation prompt follows its own answer."""


class DecisionResult(Message, bubble=False):
    """What became of a `DecisionRequested` at once: its decision id, or None when it was
    refused or could not be written (the app said why)."""

    def __init__(self, request: DecisionRequested, decision_id: str | None) -> None:
        super().__init__()
        self.request = request
        self.decision_id = decision_id


class CommandRequested(Message):
    """The operator pressed a command's key (its kind's `command_key`) on a session: the app
    asks for what it needs (guidance text, a checkpoint, a confirmation), then requests the
    decision."""

    def __init__(self, session_id: str, action: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.action = action


class RunRequested(Message):
    """Start a run (`new`: what the new-run form asked, no session), or stop, merge or discard
    the run of a session (`supervisor.tui.runs`: the app confirms first)."""

    def __init__(self, action: str, session_id: str | None = None, *,
                 new_run: "NewRun | None" = None) -> None:
        super().__init__()
        self.action = action
        self.session_id = session_id
        self.new_run = new_run


class PruneRequested(Message):
    """Remove ended sessions from the store (`supervisor.tui.prune`: the app asks which, and
    confirms first)."""


class OpenSession(Message):
    """Show one session's screen."""

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id


class OpenEscalation(Message):
    """Show the prompt of one escalation."""

    def __init__(self, session_id: str, escalation_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.escalation_id = escalation_id
