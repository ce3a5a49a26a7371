"""Checkpoints: the workspace snapshots the guard took, what each changed since the previous
one (from its event), what a rollback to it would throw away (git, in a worker), and `v` to
view the diff of that (`d` is Detections everywhere on the session screen)."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from supervisor.tui.panels.base import Panel
from supervisor.tui.view import DashboardView
from supervisor.tui.widgets.checkpoint_detail import CheckpointDetail

if TYPE_CHECKING:
    from supervisor.tui.model import CheckpointInfo, SessionState


def checkpoint_line(cp: "CheckpointInfo") -> Text:
    """`cp-3  #42  +1 ~2 -0  label`: what the checkpoint changed since the previous one."""
    line = Text(no_wrap=True, end="", overflow="ellipsis")
    line.append(cp.checkpoint_id, style="bold")
    line.append(f"  #{cp.at_seq}  ")
    stat = cp.diffstat
    if stat is not None and stat.since is None:
        line.append(f"first, {stat.added} files", style="dim")
    elif stat is not None:
        line.append(f"+{stat.added} ~{stat.modified} -{stat.deleted}", style="dim")
    elif cp.changed_files is not None:
        line.append(f"{len(cp.changed_files)} changed", style="dim")
    else:
        line.append(f"{cp.files} files", style="dim")
    line.append("  ")
    line.append(cp.label)  # cleaned by the model
    return line


class CheckpointsPanel(Panel):
    ID = "checkpoints"
    TITLE = "Checkpoints"
    KEY = "c"
    HELP = ("Workspace checkpoints: what each changed, what a rollback to it throws away "
            "(v: view the diff)")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "diff", "View diff", show=True),
    ]
    DEFAULT_CSS: ClassVar[str] = """
    CheckpointsPanel OptionList { height: auto; max-height: 40%; }
    CheckpointsPanel #checkpoint-scroll { height: 1fr; border-top: solid $panel; }
    CheckpointsPanel CheckpointDetail { height: auto; padding: 0 1; }
    """

    def __init__(self, view: DashboardView, state: "SessionState") -> None:
        super().__init__(view, state)
        self._checkpoints: list[CheckpointInfo] = []

    def compose(self) -> ComposeResult:
        yield OptionList(id="checkpoints-list")
        with VerticalScroll(id="checkpoint-scroll"):
            yield CheckpointDetail(self.view.store, self.state)

    def focus_target(self) -> OptionList:
        return self.query_one(OptionList)

    def update(self, state: "SessionState", now: float) -> None:
        options = self.query_one(OptionList)
        self._checkpoints = state.checkpoints
        if options.option_count > len(state.checkpoints):
            options.clear_options()
        if options.option_count == len(state.checkpoints):
            return
        options.add_options(
            Option(checkpoint_line(cp)) for cp in state.checkpoints[options.option_count:]
        )
        if options.highlighted is None and options.option_count:
            options.highlighted = 0

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        message.stop()
        self.query_one(CheckpointDetail).show(self._checkpoints[message.option_index])

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        self.post_message(self.ShowInHistory(self._checkpoints[message.option_index].at_seq))

    def action_diff(self) -> None:
        from supervisor.tui.screens.diff import DiffScreen

        shown = self.query_one(CheckpointDetail).checkpoint
        if shown is not None:
            self.app.push_screen(DiffScreen(self.view.store, self.state, shown.checkpoint_id))
