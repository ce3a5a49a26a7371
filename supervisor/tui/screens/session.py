"""The Session screen: history, detections, level, gauges, rates, checkpoints, policy, problems."""

import json
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Input,
    Label,
    OptionList,
    Sparkline,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.option_list import Option

from supervisor.store.render import ago
from supervisor.tui.format import gauge_text, level_text, safe, safe_block, status_text
from supervisor.tui.widgets.history_view import HistoryView, format_clock

if TYPE_CHECKING:
    from supervisor.tui.app import SupervisorApp


class SessionScreen(Screen[None]):
    """Everything about one session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", show=True),
        Binding("slash", "search", "Search", show=True),
        Binding("f", "filter", "Filter", show=True),
        Binding("n", "next_match", "Next match", show=False),
        Binding("N", "previous_match", "Prev match", show=False),
        Binding("e", "escalation", "Answer", show=True),
        Binding("d", "tab('detections')", "Detections", show=True),
        Binding("c", "tab('checkpoints')", "Checkpoints", show=False),
        Binding("o", "tab('overview')", "Overview", show=False),
        Binding("p", "tab('problems')", "Problems", show=True),
        Binding("P", "command('pause')", "Pause", show=True),
        Binding("G", "command('guidance')", "Guidance", show=True),
        Binding("B", "command('rollback')", "Rollback", show=False),
        Binding("R", "command('reset')", "Reset", show=False),
        Binding("X", "command('abort')", "Abort", show=False),
        Binding("end", "follow", "Follow", show=False),
    ]
    DEFAULT_CSS = """
    SessionScreen { layout: vertical; }
    #session-head { height: 2; padding: 0 1; background: $panel; }
    #session-body { height: 1fr; }
    #history { width: 3fr; min-width: 40; }
    #side { width: 2fr; min-width: 30; }
    #find { dock: bottom; display: none; }
    #find.-shown { display: block; }
    .spark-label { height: 1; color: $text-muted; }
    Sparkline { height: 2; margin: 0 0 1 0; }
    #spark-errors > .sparkline--max-color { color: $error; }
    #spark-errors > .sparkline--min-color { color: $error 40%; }
    #detections, #checkpoints-list { height: 1fr; }
    #detection-detail, #checkpoint-detail { height: auto; max-height: 12; padding: 0 1;
        border-top: solid $panel; }
    #problems-table { height: 1fr; }
    #follow-state { height: 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.ready = False
        """Composed and mounted: the app's tick may redraw it."""
        self.session_id = session_id
        self._version = -1
        self._find_mode = "search"
        self._last_search = ""
        self._counts = (-1, -1, -1)

    @property
    def sv(self) -> "SupervisorApp":
        return self.app  # type: ignore[return-value]

    @property
    def state(self) -> Any:
        return self.sv.model.sessions[self.session_id]

    def compose(self) -> ComposeResult:
        yield Static(id="session-head")
        with Horizontal(id="session-body"):
            with Vertical(id="history"):
                yield HistoryView(self.state.history, clock_format=self.sv.clock_format,
                                  id="history-view")
                yield Label("", id="follow-state")
            with TabbedContent(id="side", initial="overview"):
                with TabPane("Overview", id="overview"), VerticalScroll():
                    yield Static(id="gauges")
                    yield Label("tool calls / min", classes="spark-label")
                    yield Sparkline([], id="spark-calls")
                    yield Label("errors / min", classes="spark-label")
                    yield Sparkline([], id="spark-errors")
                    yield Static(id="meta")
                with TabPane("Detections", id="detections-tab"):
                    yield OptionList(id="detections")
                    yield Static(id="detection-detail")
                with TabPane("Checkpoints", id="checkpoints-tab"):
                    yield OptionList(id="checkpoints-list")
                    yield Static(id="checkpoint-detail")
                with TabPane("Problems", id="problems-tab"):
                    yield DataTable(id="problems-table", cursor_type="row")
        yield Input(id="find")
        yield Footer()

    def on_mount(self) -> None:
        problems = self.query_one("#problems-table", DataTable)
        problems.add_columns("file", "offset", "reason", "line")
        self.refresh_view()
        self.query_one(HistoryView).focus()
        self.ready = True

    def refresh_view(self) -> None:
        """Called on the app's tick: redraw what changed since the last version."""
        st = self.state
        now = self.sv.clock()
        history = self.query_one(HistoryView)
        if history.store is not st.history:  # the file was reset
            history.set_store(st.history)
        history.sync()
        follow = "following live" if history.follow else "scrolled (end: follow live)"
        self.query_one("#follow-state", Label).update(
            f"{len(st.history)} events · {follow}"
        )
        self._head(now)
        if st.version == self._version:
            return
        self._version = st.version
        self._overview(now)
        counts = (len(st.detections), len(st.checkpoints), len(st.bad_lines))
        if counts != self._counts:
            self._lists(counts)
            self._counts = counts

    def _head(self, now: float) -> None:
        st = self.state
        s = st.summary
        head = Text(no_wrap=True, end="")
        head.append_text(safe(self.session_id, 40, "bold"))
        head.append("  ")
        head.append_text(
            Text("folder vanished", style="bold red") if st.gone
            else status_text(self.sv.model.status(self.session_id, now))
        )
        head.append("  level ")
        head.append_text(level_text(s.level))
        head.append(f"  events {s.events}  errors {s.errors}  bad lines {len(st.bad_lines)}")
        head.append(f"  last {ago(s.last_seen_ts, now)}", style="dim")
        second = Text(no_wrap=True, end="")
        second.append("agent ", style="dim")
        second.append_text(safe(s.agent or "-", 24))
        second.append("  task ", style="dim")
        second.append_text(safe(s.task or "-", 80))
        if s.pending:
            second.append(f"   {len(s.pending)} escalation(s) pending: press e", style="bold red")
        self.query_one("#session-head", Static).update(Text("\n").join([head, second]))

    def _overview(self, now: float) -> None:
        st = self.state
        gauges = st.gauges()
        lines = [Text("Limits", style="bold")]
        lines += [gauge_text(g.name, g.value, g.limit, g.action) for g in gauges] or [
            Text("no limits reported", style="dim")
        ]
        self.query_one("#gauges", Static).update(Text("\n").join(lines))
        end = now if st.summary.end_status is None else (st.summary.last_ts or now)
        calls, errors = st.rate_series(end)
        self.query_one("#spark-calls", Sparkline).data = calls
        self.query_one("#spark-errors", Sparkline).data = errors
        s = st.summary
        meta = Text()
        meta.append("Session\n", style="bold")
        for label, value in (
            ("agent", s.agent), ("task", s.task), ("cwd", s.cwd), ("pid", s.pid),
            ("heartbeat", f"{s.heartbeat_s:g}s" if s.heartbeat_s else "none (hook-driven)"),
            ("started", format_clock(s.started_ts) if s.started_ts else "-"),
            ("ended", f"{s.end_status} {s.end_reason or ''}" if s.end_status else "-"),
        ):
            meta.append(f"{label:<10}", style="dim")
            meta.append_text(safe(value if value is not None else "-", 200))
            meta.append("\n")
        meta.append("\nEffective policy\n", style="bold")
        if st.policy:
            meta.append_text(safe_block(json.dumps(st.policy, indent=2, ensure_ascii=False)))
        else:
            meta.append("not reported", style="dim")
        self.query_one("#meta", Static).update(meta)

    def _lists(self, counts: tuple[int, int, int]) -> None:
        st = self.state
        if counts[0] != self._counts[0]:
            options = self.query_one("#detections", OptionList)
            if options.option_count > len(st.detections):  # the events file was reset
                options.clear_options()
            new = []
            for i, d in enumerate(st.detections[options.option_count:], options.option_count):
                line = Text(no_wrap=True, end="")
                line.append(f"#{d.seq:<6} ", style="dim")
                line.append_text(level_text(d.level))
                line.append("  ")
                line.append(d.detector, style="bold")
                line.append("  ")
                line.append(d.message)
                new.append(Option(line, id=f"det-{i}"))
            options.add_options(new)
            if options.highlighted is None and options.option_count:
                options.highlighted = 0
        if counts[1] != self._counts[1]:
            options = self.query_one("#checkpoints-list", OptionList)
            if options.option_count > len(st.checkpoints):
                options.clear_options()
            new = []
            for i, cp in enumerate(st.checkpoints[options.option_count:], options.option_count):
                line = Text(no_wrap=True, end="")
                line.append(f"{cp.checkpoint_id}", style="bold")
                line.append(f"  at #{cp.at_seq}  {cp.files} files  ")
                line.append(cp.label)
                new.append(Option(line, id=f"cp-{i}"))
            options.add_options(new)
            if options.highlighted is None and options.option_count:
                options.highlighted = 0
        if counts[2] != self._counts[2]:
            table = self.query_one("#problems-table", DataTable)
            if table.row_count > len(st.bad_lines):
                table.clear()
            table.add_rows(
                (bad.file, "-" if bad.offset is None else str(bad.offset), Text(bad.reason),
                 Text(bad.preview, no_wrap=True))
                for bad in st.bad_lines[table.row_count:]
            )
            tab = self.query_one(TabbedContent)
            tab.get_tab("problems-tab").label = f"Problems ({len(st.bad_lines)})"

    # -- events ------------------------------------------------------------------------------

    def on_option_list_option_highlighted(self, message: OptionList.OptionHighlighted) -> None:
        self._show_option(message.option.id or "", jump=False)

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self._show_option(message.option.id or "", jump=True)

    def _show_option(self, oid: str, *, jump: bool) -> None:
        st = self.state
        if oid.startswith("det-"):
            d = st.detections[int(oid[4:])]
            detail = Text()
            detail.append(f"{d.detector}", style="bold")
            detail.append(f"  level {d.level}  seq {d.seq}\n")
            detail.append("signature ", style="dim")
            detail.append(d.signature + "\n")
            detail.append("evidence  ", style="dim")
            detail.append(", ".join(f"#{n}" for n in d.evidence) + "\n")
            detail.append(d.message)
            detail.append("\nenter: jump to the evidence", style="dim")
            self.query_one("#detection-detail", Static).update(detail)
            if jump:
                history = self.query_one(HistoryView)
                target = min(d.evidence) if d.evidence else d.seq
                history.jump_to_seq(target, set(d.evidence) | {d.seq})
                history.focus()
        elif oid.startswith("cp-"):
            cp = st.checkpoints[int(oid[3:])]
            detail = Text()
            detail.append(f"{cp.checkpoint_id}  commit {cp.commit[:12]}\n", style="bold")
            detail.append(f"{cp.label}\nat seq {cp.at_seq}, {cp.files} files tracked\n")
            changed = self.sv.changed_files(self.session_id, cp.checkpoint_id)
            if changed is None:
                detail.append("files changed since: unknown", style="dim")
            else:
                detail.append(f"{len(changed)} file(s) changed since:\n", style="bold")
                for name in changed[:30]:
                    detail.append(f"  {name}\n")
            self.query_one("#checkpoint-detail", Static).update(detail)
            if jump:
                self.query_one(HistoryView).jump_to_seq(cp.at_seq)

    def action_back(self) -> None:
        box = self.query_one("#find", Input)
        if box.has_class("-shown"):
            box.remove_class("-shown")
            self.query_one(HistoryView).focus()
            return
        self.app.pop_screen()

    def action_tab(self, name: str) -> None:
        tab = {"overview": "overview", "detections": "detections-tab",
               "checkpoints": "checkpoints-tab", "problems": "problems-tab"}[name]
        self.query_one(TabbedContent).active = tab
        target = {"detections-tab": "#detections", "checkpoints-tab": "#checkpoints-list",
                  "problems-tab": "#problems-table"}.get(tab)
        if target:
            self.query_one(target).focus()

    def action_search(self) -> None:
        self._open_find("search", "search history (enter: next match, n/N later)…")

    def action_filter(self) -> None:
        self._open_find("filter", "filter history: show only matching lines (empty: all)…")

    def _open_find(self, mode: str, placeholder: str) -> None:
        self._find_mode = mode
        box = self.query_one("#find", Input)
        box.placeholder = placeholder
        box.value = "" if mode == "search" else self.query_one(HistoryView)._filter
        box.add_class("-shown")
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        history = self.query_one(HistoryView)
        if self._find_mode == "filter":
            history.set_filter(message.value)
            message.input.remove_class("-shown")
            history.focus()
            return
        self._last_search = message.value
        message.input.remove_class("-shown")
        history.focus()
        if message.value and not history.search(message.value):
            self.notify(f"no match for {message.value!r}", severity="warning", markup=False)

    def action_next_match(self) -> None:
        if self._last_search and not self.query_one(HistoryView).search(self._last_search):
            self.notify("no match", severity="warning")

    def action_previous_match(self) -> None:
        history = self.query_one(HistoryView)
        if self._last_search and not history.search(self._last_search, backwards=True):
            self.notify("no match", severity="warning")

    def action_follow(self) -> None:
        self.query_one(HistoryView).action_follow()

    def action_escalation(self) -> None:
        pending = self.state.pending()
        if not pending:
            self.notify("no escalation pending for this session")
            return
        self.sv.open_escalation(self.session_id, pending[0]["escalation_id"])

    def action_command(self, action: str) -> None:
        self.sv.operator_command(self.session_id, action)
