"""Small modal screens: confirm, guidance text, checkpoint picker, help."""

from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from supervisor.store.base import Store
from supervisor.store.same_folder import described, sharing
from supervisor.store.summary import SessionSummary
from supervisor.tui.format import safe
from supervisor.tui.model import DashboardModel, SessionState
from supervisor.tui.widgets.checkpoint_detail import CheckpointDetail

_MODAL_CSS = """
{name} {{ align: center middle; }}
{name} > Vertical {{ width: 80%; max-width: 100; height: auto; max-height: 90%;
    border: thick $primary; background: $surface; padding: 1 2; }}
"""


class ConfirmScreen(ModalScreen[bool]):
    """Ask yes/no; `y` confirms, `n` or escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes", show=True),
        Binding("n", "answer(False)", "No", show=True),
        Binding("escape", "answer(False)", "Cancel", show=False),
    ]
    DELIBERATE_KEYS = frozenset({"y"})
    """`y` in a burst of keys never confirms (`supervisor.tui.deliberate`)."""
    DEFAULT_CSS = _MODAL_CSS.format(name="ConfirmScreen")

    def __init__(self, question: Text) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self.question)
            yield Label("y: yes (a y typed in a burst of keys is ignored)   n/esc: no",
                        classes="hint")
        yield Footer()

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class GuidanceScreen(ModalScreen[str | None]):
    """A text box for guidance; ctrl+s sends, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # not a priority binding: it must reach the screen after the keys typed before it
        Binding("ctrl+s", "send", "Send", show=True),
        Binding("escape", "cancel", "Cancel", show=True),
    ]
    DELIBERATE_KEYS = frozenset({"ctrl+s"})
    DEFAULT_CSS = _MODAL_CSS.format(name="GuidanceScreen") + """
    GuidanceScreen TextArea { height: 8; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id

    def compose(self) -> ComposeResult:
        with Vertical():
            title = Text("Guidance for ", style="bold")
            title.append_text(safe(self.session_id, 60, "bold"))
            yield Static(title)
            yield TextArea(id="guidance-text", soft_wrap=True)
            with Vertical(classes="buttons"):
                yield Button("Send (ctrl+s)", id="send", variant="primary")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_send(self) -> None:
        text = self.query_one(TextArea).text.strip()
        if not text:
            self.notify("write some guidance first", severity="warning")
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, _message: Button.Pressed) -> None:
        self.action_send()


class CheckpointPicker(ModalScreen[str | None]):
    """Pick a checkpoint to roll back to; shows what each changed and what a rollback to it
    throws away (git in a worker, per highlight), `v` views the diff of that."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", show=True),
        Binding("v", "diff", "View diff", show=True),
    ]
    DELIBERATE_KEYS = frozenset({"enter"})
    """`enter` rolls back: never from a burst of keys (`supervisor.tui.deliberate`)."""
    DEFAULT_CSS = _MODAL_CSS.format(name="CheckpointPicker") + """
    CheckpointPicker OptionList { height: auto; max-height: 10; }
    #changed { height: auto; max-height: 16; }
    """

    def __init__(self, store: Store, state: SessionState,
                 others: list[SessionSummary] | None = None, now: float = 0.0) -> None:
        super().__init__()
        self.store = store
        self.state = state
        self.others = others or []
        """Sessions not ended that work in its folder: a rollback puts back their files too."""
        self.now = now
        self.session_id = state.session_id
        # one option per id (options need unique ids): a later checkpoint with the same id
        # (a hostile line, or the session's checkpoint repository made anew) is the one kept
        unique = {cp.checkpoint_id: cp for cp in state.checkpoints}
        self.checkpoints = list(reversed(unique.values()))
        """Newest first."""

    def compose(self) -> ComposeResult:
        from supervisor.tui.panels.checkpoints import checkpoint_line

        with Vertical():
            title = Text("Roll back ", style="bold")
            title.append_text(safe(self.session_id, 60, "bold"))
            title.append(" to which checkpoint? enter rolls back: the files it throws away "
                         "(below) are gone")
            yield Static(title)
            if self.others:  # two agents in one repository: the other's work goes too
                warning = Text(f"{len(self.others)} other session(s) not ended work in this "
                               "folder, and a rollback puts back their files too: ",
                               style="bold red")
                warning.append_text(safe(described(self.others, self.now), 400))
                yield Static(warning, id="shared-folder")
            yield OptionList(*(Option(checkpoint_line(cp), id=cp.checkpoint_id)
                               for cp in self.checkpoints), id="checkpoint-options")
            with VerticalScroll(id="changed"):
                yield CheckpointDetail(self.store, self.state, id="changed-files")
        yield Footer()

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.focus()
        if options.option_count:
            options.highlighted = 0

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        self.query_one(CheckpointDetail).show(self.checkpoints[message.option_index])

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.dismiss(message.option.id)

    def action_diff(self) -> None:
        from supervisor.tui.screens.diff import DiffScreen

        shown = self.query_one(CheckpointDetail).checkpoint
        if shown is not None:
            self.app.push_screen(DiffScreen(self.store, self.state, shown.checkpoint_id))

    def action_cancel(self) -> None:
        self.dismiss(None)


async def pick_checkpoint(app: App[Any], store: Store, model: DashboardModel,
                          session_id: str, now: float) -> str | None:
    """Ask which checkpoint of `session_id` to roll back to (None: there is none, or the
    operator cancelled); from a worker, as every `push_screen_wait`."""
    state = model.sessions[session_id]
    if not state.checkpoints:
        app.notify("this session has no checkpoints", severity="warning")
        return None
    others = sharing(state.summary, (st.summary for st in model.sessions.values()))
    return await app.push_screen_wait(CheckpointPicker(store, state, others, now))


class HelpScreen(ModalScreen[None]):
    """Every key of every screen, built from the bindings themselves."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", show=True),
        Binding("question_mark", "close", "Close", show=False),
        Binding("q", "close", "Close", show=False),
    ]
    DEFAULT_CSS = _MODAL_CSS.format(name="HelpScreen") + """
    HelpScreen VerticalScroll { height: auto; max-height: 100%; }
    """

    TWO_COLUMNS_FROM = 110
    """Terminal columns from which the sections are shown in two columns."""

    def __init__(self, sections: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        # two columns of sections where they fit; below TWO_COLUMNS_FROM one (it scrolls): in
        # two, an 80-column terminal left a description a few letters beside its key
        count = 2 if self.app.size.width >= self.TWO_COLUMNS_FROM else 1
        columns: list[list[RenderableType]] = [[] for _ in range(count)]
        half = sum(len(keys) + 2 for _, keys in self.sections) / count
        used = 0
        for title, keys in self.sections:
            column = columns[min(int(used // half), count - 1)] if half else columns[0]
            used += len(keys) + 2
            # keys and descriptions in columns of their own: a description too long for its
            # width wraps beside its key, not back under the key column
            width = max((len(key) for key, _ in keys), default=1)
            table = Table.grid(padding=(0, 2))
            table.add_column(no_wrap=True, min_width=width + 2, style="bold")
            table.add_column(ratio=1)
            for key, description in keys:
                table.add_row(Text(f"  {key}"), Text(description))
            column += [Text(title, style="bold underline"), table, Text("")]
        grid = Table.grid(padding=(0, 3))
        for _ in columns:
            grid.add_column(ratio=1)
        grid.add_row(*(Group(*column) for column in columns))
        with Vertical(), VerticalScroll():
            yield Static(grid)
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)
