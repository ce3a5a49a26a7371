"""The Session screen: the history on the left, the panels of `PANELS` as tabs on the right.

The history is quiet by default (runs of heartbeats folded into one row; `h` shows each), can be
searched (`/`, `n`, `N`: "match 2/5") and filtered (`f`: clauses to include or, with `-`,
exclude); the status line under it says what is hidden. `enter` opens the highlighted event in
full; `w` hides the side bar so the history gets the whole width (below 100 columns it starts
hidden). The side bar's tabs, their keys, the palette's "Show ..." commands and the help's
lines all come from `PANELS`; a panel is made when its tab is first shown (`_panel`).
"""

from collections.abc import Iterable
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Static, TabbedContent, TabPane

from supervisor.safetext import clean
from supervisor.store.render import ago
from supervisor.store.summary import IDLE_AFTER_S
from supervisor.store.units import count, duration
from supervisor.tui import nav_keys
from supervisor.tui.decision_keys import RegistryKeys, command_bindings
from supervisor.tui.format import level_text, safe, status_text
from supervisor.tui.messages import CommandRequested, DecisionRequested, OpenEscalation
from supervisor.tui.model import SessionState
from supervisor.tui.panels import PANELS, Panel
from supervisor.tui.screens.event import EventScreen
from supervisor.tui.screens.quiet import QuietScreen
from supervisor.tui.view import DashboardView, LiveScreen
from supervisor.tui.widgets.history_view import HistoryView

NARROW_WIDTH = 100
"""Terminals narrower than this open a session with the side bar hidden (`w` shows it)."""
SIDE_BY_SIDE_WIDTH = 70
"""History (40 columns at least) and side bar (30) fit side by side from this width; below it
the side bar, when shown, takes the whole width (`w` goes back to the history)."""


