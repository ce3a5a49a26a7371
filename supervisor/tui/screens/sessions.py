"""The Sessions screen: one row per session, and the "needs you" queue of escalations.

The table is updated by diff on the app's refresh tick, never per event: `SessionTable` renders
again only the rows whose cells changed. Rows are sorted as the operator chose (`s` cycles the
sort column, `S` reverses it, a click on a header sorts by that column): by default the sessions
waiting for an answer first, the oldest escalation first, then the most recently active. `tab`
moves the focus between the table and the queue. `n` starts an agent, `K` stops the highlighted
one, `M`/`D` merge or discard its worktree (`supervisor.tui.runs`).
"""

import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, OptionList, Static

from supervisor.protocol.decisions import KINDS
from supervisor.safetext import clean
from supervisor.store.render import ago
from supervisor.store.units import dollars
from supervisor.tui import nav_keys, palette, runs
from supervisor.tui.decision_keys import RegistryKeys, command_bindings
from supervisor.tui.format import level_text, safe, status_text
from supervisor.tui.messages import (
    CommandRequested,
    DecisionRequested,
    OpenEscalation,
    OpenSession,
    PruneRequested,
    RunRequested,
)
from supervisor.tui.palette import style
from supervisor.tui.queue_summary import escalation_summary
from supervisor.tui.screens.batch import BatchScreen
from supervisor.tui.screens.modals import ConfirmScreen, GuidanceScreen
from supervisor.tui.screens.new_run import NewRun, NewRunScreen
from supervisor.tui.session_order import Sort
from supervisor.tui.session_rows import SessionRows
from supervisor.tui.view import DashboardView, LiveScreen
from supervisor.tui.widgets.escalation_queue import EscalationQueue, entry_key, split_key
from supervisor.tui.widgets.session_table import Column, SessionTable

TABLE_TICK_S = 1.0
"""The table's cells are compared and updated at most this often (the rows' "last activity" is
shown in seconds, and with 50 busy sessions every row changes at each update). The queue and the
"Needs you" count follow every app tick."""
COLUMNS = (
    Column("session", min=14, flex=2),
    Column("agent", min=8, flex=1, drop=4),
    Column("task", min=10, flex=4, drop=2),
    Column("status"),
    Column("level"),
    Column("events", drop=5),
    Column("errors", drop=3),
    Column("last activity", drop=1),
)
"""The table's columns; on a narrow screen `events` gives way first, then `agent`, `errors`,
`task` and `last activity`; the session, its status and level always stay."""
RUN_KEYS = frozenset({"n", "K", "M", "D"})
"""Start a run; stop, merge, discard the highlighted one (`supervisor.tui.runs`)."""
VIEW_KEYS = frozenset(nav_keys.key(name) for name in ("sort", "reverse_sort", "hide_ended"))
"""Sort column, direction, ended sessions hidden: a burst (a paste) must not rearrange the
table an operator is reading."""
OVER = frozenset({"dead", "vanished"})
"""Statuses of a session whose agent is gone without a `session_end` (hidden with `h` too)."""
CELL_LIMIT = 200
"""Characters of agent text a cell holds at most (the column's width cuts it with `…`)."""


