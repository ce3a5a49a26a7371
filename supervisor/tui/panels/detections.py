"""Detections: each finding of the engine with its evidence, each evidence call with its result
(read in a worker); `enter` shows the evidence in the history (the rows highlighted)."""

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from supervisor.tui.event_detail import EvidenceStep, evidence_steps
from supervisor.tui.format import evidence_lines, level_text
from supervisor.tui.panels.base import Panel
from supervisor.tui.view import DashboardView

if TYPE_CHECKING:
    from supervisor.tui.history import HistoryStore
    from supervisor.tui.model import DetectionInfo, SessionState

HINT = "\nenter: show the evidence in the history"
PANEL_EVIDENCE = 6
"""Evidence steps shown under a detection here (all of them: `enter` on its history row)."""


class DetectionsPanel(Panel):
    ID = "detections"
    TITLE = "Detections"
    KEY = "d"
    HELP = "What the engine found, with its evidence (enter: show it in the history)"
    DEFAULT_CSS: ClassVar[str] = """
    DetectionsPanel OptionList { height: 1fr; }
    DetectionsPanel #detection-detail { height: auto; max-height: 16; padding: 0 1;
        border-top: solid $panel; }
    """

    def __init__(self, view: DashboardView, state: "SessionState") -> None:
        super().__init__(view, state)
        self._detections: list[DetectionInfo] = []
        self._history: HistoryStore | None = None

    def compose(self) -> ComposeResult:
        yield OptionList(id="detections")
        yield Static(id="detection-detail")

    def focus_target(self) -> OptionList:
        return self.query_one(OptionList)

    def update(self, state: "SessionState", now: float) -> None:
        options = self.query_one(OptionList)
        self._detections = state.detections
        self._history = state.history
        if options.option_count > len(state.detections):  # the events file was reset
            options.clear_options()
        if options.option_count == len(state.detections):
            return
        new = []
        for d in state.detections[options.option_count:]:
            line = Text(no_wrap=True, end="", overflow="ellipsis")
            line.append(f"#{d.seq:<6} ", style="dim")
            line.append_text(level_text(d.level))
            line.append("  ")
            line.append(d.detector, style="bold")
            if d.confidence:
                line.append(f" ({d.confidence})", style="dim")
            line.append("  ")
            line.append(d.message)  # cleaned by the model
            new.append(Option(line))
        options.add_options(new)
        if options.highlighted is None and options.option_count:
            options.highlighted = 0

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        message.stop()
        d = self._detections[message.option_index]
        detail = Text()
        detail.append(d.detector, style="bold")
        detail.append(f"  level {d.level}  #{d.seq}")
        detail.append(f"  {d.confidence} evidence\n" if d.confidence else "\n")
        detail.append("signature ", style="dim")
        detail.append(d.signature + "\n")
        detail.append("evidence  ", style="dim")
        detail.append(" ".join(f"#{n}" for n in d.evidence) + "\n")
        detail.append(d.message)
        shown = detail.copy()
        shown.append(HINT, style="dim")
        self.query_one("#detection-detail", Static).update(shown)
        if self._history is not None and d.evidence:
            self._load_evidence(self._history, detail, list(d.evidence))

    @work(thread=True, exclusive=True, group="detection-evidence")
    def _load_evidence(self, history: "HistoryStore", head: Text, seqs: list[int]) -> None:
        """In a worker: the evidence calls and their results are read back from the log."""
        steps = evidence_steps(history, seqs, limit=PANEL_EVIDENCE)
        self.app.call_from_thread(self._show_evidence, head, steps, len(seqs))

    def _show_evidence(self, head: Text, steps: list[EvidenceStep], count: int) -> None:
        detail = head.copy()
        detail.append("\n")
        for line in evidence_lines(steps):
            detail.append("\n")
            detail.append_text(line)
        if count > len(steps):
            detail.append(f"\n  … {count - len(steps)} more (enter on its history row)",
                          style="dim")
        detail.append(HINT, style="dim")
        self.query_one("#detection-detail", Static).update(detail)

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        message.stop()
        d = self._detections[message.option_index]
        target = min(d.evidence) if d.evidence else d.seq
        self.post_message(self.ShowInHistory(target, set(d.evidence) | {d.seq}))