class SessionScreen(RegistryKeys, LiveScreen, Screen[None]):
    """Everything about one session; each command's key (`RegistryKeys`), bound as it is
    built."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(nav_keys.key("back"), "back", "Back", show=True),
        Binding(nav_keys.key("search"), "search", "Search", show=True),
        Binding(nav_keys.key("filter_history"), "filter", "Filter", show=True),
        Binding(nav_keys.key("next_match"), "next_match", "Next match", show=False),
        Binding(nav_keys.key("previous_match"), "previous_match", "Prev match", show=False),
        Binding(nav_keys.key("heartbeats"), "toggle_quiet", "Heartbeats", show=False),
        Binding(nav_keys.key("side_bar"), "toggle_side", "Side bar", show=True),
        Binding(nav_keys.key("answer"), "escalation", "Answer", show=True),
        *(Binding(p.KEY, f"panel('{p.ID}')", p.TITLE, show=False) for p in PANELS),
        Binding(nav_keys.key("follow"), "follow", "Follow", show=False),
    ]
    KEYS_WHERE = "the session screen"
    BESIDE = tuple(panel.BINDINGS for panel in PANELS)
    decision_bindings = staticmethod(command_bindings)
    OTHER_DELIBERATE_KEYS = frozenset({"a", "i"})
    """Besides the commands, the Terminal panel's attach and type-a-line: a burst that opened
    the agent's terminal would type the rest of itself into it."""
    DEFAULT_CSS = """
    SessionScreen { layout: vertical; }
    #session-head { height: 2; padding: 0 1; background: $panel; }
    #session-body { height: 1fr; }
    #history { width: 3fr; min-width: 40; }
    #side { width: 2fr; min-width: 30; }
    #side.-hidden { display: none; }
    #history.-hidden { display: none; }
    #find { dock: bottom; display: none; }
    #find.-shown { display: block; }
    #history-state { width: 100%; height: auto; max-height: 2; padding: 0 1;
        color: $text-muted; }
    """

    def __init__(self, view: DashboardView, state: SessionState) -> None:
        super().__init__()
        self.ready = False
        """Composed and mounted: the app's tick may redraw it."""
        self.view = view
        self.state = state
        """The session shown (the model's own object: it follows the session's changes)."""
        self.session_id = state.session_id
        self._version: tuple[int, str | None] | None = None
        self._find_mode = "search"
        self._last_search = ""
        self._no_match = False
        self._side_wanted: bool | None = None
        """The operator's choice of showing the side bar (None: by the terminal's width)."""

    @property
    def history(self) -> HistoryView:
        return self.query_one(HistoryView)

    def panels(self) -> list[Panel]:
        return list(self.query(Panel))

    def compose(self) -> ComposeResult:
        yield Static(id="session-head")
        with Horizontal(id="session-body"):
            with Vertical(id="history"):
                yield HistoryView(self.state.history, clock_format=self.view.clock_format,
                                  id="history-view")
                yield Label("", id="history-state")
            with TabbedContent(id="side", initial=f"tab-{PANELS[0].ID}"):
                for panel in PANELS:  # only the first panel now: the others when shown
                    with TabPane(panel.TITLE, id=f"tab-{panel.ID}"):
                        if panel is PANELS[0]:
                            yield panel(self.view, self.state)
        yield Input(id="find")
        yield Footer()

    def on_mount(self) -> None:
        self._place_side()
        self.refresh_view()
        self.history.focus()
        self.ready = True

    def on_resize(self) -> None:
        self._place_side()

    def _place_side(self) -> None:
        """Below `NARROW_WIDTH` columns the history needs them all: the side bar waits for
        `w` or a panel's key."""
        shown = self._side_wanted
        if shown is None:
            shown = self.app.size.width >= NARROW_WIDTH
        self.query_one("#side").set_class(not shown, "-hidden")
        alone = shown and self.app.size.width < SIDE_BY_SIDE_WIDTH  # else pushed off screen
        self.query_one("#history").set_class(alone, "-hidden")

    def refresh_view(self) -> None:
        """Called on the app's tick: redraw what changed since the last version."""
        st = self.state
        now = self.view.clock()
        history = self.history
        if history.store is not st.history:  # the file was reset
            history.set_store(st.history)
        history.sync()
        self._history_state()
        self._head(now)
        # a silence begins or ends without an event (the transcript changed): redraw then too
        silent = self.view.model.unsupervised(self.session_id, now)
        if (st.version, silent) == self._version:
            return
        self._version = (st.version, silent)
        tabs = self.query_one(TabbedContent)
        for panel in self.panels():
            panel.update(st, now)
        for kind in PANELS:  # a panel not made yet still says its count on its tab
            tabs.get_tab(f"tab-{kind.ID}").label = kind.title(st)

    async def _panel(self, panel_id: str) -> Panel:
        """The panel `panel_id`, made and shown the session when it is first asked for.

        Only the first panel is composed with the screen: the others (tables, option lists,
        the terminal's views) are made when their tab is first shown, so that opening a
        session costs the history and one panel, not seven (they were most of the time to
        the first paint of a long session: benchmarks/README.md, "first paint")."""
        found = next((p for p in self.panels() if panel_id == p.ID), None)
        if found is not None:
            return found
        kind = next(k for k in PANELS if panel_id == k.ID)
        panel = kind(self.view, self.state)
        await self.query_one(f"#tab-{panel_id}", TabPane).mount(panel)
        panel.update(self.state, self.view.clock())
        return panel

    async def on_tabbed_content_tab_activated(self, message: TabbedContent.TabActivated
                                              ) -> None:
        """A tab shown (by a click, or `action_panel`): its panel is made if it is not yet."""
        pane = message.pane.id or ""
        if pane.startswith("tab-"):
            await self._panel(pane.removeprefix("tab-"))

    def _history_state(self) -> None:
        """The line under the history: what is hidden or folded first, then the search."""
        history = self.history
        rows = history.rows
        parts = [f"{count(len(self.state.history))} events"]
        if history.filtering:
            parts.append(f'filtering "{_short(history.pending_filter.text)}"…')  # type: ignore[union-attr]
        elif history.filter is not None:
            parts.append(f'filter "{_short(history.filter.text)}" hides {count(rows.hidden)}')
        if history.match is not None and self._last_search:
            n, of = history.match
            parts.append(f'"{_short(self._last_search)}": match {n}/{of}')
        elif self._no_match:
            parts.append(f'"{_short(self._last_search)}": no match')
        if rows.folded:
            parts.append(f"{count(rows.folded)} heartbeats folded (h)")
        elif not rows.quiet:
            parts.append("every heartbeat shown (h)")
        parts.append(self._history_end(history.follow))
        # two lines at most, as wide as the history: beside the side bar one line was cut
        # at the history's edge, its end first ("scrolled (end: live)": the way back)
        self.query_one("#history-state", Label).update(Text(" · ".join(parts),
                                                            overflow="ellipsis"))

    def _history_end(self, follow: bool) -> str:
        """What is known of what follows the history's last row: nothing (the session ended,
        its agent is gone), new events as they come (`live`), or no telling (an agent quiet
        for long that promised no heartbeats). It said `live` of an agent whose process was
        gone, and of one silent for hours."""
        st, model = self.state, self.view.model
        if st.summary.ended or st.gone or model.recordings:
            return "the whole history" if follow else "scrolled (end: its last event)"
        now = self.view.clock()
        life = model.liveness(self.session_id, now)
        last = st.summary.last_activity_ts
        quiet = now - last if last is not None else 0.0
        if not follow:
            return "scrolled (end: live)" if life.alive is not False and \
                quiet <= IDLE_AFTER_S else "scrolled (end: its last event)"
        if life.alive is False:  # presumed dead: its process is gone, its heartbeats stopped
            return f"the agent is not running ({life.reason})"
        if quiet <= IDLE_AFTER_S:
            return "live"
        if life.alive:  # its process runs, or its heartbeats come: it is there, quiet
            return f"live, no activity for {duration(quiet)}"
        # no heartbeat promised, no process to look up here: it may have gone for good
        return f"no activity for {duration(quiet)} (whether the agent is still there " \
               "cannot be told)"

    def _head(self, now: float) -> None:
        st = self.state
        s = st.summary
        head = Text(no_wrap=True, end="", overflow="ellipsis")
        head.append_text(safe(self.session_id, 40, "bold"))
        head.append("  ")
        head.append_text(
            Text(f"{st.gone_what} vanished", style="bold red") if st.gone
            else status_text(self.view.model.status(self.session_id, now))
        )
        if s.ended and s.end_reason:
            head.append(": ")
            head.append_text(safe(s.end_reason, 80))
        head.append("  level ")
        head.append_text(level_text(s.level, ended=s.ended))
        head.append(f"  events {count(s.events)}  errors {count(s.errors)}"
                    f"  bad lines {count(len(st.bad_lines))}")
        head.append(f"  last {ago(s.last_seen_ts, now)}", style="dim")
        second = Text(no_wrap=True, end="", overflow="ellipsis")
        second.append("agent ", style="dim")
        second.append_text(safe(s.agent or "-", 24))
        second.append("  task ", style="dim")
        second.append_text(safe(s.task or "-", 200))
        if s.pending:
            second.append(f"   {len(s.pending)} escalation(s) pending: press e", style="bold red")
        self.query_one("#session-head", Static).update(Text("\n").join([head, second]))

    # -- messages ----------------------------------------------------------------------------

    def on_panel_show_in_history(self, message: Panel.ShowInHistory) -> None:
        history = self.history
        history.jump_to_seq(message.seq, message.highlight)
        history.focus()

    def on_history_view_open_event(self, message: HistoryView.OpenEvent) -> None:
        self.app.push_screen(EventScreen(self.view.clock_format, self.state, message.index,
                                         self.history.rows))

    def on_history_view_layout_changed(self, _message: HistoryView.LayoutChanged) -> None:
        self._history_state()

    # -- actions -----------------------------------------------------------------------------

    def action_back(self) -> None:
        box = self.query_one("#find", Input)
        if box.has_class("-shown"):
            box.remove_class("-shown")
            self.history.focus()
            return
        self.app.pop_screen()

    async def action_panel(self, panel_id: str) -> None:
        """Show a panel (the side bar too, if it was hidden) and focus it."""
        self._side_wanted = True
        self._place_side()
        self.query_one(TabbedContent).active = f"tab-{panel_id}"
        panel = await self._panel(panel_id)
        panel.focus_target().focus()

    def action_toggle_side(self) -> None:
        side = self.query_one("#side")
        self._side_wanted = side.has_class("-hidden")
        self._place_side()
        if not self._side_wanted:
            self.history.focus()
        elif self.query_one("#history").has_class("-hidden"):  # a narrow screen: the panel
            active = self.query_one(TabbedContent).active.removeprefix("tab-")
            panel = next((p for p in self.panels() if active == p.ID), None)
            if panel is not None:
                panel.focus_target().focus()

    def action_toggle_quiet(self) -> None:
        history = self.history
        history.set_quiet(not history.quiet)
        self._history_state()

    def action_search(self) -> None:
        self._open_find("search", "search history (enter: next match, n/N later)…")

    def action_filter(self) -> None:
        self._open_find("filter", "filter: words to show, -words to hide, clauses split by "
                                  "commas (e.g. -verdict allow); empty: all")

    def _open_find(self, mode: str, placeholder: str) -> None:
        self._find_mode = mode
        box = self.query_one("#find", Input)
        box.placeholder = placeholder
        current = self.history.pending_filter or self.history.filter
        box.value = "" if mode == "search" else (current.text if current else "")
        box.add_class("-shown")
        box.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        history = self.history
        message.input.remove_class("-shown")
        history.focus()
        if self._find_mode == "filter":
            history.set_filter(message.value)
        else:
            self._last_search = message.value
            self._search(backwards=False)
        self._history_state()

    def _search(self, *, backwards: bool) -> None:
        if not self._last_search:
            return
        self._no_match = not self.history.search(self._last_search, backwards=backwards)
        self._history_state()

    def action_next_match(self) -> None:
        self._search(backwards=False)

    def action_previous_match(self) -> None:
        self._search(backwards=True)

    def action_follow(self) -> None:
        self.history.action_follow()

    def action_escalation(self) -> None:
        pending = self.state.pending()
        if not pending:
            self.notify("no escalation pending for this session")
            return
        self.post_message(OpenEscalation(self.session_id, str(pending[0]["escalation_id"])))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only (recordings): no operator command is offered, in the footer or by key."""
        return not (action == "command" and self.view.read_only)

    def action_command(self, action: str) -> None:
        self.post_message(CommandRequested(self.session_id, action))

    def commands(self) -> Iterable[SystemCommand]:
        """The palette here: the history's keys, a "Show ..." per panel, the escalation, and
        a quiet for each detector that fired in this session (newest first)."""
        yield SystemCommand("Search history", "Find text in this session's history",
                            self.action_search)
        yield SystemCommand("Filter history", "Show or hide matching history lines",
                            self.action_filter)
        yield SystemCommand("Heartbeats: fold or show", "Fold runs of heartbeats into one "
                            "row, or show each", self.action_toggle_quiet)
        yield SystemCommand("Wide history", "Hide or show the side bar", self.action_toggle_side)
        yield SystemCommand("Follow live", "Jump to the end of the history", self.action_follow)
        for p in PANELS:
            yield SystemCommand(f"Show {p.TITLE.lower()}", p.HELP,
                                lambda p=p: self.action_panel(p.ID))
        yield SystemCommand("Answer this session's escalation", "Open the prompt",
                            self.action_escalation)
        fired = list(dict.fromkeys(d.detector for d in reversed(self.state.detections)))[:6]
        for detector in fired:
            yield SystemCommand(
                f"Quiet {detector}…", "For some calls or the session, or lift its quiet "
                "(this session only; hard limits still apply)",
                lambda d=detector: self.quiet(d))

    @work(exclusive=True, group="quiet")
    async def quiet(self, detector: str) -> None:
        """Ask which quiet (or its lift), then request exactly that decision."""
        chosen = await self.app.push_screen_wait(
            QuietScreen(self.session_id, detector, list(self.state.quiets)))
        if chosen is not None:
            calls, lift = chosen
            self.post_message(DecisionRequested(self.session_id, "quiet", detector=detector,
                                                calls=calls, lift=lift, follow=True))


def _short(text: str) -> str:
    return clean(text, keep_newlines=False, limit=30)