class SessionsScreen(RegistryKeys, LiveScreen, Screen[None]):
    """All sessions under the root, live; each command's key (`RegistryKeys`), bound as it is
    built."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(nav_keys.key("open"), "open", "Open", show=True),
        Binding(nav_keys.key("filter"), "filter", "Filter", show=True),
        Binding(nav_keys.key("answer"), "app.next_escalation", "Answer oldest", show=True),
        Binding("tab,shift+tab", "switch_focus", "Table/queue", show=False),
        Binding(nav_keys.key("sort"), "cycle_sort", "Sort", show=True),
        Binding(nav_keys.key("reverse_sort"), "reverse_sort", "Reverse sort", show=False),
        Binding(nav_keys.key("hide_ended"), "toggle_ended", "Hide ended", show=False),
        Binding("A", "answer_marked", "Answer marked", show=False),
        Binding("n", "run('new')", "New run", show=True),
        Binding("K", "run('stop')", "Stop run", show=False),
        Binding("M", "run('merge')", "Merge worktree", show=False),
        Binding("D", "run('discard')", "Discard worktree", show=False),
        Binding("C", "prune", "Prune ended", show=False),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]
    KEYS_WHERE = "the sessions screen"
    decision_bindings = staticmethod(command_bindings)
    OTHER_DELIBERATE_KEYS = RUN_KEYS | VIEW_KEYS | {"A", "C"}
    """Besides the commands, starting and finishing runs, pruning, and what changes the rows'
    order or set under the operator's eyes: ignored in a burst of keys
    (`supervisor.tui.deliberate`)."""
    DEFAULT_CSS = """
    SessionsScreen { layout: vertical; }
    #needs-title { height: 1; padding: 0 1; background: $panel; color: $text; text-style: bold; }
    #needs-title.-has { background: $warning; color: $background; }
    #queue { height: auto; max-height: 9; border: none; }
    #sessions-table { height: 1fr; }
    #empty-help { height: auto; padding: 1 2; display: none; }
    #empty-help.-shown { display: block; }
    #filter { dock: bottom; display: none; }
    #filter.-shown { display: block; }
    #root-line { height: 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, view: DashboardView, *, table_tick: float, root_created: bool,
                 waiting_for: Callable[[], str | None],
                 store_problem: Callable[[], str | None],
                 reading: Callable[[], tuple[int, int] | None]) -> None:
        super().__init__()
        self.ready = False
        """Composed and mounted: the app's tick may redraw it."""
        self.view = view
        self.table_tick = table_tick
        """Seconds between updates of the table's cells (the queue follows every tick)."""
        self.root_created = root_created
        """The dashboard made the root: said while it is empty."""
        self.waiting_for = waiting_for
        """The session `--session` waits for, until it appears."""
        self.store_problem = store_problem
        """What is wrong with reading the store now (None: nothing)."""
        self.reading = reading
        """(sessions read, sessions found) while the store's first load is read (else None):
        said on the root line, and an empty table is not called empty meanwhile."""
        self.filter_text = ""
        self.hide_ended = False
        """`h`: sessions that are over (ended, dead, vanished) are not shown."""
        self._rows = SessionRows(view.model, self._row_cells, self._matches)
        self._colours = palette.colours()
        """The theme's colours the rows were made in."""
        """Every session's row, made again only when it changed (`supervisor.tui.session_rows`)."""
        self._table_at = 0.0
        self._reading_said: tuple[int, int] | None = None
        """What the root line says of the first load: redrawn at the next tick when it changes,
        not at the table's (a line still "reading the sessions: 0 of 6…" over the rows read)."""
        self._hidden = 0
        self.sort = Sort()
        self._summaries: dict[tuple[str, str], str] = {}
        """The sort column and direction (`s`, `S`, a click on a header)."""

    def compose(self) -> ComposeResult:
        yield Label("", id="root-line")
        yield Label("Needs you: 0", id="needs-title")
        yield EscalationQueue(id="queue")
        with Vertical():
            yield Static(id="empty-help")
            yield SessionTable(COLUMNS, id="sessions-table")
        yield Input(placeholder="filter sessions (id, agent, task, status; !word excludes)…",
                    id="filter")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(SessionTable)
        self._root_line()
        store = self.view.store
        self.query_one("#empty-help", Static).update(
            empty_help(store.describe()) if store.noun == "root" else relay_help(store.describe()))
        self.refresh_view()
        table.focus()
        self.ready = True

    # -- refresh by diff ---------------------------------------------------------------------

    def _root_line(self) -> None:
        """`root: DIR` (or `store: URL`), how it is used, and the session `--session` waits
        for."""
        notes = []
        if self.view.recordings:
            notes.append("recordings, read-only")
        elif self.view.read_only:
            notes.append("read-only")
        if self.root_created and not self.view.model.sessions:  # true only while empty
            notes.append("created empty")
        line = Text(no_wrap=True, end="")
        reading = self._reading_said = self.reading()  # first: a long path must not hide it
        if reading is not None:
            read, found = reading
            line.append("reading the sessions" + (f": {read:,} of {found:,}" if found else "")
                        + "…   ", style="bold")
        waiting = self.waiting_for()
        if waiting is not None and waiting not in self.view.model.sessions:
            line.append("waiting for session ", style="bold")
            line.append_text(safe(waiting, 60, "bold"))
            line.append(" to appear…   ", style="bold")
        store = self.view.store
        problem = self.store_problem()
        if problem:  # shown until it can be read again (it names the root); the rows stay
            line.append_text(safe(f"{problem}; retrying, what is shown may be out of date",
                                  300, style("bold {bad}")))
        else:
            line.append_text(safe(f"{store.noun}: {store.describe()}"))
            if notes:
                line.append(f"  ({', '.join(notes)})")
            if self.hide_ended or self._hidden:
                line.append(f"   {self._hidden} hidden"
                            + (" (ended: h shows them)" if self.hide_ended else " by the filter"),
                            style="bold")
            cost, spenders = self.view.model.day_cost(self.view.clock())
            if spenders:  # what the agents' known usage cost today (local day)
                line.append(f"   today {dollars(cost)} in {spenders} "
                            f"session{'s' if spenders != 1 else ''}", style="bold")
            looped, loopers, unknown = self.view.model.loop_cost()
            if loopers:  # what every session's loops burned (from each escalation's onset)
                line.append(f"   in loops {dollars(looped)} in {loopers} "
                            f"session{'s' if loopers != 1 else ''}"
                            + (f", {unknown} with cost unknown" if unknown else ""),
                            style="bold")
        self.query_one("#root-line", Label).update(line)

    def _row_cells(self, sid: str, now: float) -> tuple[Text, ...]:
        try:
            return self._cells(sid, now)
        except Exception as exc:  # a row that cannot be drawn: that session shows as broken
            summary = self.view.model.sessions[sid].summary
            summary.broken = clean(f"{type(exc).__name__}: {exc}", keep_newlines=False,
                                   limit=200)
            return (safe(sid, CELL_LIMIT), Text("-"), Text("-"), status_text("broken"),
                    Text("-"), Text("-"), Text("-"), Text("-"))

    def _cells(self, sid: str, now: float) -> tuple[Text, ...]:
        st = self.view.model.sessions[sid]
        s = st.summary
        return (
            safe(sid, CELL_LIMIT),
            safe(s.agent or "-", CELL_LIMIT),
            safe(s.task or "-", CELL_LIMIT),
            Text("vanished", style="dim strike") if st.gone
            else status_text(self.view.model.status(sid, now)),
            level_text(s.level, ended=s.ended),
            Text(str(s.events), justify="right"),
            errors_text(s.errors, s.bad_lines),
            Text(ago(s.last_seen_ts, now)),
        )

    def _matches(self, sid: str, now: float) -> bool:
        """Shown: not over while ended ones are hidden, and every word of the filter in its
        id, agent, task, status or `levelN`, none of its `!words` (or `-words`, as the
        history's filter)."""
        st = self.view.model.sessions[sid]
        s = st.summary
        if self.hide_ended and (s.end_status is not None
                                or self.view.model.status(sid, now) in OVER):
            return False
        if not self.filter_text:
            return True
        hay = " ".join(
            str(x) for x in (sid, s.agent, s.task, self.view.model.status(sid, now),
                             f"level{s.level}") if x
        ).lower()
        words = [w for w in self.filter_text.lower().split() if w not in ("!", "-")]
        return all(word[1:] not in hay if word[0] in "!-" else word in hay for word in words)

    def refresh_view(self, *, force: bool = False) -> None:
        """Bring the table and the queue up to date with the model (diff only: the rows of
        the sessions that changed, `SessionRows`; `force`: the sort or the filter changed,
        every row is made again)."""
        now = self.view.clock()
        tick = time.monotonic()
        if palette.colours() is not self._colours:  # a new theme: every row in its colours
            self._colours = palette.colours()
            force = True
        same_rows = len(self.view.model.sessions) == len(self._rows.rows)
        if not force and same_rows and tick - self._table_at < self.table_tick:
            with self.app.batch_update():
                if self.reading() != self._reading_said:
                    self._root_line()
                self._refresh_queue(now)
            return
        self._table_at = tick
        table = self.query_one(SessionTable)
        model = self.view.model
        if force:
            self._rows.reset(self.sort)
        # placed at the table's tick (at most once a second): the cursor stays on its session
        update = self._rows.update(now)
        table.set_sort(self.sort.column, self.sort.reverse)
        self._hidden = len(model.sessions) - self._rows.shown
        with self.app.batch_update():
            self.query_one("#empty-help", Static).set_class(
                not model.sessions and self.reading() is None, "-shown")
            self._root_line()
            if force:  # every row made again: the columns fitted to them afresh
                rows = self._rows.rows
                table.set_rows([(sid, rows[sid].cells) for sid in self._rows.order()])
            else:
                table.show(update.order, update.cells)
            self._refresh_queue(now)

    def _refresh_queue(self, now: float) -> None:
        """The count, and the entries with their ages and countdowns (they tick)."""
        model = self.view.model
        queue, stale = model.queue(now), model.stale(now)
        title = self.query_one("#needs-title", Label)
        if self.view.recordings:  # nothing here waits for anyone: recorded as it was
            text = f"Pending when recorded: {len(queue)}" + (
                "  (read-only: e shows the oldest)" if queue else "")
        elif self.view.read_only:
            text = f"Needs you: {len(queue)}" + (
                "  (read-only here: answer from another dashboard or the CLI)" if queue else "")
        else:
            text = f"Needs you: {len(queue)}" + ("  (e: answer the oldest)" if queue else "")
        if stale:
            text += f"   {len(stale)} stale: agent not running"
        title.update(text)
        title.set_class(bool(queue) and not self.view.recordings, "-has")
        self.query_one(EscalationQueue).show(
            queue, stale, now, lambda sid: model.liveness(sid, now).reason, self._summary
        )

    def _summary(self, sid: str, esc: dict[str, Any]) -> str:
        """The queue's short summary of an escalation, made once (one read of the log)."""
        key = (sid, str(esc.get("escalation_id")))
        if key not in self._summaries:
            st = self.view.model.sessions.get(sid)
            if st is None or st.preview:  # its detections and calls are not read yet
                return escalation_summary(st, esc) if st is not None else ""
            self._summaries[key] = escalation_summary(st, esc)
        return self._summaries[key]

    # -- actions -----------------------------------------------------------------------------

    def selected_session(self) -> str | None:
        return self.query_one(SessionTable).cursor_key

    def on_session_table_row_selected(self, message: SessionTable.RowSelected) -> None:
        self.post_message(OpenSession(message.key))

    def on_session_table_header_clicked(self, message: SessionTable.HeaderClicked) -> None:
        self._sort_by(self.sort.clicked(message.column))

    def action_cycle_sort(self) -> None:
        self._sort_by(self.sort.cycled())

    def action_reverse_sort(self) -> None:
        self._sort_by(Sort(self.sort.column, not self.sort.reverse))

    def _sort_by(self, sort: Sort) -> None:
        self.sort = sort
        self.refresh_view(force=True)
        arrow = "reversed" if sort.reverse else "s: next column, S: reverse"
        self.notify(f"sorted by {sort.column} ({arrow})", timeout=2)

    def action_toggle_ended(self) -> None:
        """`h`: hide the sessions that are over (ended, dead, vanished), or show them again."""
        self.hide_ended = not self.hide_ended
        self.refresh_view(force=True)
        self.notify("ended sessions hidden (h shows them)" if self.hide_ended
                    else "ended sessions shown", timeout=2)

    def action_switch_focus(self) -> None:
        """`tab`: from the table to the queue and back (the queue only when it has entries)."""
        table, queue = self.query_one(SessionTable), self.query_one(EscalationQueue)
        if self.focused is table:
            if not queue.display or not queue.option_count:
                self.notify("the queue is empty: nothing needs you", timeout=3)
                return
            queue.focus()
            if queue.highlighted is None:
                queue.action_first()
        else:
            table.focus()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        sid, eid = split_key(message.option.id or "")
        self.post_message(OpenEscalation(sid, eid))

    def action_open(self) -> None:
        sid = self.selected_session()
        if sid:
            self.post_message(OpenSession(sid))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only (recordings): no operator command is offered, in the footer or by key."""
        return not (action in ("command", "run", "prune") and self.view.read_only)

    def action_command(self, action: str) -> None:
        sid = self.selected_session()
        if sid is None:
            self.notify("no session selected", severity="warning")
            return
        self.post_message(CommandRequested(sid, action))

    @work(exclusive=True, group="answer-marked")
    async def action_answer_marked(self) -> None:
        """`A`: one answer for every escalation marked in the queue (`space`), confirmed as a
        single one is, then written once per escalation, each followed to its result."""
        queue = self.query_one(EscalationQueue)
        pending = {entry_key(sid, esc.get("escalation_id")): (sid, esc)
                   for sid, esc in self.view.model.queue(self.view.clock())}
        entries = [pending[key] for key in queue.marked_keys() if key in pending]
        if not entries:
            self.notify("nothing marked: space marks the highlighted escalation in the queue",
                        severity="warning")
            return
        action = await self.app.push_screen_wait(BatchScreen(entries))
        if action is None:
            return
        kind = KINDS[action]
        text = None
        if kind.needs == "text":
            text = await self.app.push_screen_wait(
                GuidanceScreen(f"{len(entries)} escalations"))
            if text is None:
                return
        elif kind.confirm is not None:
            question = Text(f"{action.capitalize()} {len(entries)} escalations ", style="bold")
            question.append_text(safe(", ".join(sid for sid, _ in entries), 300, "bold"))
            question.append(f"? {kind.confirm} This cannot be taken back.")
            if not await self.app.push_screen_wait(ConfirmScreen(question)):
                return
        for sid, esc in entries:  # each its own decision, refused or followed on its own
            self.post_message(DecisionRequested(sid, action,
                                                escalation_id=str(esc.get("escalation_id")),
                                                text=text, follow=True))
        queue.marked.clear()

    def action_run(self, action: str) -> None:
        """`n` starts a run; `K`, `M`, `D` stop, merge, discard the highlighted one."""
        if action == "new":
            self._new_run()
            return
        sid = self.selected_session()
        if sid is None:
            self.notify("no session selected", severity="warning")
            return
        self.post_message(RunRequested(action, sid))

    def _new_run(self) -> None:
        """The new-run form, opened now, as `n` is handled: the keys typed right after `n`
        (a tab, a command) are already the form's (`NewRunScreen.take_early_key`), never the
        table's (where `s` would sort and `h` hide rows). What it asks goes up to the app."""
        from supervisor.host.agents import agent_names

        refused = runs.refusal(self.view.store, self.view.read_only)
        if refused:
            self.notify(refused, severity="warning", markup=False)
            return

        def asked(new_run: NewRun | None) -> None:
            if new_run is not None:
                self.post_message(RunRequested("new", new_run=new_run))

        self.app.push_screen(NewRunScreen(agent_names(), Path.cwd()), asked)

    def action_prune(self) -> None:
        """`C`: remove ended sessions from the store (asked, then confirmed with `y`)."""
        self.post_message(PruneRequested())

    def commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("Filter sessions", "Show only matching sessions", self.action_filter)
        if not self.view.read_only:
            yield SystemCommand("New run", "Start an agent (as supervisor run)",
                                lambda: self.action_run("new"))
            yield SystemCommand("Prune ended sessions", "Remove ended sessions from the store "
                                "(asked, then confirmed)", self.action_prune)

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.remove_class("-shown")
        self.filter_text = ""
        self.hide_ended = False
        """`h`: sessions that are over (ended, dead, vanished) are not shown."""
        self.refresh_view(force=True)
        self.query_one(SessionTable).focus()

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input.id == "filter":
            self.filter_text = message.value
            self.refresh_view(force=True)

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id == "filter":
            if not message.value:
                message.input.remove_class("-shown")
            self.query_one(SessionTable).focus()


