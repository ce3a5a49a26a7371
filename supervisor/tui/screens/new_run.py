"""The new-run form (`n` on the sessions screen): what `supervisor run` takes, as fields.

An agent (one of the names `supervisor run` knows, suggested as you type) or a shell command,
a session name, the folder it starts in and whether it gets a git worktree of its own. The form
only collects and checks what was typed; `supervisor.tui.runs` starts the run through
`supervisor.host.launch.start_run`, the code of `supervisor run` itself, which refuses what it
cannot start (an agent not installed, a folder outside git for a worktree, a name taken).
`ctrl+s` or `enter` starts (never from a burst of keys: `DELIBERATE_KEYS`), escape cancels.

The form opens as `n` is handled, and the operator types on at once: the keys that come before
its fields exist and the first has the focus are handed to it by the app (`take_early_key`) and
played in order once it is mounted — a `tab` moves to the next field, characters go into the
field focused then — so a fast `n`, tab, `bash` puts `bash` in the command field, not in the
agent field nor into the sessions table. `enter` and `ctrl+s` among them start nothing: a run is
started from a form that was seen.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Checkbox, Footer, Input, Label, Static

from supervisor.tui.screens.modals import _MODAL_CSS


@dataclass(frozen=True)
class NewRun:
    """What the operator asked to start (as `supervisor run` would take it)."""

    agent: str | None
    cmd: str | None
    name: str | None
    folder: Path
    worktree: bool


class NewRunScreen(ModalScreen[NewRun | None]):
    """Ask what to run; dismissed with a `NewRun`, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: the focus moves as the app reads the key, before the next key is given to
        # a field (as a bubbling binding, a character typed right after tab could overtake it
        # on a busy machine and land in the field being left)
        Binding("tab", "app.focus_next", "Next field", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", "Previous field", show=False,
                priority=True),
        Binding("ctrl+s", "start", "Start", show=True),
        Binding("escape", "cancel", "Cancel", show=True),
    ]
    AUTO_FOCUS = "#new-agent"
    DELIBERATE_KEYS = frozenset({"ctrl+s", "enter"})
    """Starting an agent is never done by a burst of keys (`supervisor.tui.deliberate`)."""
    DEFAULT_CSS = _MODAL_CSS.format(name="NewRunScreen") + """
    NewRunScreen Label { margin-top: 1; }
    NewRunScreen #new-run-problem { color: $error; height: auto; }
    """

    def __init__(self, agents: list[str], folder: Path) -> None:
        super().__init__()
        self.agents = agents
        self.folder = folder
        self._early: list[events.Key] | None = []
        """Keys that came before the form could take them, in order; None once mounted."""

    def take_early_key(self, event: events.Key) -> bool:
        """Keep a key that came before the form was mounted (True: kept, played on mount)."""
        if self._early is None:
            return False
        self._early.append(event)
        return True

    def take_stray_key(self, event: events.Key) -> bool:
        """A key typed right after `n` that was on its way to the sessions screen when the
        form opened (it comes back up to the app, which hands it here): kept until the form is
        mounted, else played now. True: taken."""
        if self.take_early_key(event):
            return True
        return self._play(event)

    def on_mount(self) -> None:
        """The first field has the focus now (`AUTO_FOCUS`): play the keys that came early."""
        early, self._early = self._early or [], None
        for event in early:
            if self._play(event) and event.key == "escape":
                return

    def _play(self, event: events.Key) -> bool:
        """Do what `event` does in the form (True), or nothing: `enter` and `ctrl+s` start a
        run only when pressed in a form that was seen."""
        if event.key in ("tab", "shift+tab"):
            self.focus_next() if event.key == "tab" else self.focus_previous()
        elif event.key == "escape":
            self.action_cancel()
        elif isinstance(self.focused, Checkbox) and event.key == "space":
            self.focused.toggle()
        elif isinstance(self.focused, Input) and event.is_printable and event.character:
            self.focused.insert_text_at_cursor(event.character)
        else:
            return False
        return True

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Start an agent (as supervisor run)", style="bold"))
            yield Label(f"Agent ({', '.join(self.agents)})")
            yield Input(id="new-agent", placeholder="claude, codex, gemini, …",
                        suggester=SuggestFromList(self.agents, case_sensitive=False))
            yield Label("or a shell command (instead of an agent)")
            yield Input(id="new-cmd", placeholder="e.g. aider --yes, or a script")
            yield Label("Session name (empty: AGENT-time-xxxx)")
            yield Input(id="new-name")
            yield Label("Folder it starts in")
            yield Input(str(self.folder), id="new-folder")
            yield Checkbox("in a new git worktree of its own (branch run/NAME)",
                           id="new-worktree")
            yield Static("", id="new-run-problem")
            yield Static("ctrl+s or enter: start   tab: next field   esc: cancel",
                         classes="hint")
        yield Footer()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        self.action_start()

    def action_start(self) -> None:
        agent = self.query_one("#new-agent", Input).value.strip() or None
        cmd = self.query_one("#new-cmd", Input).value.strip() or None
        name = self.query_one("#new-name", Input).value.strip() or None
        folder = Path(self.query_one("#new-folder", Input).value.strip() or ".").expanduser()
        problem = None
        if (agent is None) == (cmd is None):
            problem = "name an agent or give a command (one of the two)"
        elif agent is not None and agent not in self.agents:
            problem = f"no agent {agent!r}: one of {', '.join(self.agents)}"
        elif not folder.is_dir():
            problem = f"{folder} is not a folder"
        if problem:
            self.query_one("#new-run-problem", Static).update(Text(problem))
            return
        self.dismiss(NewRun(agent, cmd, name, folder.absolute(),
                            self.query_one("#new-worktree", Checkbox).value))

    def action_cancel(self) -> None:
        self.dismiss(None)
