"""Overview: a gauge per limit (in people's units), activity sparklines, the session's facts
(how it ended among them) and the effective policy as TOML, as `supervisor policy show` prints
it."""

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Label, Sparkline, Static

from supervisor.tui.format import gauge_text, safe, safe_block, status_text
from supervisor.tui.panels.base import Panel

if TYPE_CHECKING:
    from supervisor.tui.model import SessionState


class OverviewPanel(Panel):
    ID = "overview"
    TITLE = "Overview"
    KEY = "o"
    HELP = "Limits, activity, the session's facts and its effective policy"
    DEFAULT_CSS: ClassVar[str] = """
    OverviewPanel .spark-label { height: 1; color: $text-muted; }
    OverviewPanel Sparkline { height: 2; margin: 0 0 1 0; }
    OverviewPanel #spark-errors > .sparkline--max-color { color: $error; }
    OverviewPanel #spark-errors > .sparkline--min-color { color: $error 40%; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="gauges")
            yield Label("tool calls / min", classes="spark-label")
            yield Sparkline([], id="spark-calls")
            yield Label("errors / min", classes="spark-label")
            yield Sparkline([], id="spark-errors")
            yield Static(id="meta")

    def focus_target(self) -> VerticalScroll:
        return self.query_one(VerticalScroll)

    def update(self, state: "SessionState", now: float) -> None:
        gauges = state.gauges()
        lines = [Text("Limits", style="bold")]
        lines += [gauge_text(g.name, g.value, g.limit, g.action) for g in gauges] or [
            Text("no limits reported", style="dim")
        ]
        if not state.usage_record:
            lines.append(Text("no usage record: this agent's tokens and cost are not read",
                              style="dim"))
        self.query_one("#gauges", Static).update(Text("\n").join(lines))
        s = state.summary
        end = now if s.end_status is None else (s.last_ts or now)
        calls, errors = state.rate_series(end)
        self.query_one("#spark-calls", Sparkline).data = calls
        self.query_one("#spark-errors", Sparkline).data = errors
        silent = self.view.model.unsupervised(state.session_id, now)
        self.query_one("#meta", Static).update(_meta(state, self.view.clock_format, silent))


def _meta(state: "SessionState", clock: Callable[[float], str], silent: str | None) -> Text:
    s = state.summary
    meta = Text()
    if silent is not None:  # first: the facts below are only what the hooks reported
        meta.append_text(status_text("unsupervised"))
        meta.append("\n")
        meta.append_text(safe_block(silent, 400))
        meta.append("\n\n")
    meta.append("Session\n", style="bold")
    ended = s.ended_as()
    for label, value in (
        ("agent", s.agent), ("task", s.task), ("cwd", s.cwd), ("pid", s.pid),
        ("heartbeat", f"every {s.heartbeat_s:g} s" if s.heartbeat_s else "none (hook-driven)"),
        ("started", clock(s.started_ts) if s.started_ts else "-"),
        ("ended", f"{ended}: {s.end_reason}" if ended and s.end_reason else ended or "-"),
    ):
        meta.append(f"{label:<10}", style="dim")
        meta.append_text(safe(value if value is not None else "-", 200))
        meta.append("\n")
    if state.quiets:
        meta.append("\nQuieted by an operator\n", style="bold")
        for quiet in state.quiets:
            meta.append_text(safe(quiet, 200))
            meta.append("\n")
    meta.append("\nEffective policy\n", style="bold")
    if state.policy:
        from supervisor.engine.policy_file import toml_text

        meta.append_text(safe_block(toml_text(state.policy), limit=20000))
    else:
        meta.append("not reported", style="dim")
    return meta