def errors_text(errors: int, bad_lines: int) -> Text:
    """`13 +3 bad`: failed results, and the lines of its files that could not be read (as
    `supervisor sessions` shows them; the Problems tab lists them)."""
    text = Text(str(errors), style=style("{bad}") if errors else "", justify="right", end="")
    if bad_lines:
        text.append(f" +{bad_lines} bad", style=style("bold {bad}"))
    return text


def relay_help(store: str) -> Text:
    """What an empty dashboard on a shared store (Redis) says: sessions come from relays."""
    text = Text()
    text.append("No sessions yet", style="bold")
    text.append(" in ")
    text.append_text(safe(store, 200))
    text.append(". They appear here as soon as a relay ships them. On each agent host, beside "
                "the agents:\n\n")
    for command, what in (
        ("supervisor relay --store URL --host NAME",
         "ships that host's sessions here and brings your decisions back"),
        ("supervisor relay --status", "on that host: is its relay running, connected, behind?"),
    ):
        _way(text, command, what)
    text.append("\nSee docs/fleet.md (users, TLS, a relay as a service).", style="dim")
    return text


def _way(text: Text, command: str, what: str) -> None:
    """A command, then what it does on a line of its own, indented under it: beside a wide
    command column the description wrapped back to the left edge at 80 columns, under the
    commands, where it read as part of the next one."""
    text.append(f"  {command}\n", style="bold")
    text.append(f"      {what}\n")


def empty_help(root: str) -> Text:
    """What an empty dashboard says: how to get a session here."""
    text = Text()
    text.append("No sessions yet", style="bold")
    text.append(" under ")
    text.append_text(safe(root, 200))
    text.append(". They appear here as soon as an agent starts. To start one:\n\n")
    for command, what in (
        ("supervisor demo", "scripted demo agents with a dashboard on them (no model needed)"),
        ("supervisor install claude-code", "then use Claude Code as usual: every session "
                                           "shows up here"),
        ("from supervisor.guard import Session", "guard your own agent's tool calls (the SDK; "
                                                 "see the README)"),
    ):
        _way(text, command, what)
    text.append("\nAgents write to $SUPERVISOR_HOME (else the user state directory) unless "
                "given a root; open the same root here with --root DIR.", style="dim")
    return text
