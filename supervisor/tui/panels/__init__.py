"""The session screen's panels, listed once: tabs, keys, palette and help all come from here."""

from supervisor.tui.panels.base import Panel
from supervisor.tui.panels.checkpoints import CheckpointsPanel
from supervisor.tui.panels.detections import DetectionsPanel
from supervisor.tui.panels.memory import MemoryPanel
from supervisor.tui.panels.overview import OverviewPanel
from supervisor.tui.panels.plan import PlanPanel
from supervisor.tui.panels.problems import ProblemsPanel
from supervisor.tui.panels.terminal import TerminalPanel

PANELS: tuple[type[Panel], ...] = (
    OverviewPanel, DetectionsPanel, CheckpointsPanel, ProblemsPanel,
    PlanPanel, TerminalPanel, MemoryPanel,
)
"""In tab order; the first is shown when a session opens."""

__all__ = ["PANELS", "Panel"]
