"""Checkpoints: the workspace snapshots the guard took, what each one changed since the
previous one, and what a rollback to it would throw away (computed off the UI thread: it runs
git over the workspace)."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from supervisor.tui.format import safe
from supervisor.tui.panels.base import Panel

if TYPE_CHECKING:
    from supervisor.tui.model import CheckpointInfo, SessionState


class CheckpointsPanel(Panel):
    ID = "checkpoints"
    TITLE = "Checkpoints"
    KEY = "c"
    HELP = "Workspace checkpoints and what a rollback to each would undo"
    DEFAULT_CSS: ClassVar[str] = """
    CheckpointsPanel OptionList { height: 1fr; }
    CheckpointsPanel #checkpoint-scroll { height: auto; max-height: 14;
        border-top: solid $panel; }
    CheckpointsPanel #checkpoint-detail { height: auto; padding: 0 1; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id)
        self._checkpoints: list[CheckpointInfo] = []
        self._shown: str | None = None

    def compose(self) -> ComposeResult:
        yield OptionList(id="checkpoints-list")
        with VerticalScroll(id="checkpoint-scroll"):
            yield Static(id="checkpoint-detail")

    def focus_target(self) -> OptionList:
        return self.query_one(OptionList)

    def update(self, state: "SessionState", now: float) -> None:
        options = self.query_one(OptionList)
        self._checkpoints = state.checkpoints
        if options.option_count > len(state.checkpoints):
            options.clear_options()
        if options.option_count == len(state.checkpoints):
            return
        new = []
        for cp in state.checkpoints[options.option_count:]:
            line = Text(no_wrap=True, end="", overflow="ellipsis")
            line.append(cp.checkpoint_id, style="bold")
            line.append(f"  at #{cp.at_seq}  {cp.files} files  ")
            line.append(cp.label)
            new.append(Option(line))
        options.add_options(new)
        if options.highlighted is None and options.option_count:
            options.highlighted = 0

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        message.stop()
        cp = self._checkpoints[message.option_index]
        self._shown = cp.checkpoint_id
        self.query_one("#checkpoint-detail", Static).update(_detail(cp, None, pending=True))
        self._since(cp)

    @work(thread=True, exclusive=True, group="checkpoint-files")
    def _since(self, cp: "CheckpointInfo") -> None:
        """Files changed since `cp` (git over the workspace: never on the UI thread)."""
        changed = self.app.changed_files(self.session_id, cp.checkpoint_id)  # type: ignore[attr-defined]
        self.app.call_from_thread(self._show_since, cp, changed)

    def _show_since(self, cp: "CheckpointInfo", changed: list[str] | None) -> None:
        if cp.checkpoint_id == self._shown:
            self.query_one("#checkpoint-detail", Static).update(_detail(cp, changed))

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.post_message(self.ShowInHistory(self._checkpoints[message.option_index].at_seq))


def _detail(cp: "CheckpointInfo", changed: list[str] | None, *, pending: bool = False) -> Text:
    detail = Text()
    detail.append(f"{cp.checkpoint_id}  commit {cp.commit[:12]}\n", style="bold")
    detail.append(f"{cp.label}\nat #{cp.at_seq}, {cp.files} files tracked\n")
    if cp.nested:  # what a rollback to it will not touch
        detail.append("not checkpointed (nested git repositories): ", style="dim")
        detail.append(", ".join(cp.nested) + "\n")
    if pending:
        detail.append("files changed since: looking…", style="dim")
    elif changed is None:
        detail.append("files changed since: unknown", style="dim")
    else:
        detail.append(f"{len(changed)} file(s) changed since:\n", style="bold")
        for name in changed[:200]:
            detail.append("  ")
            detail.append_text(safe(name, 200))
            detail.append("\n")
    return detail
