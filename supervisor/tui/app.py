"""The Textual application: follows the store, folds batches into the model, draws on a tick.

The store's follower (locally one watchfiles watcher for the whole root; in Redis one blocking
read of the activity stream) runs as an async worker and hands batches to `ingest`, which only
folds them into the UI-free `DashboardModel`. Screens redraw from the model on a fixed tick
(`TICK_S`), by diff, so a burst of thousands of events costs one redraw. State goes down: each
screen is given the `DashboardView` (`supervisor.tui.view`) and the session it shows. Requests
come up as messages (`supervisor.tui.messages`), each handled here in one place: a decision is
refused, written to the session's control channel through the store, recorded in the model and
announced only in `on_decision_requested`; its outcome comes back through the events.
"""

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.notifications import Notification, Notify
from textual.screen import ModalScreen, Screen
from textual.widgets import Input, TextArea
from textual.worker import get_current_worker

from supervisor.operator.refusals import (
    UnreadDecision,
    answer_refusal,
    command_refusal,
    unread_decisions,
)
from supervisor.operator.send import default_operator, effect_text, send_decision
from supervisor.protocol.decisions import KINDS, is_hold, session_commands
from supervisor.safetext import clean
from supervisor.store.base import Follow, SessionBatch, Store
from supervisor.store.errors import StoreError
from supervisor.store.local import LocalStore
from supervisor.store.open import as_store
from supervisor.store.summary import SessionSummary
from supervisor.tui import nav_keys, palette, prune, runs, terminal_guard
from supervisor.tui.alerts import Alerts, Arrival
from supervisor.tui.alerts import summary as alert_summary
from supervisor.tui.decision_keys import RegistryKeys
from supervisor.tui.deliberate import BURST_GAP_S, HasDeliberateKeys, KeyPace, key_matches
from supervisor.tui.followup import FollowUp, follow_state
from supervisor.tui.format import format_clock, safe
from supervisor.tui.key_arrival import ArrivalDriver, arrival_of
from supervisor.tui.messages import (
    CommandRequested,
    DecisionRequested,
    DecisionResult,
    OpenEscalation,
    OpenSession,
    PruneRequested,
    RunRequested,
)
from supervisor.tui.model import DashboardModel, SessionState
from supervisor.tui.screens.command_palette import ClosingPalette
from supervisor.tui.screens.modals import ConfirmScreen, GuidanceScreen, HelpScreen, pick_checkpoint
from supervisor.tui.screens.sessions import TABLE_TICK_S, SessionsScreen
from supervisor.tui.themes import DEFAULT_THEME, default_folders, load_themes
from supervisor.tui.view import DashboardView, LiveScreen

# Not imported here: the screens the first one does not show (a session's, with its panels; an
# escalation's, which loads the engine; the help's list of every screen). Each is imported
# where it is opened, so the dashboard's start does not pay for them (tests/test_tui_imports.py).

_IN_BURST = "_supervisor_in_burst"
"""Set on each key as it arrives: whether it came in a burst (read again when its binding is
looked up)."""

TICK_S = 0.25
"""How often the screens redraw from the model."""
ALERT_WINDOW_S = 1.0
"""Escalations arriving within this long of the first are announced together (one toast)."""
PREVIEW_FIRST = 50
"""Sessions whose kept summaries are read and shown first (`_preview`), a screenful, before
the rest of them in one more step."""
KEEP_PAUSE_S = 0.01
"""Between two sessions whose summary the dashboard keeps after its first load."""
LOAD_CHUNK_BYTES = 2 * 1024 * 1024
"""Bytes read per file per delivery after the first load's piece (which reads at most
`Follower`'s `FIRST_LOAD_BYTES` of a file): a huge session is shown after its first piece and
fills in while the operator already looks at it, instead of freezing until all of it is
parsed."""


class SupervisorApp(App[None]):
    """The operator's dashboard over one store (a local root, or Redis)."""

    TITLE = "Agent Supervisor"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(nav_keys.key("quit"), "quit", "Quit", show=True),
        Binding(nav_keys.key("help"), "help", "Help", show=True),
        Binding(nav_keys.key("theme"), "next_theme", "Theme", show=False),
        Binding(nav_keys.key("oldest_escalation"), "next_escalation", "Oldest escalation",
                show=False),
    ]

    def __init__(
        self,
        store: Store | Path,
        *,
        theme: str | None = None,
        clock: Callable[[], float] = time.time,
        clock_format: Callable[[float], str] = format_clock,
        live: bool = True,
        read_only: bool = False,
        theme_folders: Iterable[Path] | None = None,
        follower: Follow | None = None,
        open_session: str | None = None,
        table_tick: float = TABLE_TICK_S,
        root_created: bool = False,
        alerts: Alerts | None = None,
        alert_window: float = ALERT_WINDOW_S,
        burst_gap: float = BURST_GAP_S,
    ) -> None:
        super().__init__()
        terminal_guard.install()
        self.store = as_store(store)
        self.clock = clock
        self.clock_format = clock_format
        self.live = live
        self.recordings = self.store.is_recording()
        """The store holds recordings: read-only, sessions shown as recorded."""
        self.read_only = read_only or self.recordings
        self.root_created = root_created
        """The root did not exist: the dashboard made it (shown on the sessions screen)."""
        self.model = DashboardModel(self.store, recordings=self.recordings)
        self.view = DashboardView(self.model, self.store, lambda: self.clock(), clock_format,
                                  self.read_only, self.recordings, self.refusal)
        """What every screen reads (given to each when it is made); its clock is the app's,
        read at each call (tests set `clock` on a running app)."""
        self.follower = follower or self.store.follower(chunk_bytes=LOAD_CHUNK_BYTES)
        self.table_tick = table_tick
        """Seconds between updates of the sessions table's cells (tests use 0)."""
        self.initial_session = open_session
        """A session to open as soon as it is found (`--session`)."""
        self.commands: dict[str, FollowUp] = {}
        """Operator commands sent from here whose outcome is still to be reported."""
        self.startup_messages: list[str] = []
        self._store_problem: str | None = None
        """What the follower last said was wrong with the store (shown once, when it changes)."""
        self._first_load = True
        """Batches of the store's first read are not news (no bell, no toast per escalation)."""
        self._unkept: list[str] = []
        """Sessions the preview found no kept summary for (`_keep_summaries` keeps them)."""
        self._stop = asyncio.Event()
        self.ingested = 0
        """Events folded so far (the benchmark reads it)."""
        self.on_ingest: Callable[[list[SessionBatch]], None] | None = None
        self.alerts = alerts or Alerts()
        """Desktop notifications and the operator's command (`--notify`, `--on-escalation`)."""
        self.startup_messages += self.alerts.problems
        self.alert_window = alert_window
        self._arrivals: list[Arrival] = []
        """Escalations that arrived and were not announced yet (one toast per burst)."""
        self._arrivals_at = 0.0
        self._held: list[Arrival] = []
        """Arrivals announced while a prompt was open: their toast waits until it closes."""
        self._arrival_toasts: list[Notification] = []
        """The toasts that said escalations wait (arrivals, the first read's count): opening a
        prompt takes them away."""
        self.key_pace = KeyPace(burst_gap)
        """When the previous key arrived: a decision key in a burst is ignored
        (`supervisor.tui.deliberate`)."""
        self._burst_told = -1e9
        self.pruning: set[str] = set()
        """Sessions being removed by a prune: their folders vanish on purpose (not said)."""
        loaded = load_themes(*(default_folders() if theme_folders is None else theme_folders))
        self.startup_messages += loaded.errors
        for t in loaded.themes.values():
            self.register_theme(t)
        self.theme_names = sorted(loaded.themes)
        wanted = theme or DEFAULT_THEME
        if wanted not in self.available_themes:
            fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            self.startup_messages.append(
                f"theme {wanted!r} not found (available: {', '.join(self.theme_names)}); "
                f"using {fallback}"
            )
            wanted = fallback
        self.theme = wanted
        palette.use_theme(self.get_theme(wanted) or self.current_theme)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, unless it is the Linux one: then ours, which records how each key
        arrived (`supervisor.tui.key_arrival`)."""
        chosen = super().get_driver_class()
        return ArrivalDriver if chosen is LinuxDriver else chosen

    def watch_theme(self, name: str) -> None:
        """Our labels take the new theme's colours (readable on its background)."""
        theme = self.get_theme(name)
        if theme is not None:
            palette.use_theme(theme)

    # -- life cycle --------------------------------------------------------------------------

    def on_mount(self) -> None:
        first = self._preview_first() if self.live else None
        self.push_screen(SessionsScreen(
            self.view, table_tick=self.table_tick, root_created=self.root_created,
            waiting_for=lambda: self.initial_session, store_problem=self._follower_problem,
            reading=self.load_progress))
        for message in self.startup_messages:
            self.notify(message, severity="error", timeout=10, markup=False)
        if self.root_created:
            self.notify(f"{clean(self.store.describe(), limit=200)} did not exist: created it, "
                        "empty. A typo? Agents writing to another root do not show here.",
                        severity="warning", timeout=15, markup=False)
        if self.live:
            self.run_worker(self._follow(first), group="follower", exclusive=True)
        self.set_interval(TICK_S, self.refresh_screens)

    async def _follow(self, first: list[str] | None) -> None:
        await self._preview(first)
        await self.follower.run(self._consume, self._stop)

    def _preview_first(self) -> list[str] | None:
        """A local root's first screenful of kept summaries, read before the sessions screen
        is composed, so that its first paint has the rows: read in a thread beside the
        screen's composing, they came a second paint later (300 sessions: 0.9 s against 0.4 s
        for an empty root's screen). The sessions found (None: the worker lists them; a
        shared store is asked in the worker, never on the event loop)."""
        if not isinstance(self.store, LocalStore):
            return None
        try:
            ids = self.store.session_ids()
        except (OSError, StoreError):  # the follower says what is wrong, and retries
            return None
        kept = self._kept(ids[:PREVIEW_FIRST])
        self.model.preview(kept)
        shown = {summary.session_id for summary in kept}
        self._unkept += [sid for sid in ids[:PREVIEW_FIRST] if sid not in shown]
        return ids

    async def _preview(self, first: list[str] | None) -> None:
        """Rows from the store's kept summaries (`Store.kept_summary`: a few small reads per
        session) before the follower reads every session's events: at 1,000 sessions reading
        and folding all of them took seconds with the table empty. A screenful first, then the
        rest; the follower's batches replace them with each session's own fold. A store that
        kept none of the first screenful (an older one, one written by another tool) is left to
        the follower at once, which shows rows as it reads them: looking for the rest of the
        summaries would only delay its first piece (1,000 sessions: about a second)."""
        if first is None:
            try:
                ids = await asyncio.to_thread(self.store.session_ids)
            except (OSError, StoreError):  # the follower says what is wrong, and retries
                return
            groups = [(True, ids[:PREVIEW_FIRST]), (False, ids[PREVIEW_FIRST:])]
        else:  # its first screenful is shown already (`_preview_first`)
            ids, groups = first, [(False, first[PREVIEW_FIRST:])]
            if not self.model.sessions:  # none of them kept: the follower at once
                self._unkept += ids[PREVIEW_FIRST:]
                return
        for first_group, group in groups:
            if self._stop.is_set():
                return
            kept = await asyncio.to_thread(self._kept, group)
            if self.model.preview(kept):
                self.refresh_screens()
            shown = {summary.session_id for summary in kept}
            self._unkept += [sid for sid in group if sid not in shown]
            if first_group and not kept:
                self._unkept += ids[PREVIEW_FIRST:]
                return

    def _kept(self, session_ids: list[str]) -> list[SessionSummary]:
        return [kept for sid in session_ids
                if (kept := self.store.kept_summary(sid)) is not None]

    @work(thread=True, group="keep-summaries", exclusive=True)
    def _keep_summaries(self, session_ids: list[str]) -> None:
        """After the first load, the summaries the preview did not find are kept
        (`Store.keep_summary`), so the next start shows those sessions first too: a root that
        nobody lists with `supervisor sessions` would otherwise never have them. One session at
        a time with a pause between, behind the operator's screen (it reads each file again).
        It stops with the app (its worker cancelled), not seconds later in the background."""
        worker = get_current_worker()
        for sid in session_ids:
            if self._stop.is_set() or worker.is_cancelled:
                return
            self.store.keep_summary(sid)
            time.sleep(KEEP_PAUSE_S)

    async def _consume(self, batches: list[SessionBatch]) -> None:
        opening = self.initial_session
        initial = self._first_load
        more = self.load_progress() is not None  # the follower delivers its first load in pieces
        shown = bool(self.model.sessions)
        self.ingest(batches, initial=initial, more=more)
        if not shown or (initial and not more):  # the first rows, and the end of the first
            self.refresh_screens()                  # load, at once: not at the next tick
        if initial and not more:
            self._first_load = False
            if self._unkept:
                self._keep_summaries(self._unkept)
        if opening is not None and self.initial_session is None:
            # let the session's screen compose and paint before parsing the rest of a big
            # file: both need the GIL, and the operator wants to see something first
            from supervisor.tui.screens.session import SessionScreen

            for _ in range(300):
                if isinstance(self.screen, SessionScreen) and self.screen.ready:
                    break
                await asyncio.sleep(0.01)
        elif more:
            await asyncio.sleep(0)  # the screen's tick and the operator's keys between pieces

    def load_progress(self) -> tuple[int, int] | None:
        """(sessions read, sessions found) while the follower's first load is delivered in
        pieces (`Follower.loading`); None when it is done, or the follower reads all at once."""
        if not self.live:  # nothing follows the store (tests feed the model themselves)
            return None
        loading = getattr(self.follower, "loading", None)  # only followers that load in pieces
        return loading if isinstance(loading, tuple) else None

    async def on_event(self, event: events.Event) -> None:
        """Keys first pass here, in the order they arrived: a key that sends or confirms a
        decision on the current screen (its `DELIBERATE_KEYS`) is dropped when it came in a
        burst (`supervisor.tui.deliberate`): with other keys in one read of the terminal, or
        without a quiet before it (`supervisor.tui.key_arrival`). A screen just opened that is
        not ready for keys yet (a form before its fields exist and one has the focus) is handed
        them here, in order (`take_early_key`), before any binding (its own `tab`) is looked
        up, and plays them once it is."""
        if isinstance(event, events.Key) and not event.is_forwarded:
            arrival = arrival_of(event)
            in_burst = self.key_pace.in_burst(event.time) if arrival is None else \
                arrival.in_burst(self.key_pace.gap)
            setattr(event, _IN_BURST, in_burst)
            if in_burst and self._deliberate(event):
                self._tell_burst(event.key)
                return
            early = getattr(self.screen, "take_early_key", None)
            if early is not None and early(event):  # before the screen can take it: kept
                return
        await super().on_event(event)

    def on_key(self, event: events.Key) -> None:
        """A key that came back up from the focused widget, before the app looks its binding
        up (`App._on_key`, skipped by `prevent_default`): that binding is the one of the screen
        shown *now*, which may have changed since the key arrived (a question a worker pushed
        meanwhile), so a key of a burst is checked against it again."""
        if getattr(event, _IN_BURST, False) and self._deliberate(event):
            event.prevent_default()
            event.stop()
            self._tell_burst(event.key)
            return
        take = getattr(self.screen, "take_stray_key", None)
        if take is not None and take(event):  # typed before the screen that wants it opened
            event.prevent_default()
            event.stop()

    def _deliberate(self, event: events.Key) -> bool:
        """Whether `event` would send or confirm a decision on the screen shown now. A printable
        character typed into a text box (the filter, a guidance text) is text there, not the
        screen's key: a fast typist's `a` or `i` is kept. The keys that send what was typed
        (`enter`, `ctrl+s`) are not characters, so a burst still cannot send it."""
        if isinstance(self.focused, Input | TextArea) and event.is_printable:
            return False
        screen = self.screen
        return isinstance(screen, HasDeliberateKeys) and key_matches(
            screen.DELIBERATE_KEYS, event.key, event.character)

    def _tell_burst(self, key: str) -> None:
        """Say (at most every few seconds) that a decision key was ignored, and why."""
        now = time.monotonic()
        if now - self._burst_told < 3.0:
            return
        self._burst_told = now
        self.notify(f"ignored {_key_name(key)}: keys came faster than a person types (a paste "
                    "or a burst). Press it again on its own to decide.", severity="warning",
                    timeout=6, markup=False)

    async def action_quit(self) -> None:
        """`q`: quit, after asking when escalations wait for an answer (a stray `q` must not
        leave agents waiting with nobody watching); `y` quits."""
        waiting = 0 if self.read_only else len(self.model.queue(self.clock()))
        if not waiting:
            self._quit()
            return
        if isinstance(self.screen, ConfirmScreen):
            return
        question = Text(f"{waiting} escalation{'s wait' if waiting != 1 else ' waits'} for you.",
                        style="bold")
        question.append(" Quit anyway? Their agents keep waiting until someone answers (or a "
                        "deadline applies its fallback).")
        self.push_screen(ConfirmScreen(question), lambda yes: self._quit() if yes else None)

    def _quit(self) -> None:
        self._stop.set()
        self.alerts.close()
        self.exit()

    def ingest(self, batches: list[SessionBatch], *, initial: bool = False,
               more: bool = False) -> None:
        """Fold batches into the model; announce escalations that arrived live. `initial`:
        part of the first load, whose escalations are not news; `more`: more of it follows (what
        it found is said once, when all of it is read)."""
        changes = self.model.apply(batches)
        self.ingested += sum(len(b.events) for b in batches)
        if self.on_ingest is not None:
            self.on_ingest(batches)
        if self.initial_session is not None:
            if self.initial_session in self.model.sessions:
                self.open_session(self.initial_session)
                self.initial_session = None
            elif initial and not more:
                self.notify(f"no session {self.initial_session} yet: waiting for it to appear",
                            markup=False)
        for sid in changes.vanished:
            if sid in self.pruning:
                self.model.forget(sid)
                continue
            what = self.model.sessions[sid].gone_what
            self.notify(f"session {sid}: its {what} vanished", severity="warning",
                        markup=False)
        if initial:
            count = len(self.model.queue(self.clock())) if not more else 0
            if count and not self.read_only:  # read-only: nothing to invite an answer to
                self._escalation_toast(Notification(
                    f"{count} escalation(s) need you (e: answer the oldest)", "",
                    "warning", 8))
            return
        if changes.new_escalations:
            if not self._arrivals:
                self.bell()
                self._arrivals_at = time.monotonic()
            self._arrivals += [Arrival(sid, esc) for sid, esc in changes.new_escalations]

    def announce_arrivals(self, *, force: bool = False) -> None:
        """One notification for the escalations of a burst (those that arrived within
        `alert_window` seconds of the first), and the alerts outside the terminal."""
        if not self._arrivals or (
                not force and time.monotonic() - self._arrivals_at < self.alert_window):
            return
        arrivals, self._arrivals = self._arrivals, []
        if self.alerts.active:
            self.run_worker(lambda: self._send_alerts(arrivals), thread=True,
                            group="alerts")
        if isinstance(self.screen, ModalScreen):
            # a toast would cover part of the open prompt (its answers, its evidence) for ten
            # seconds; the bell rang, the escalation prompt says what else is waiting, and
            # the toast is shown when the prompt closes
            self._held += arrivals
            return
        self._toast(arrivals)

    def _toast(self, arrivals: list[Arrival]) -> None:
        if len(arrivals) == 1:
            one = arrivals[0]
            toast = Notification(
                f"{clean(one.session_id, limit=40)} needs you: "
                f"{clean(str(one.escalation.get('reason')), keep_newlines=False, limit=120)}",
                title="Escalation", severity="error", timeout=10, markup=False)
        else:
            title, names = alert_summary(arrivals)
            toast = Notification(f"{names} (e: answer the oldest)", title=title,
                                 severity="error", timeout=10, markup=False)
        self._escalation_toast(toast)

    def _escalation_toast(self, toast: Notification) -> None:
        """Show a toast about escalations waiting; opening a prompt takes it away."""
        self._arrival_toasts = [n for n in self._arrival_toasts if not n.has_expired]
        self._arrival_toasts.append(toast)
        self.post_message(Notify(toast))

    def _show_held(self) -> None:
        """The arrivals held while a prompt was open, once it is closed: those still
        waiting for an answer (one answered from the prompt meanwhile is no news)."""
        if not self._held or isinstance(self.screen, ModalScreen):
            return
        waiting = {(entry.session_id, str(entry.escalation.get("escalation_id")))
                   for entry in self.model.queue(self.clock())}
        held, self._held = self._held, []
        still = [a for a in held
                 if (a.session_id, str(a.escalation.get("escalation_id"))) in waiting]
        if still:
            self._toast(still)

    def _dismiss_arrival_toasts(self) -> None:
        """A prompt opens: the toasts that announced arrivals would cover part of it, and
        what they said is in the prompt or its queue line. (Textual's own toast, clicked,
        dismisses itself the same way: `App._unnotify`; Textual is pinned.)"""
        for toast in self._arrival_toasts:
            if not toast.has_expired:
                self._unnotify(toast)
        self._arrival_toasts = []

    def _send_alerts(self, arrivals: list[Arrival]) -> None:
        """In a worker thread: starting processes must not hold the screen."""
        for failure in self.alerts.send(arrivals, time.monotonic()):
            self.call_from_thread(self.notify, failure, severity="warning", markup=False)

    def refresh_screens(self) -> None:
        """The tick: every screen in the stack that shows model data redraws by diff; the
        outcomes of operator commands sent from here and the store's problems are reported."""
        self._report_store_problem()
        self.follow_commands(self.clock())
        self.announce_arrivals()
        self._show_held()
        for screen in self.screen_stack:
            if isinstance(screen, LiveScreen) and screen.ready:
                with contextlib.suppress(NoMatches):  # being composed or torn down: next tick
                    screen.refresh_view()

    def _follower_problem(self) -> str | None:
        """What the store's follower says is wrong with the store now (None: nothing)."""
        problem = getattr(self.follower, "problem", None)  # only followers that retry say
        return problem if isinstance(problem, str) and problem else None

    def _report_store_problem(self) -> None:
        """A store that cannot be read (Redis down, a network cut) is said once, and so is its
        return; the follower retries meanwhile and what it shows stays as it was."""
        problem = self._follower_problem()
        if problem == self._store_problem:
            return
        if problem:
            self.notify(f"cannot read the store: {clean(problem, keep_newlines=False)}; "
                        "retrying (what you see may be out of date)", title="Store",
                        severity="error", timeout=30, markup=False)
        else:
            self.notify("the store can be read again", title="Store", markup=False)
        self._store_problem = problem

    # -- navigation --------------------------------------------------------------------------

    def open_session(self, session_id: str) -> None:
        from supervisor.tui.screens.session import SessionScreen

        st = self.model.sessions.get(session_id)
        if st is None:
            self.notify(f"no session {session_id}", severity="warning", markup=False)
            return
        self._show(lambda screen: isinstance(screen, SessionScreen)
                   and screen.session_id == session_id, lambda: SessionScreen(self.view, st))

    def open_escalation(self, session_id: str, escalation_id: str) -> None:
        from supervisor.tui.screens.escalation import EscalationScreen

        st = self.model.sessions.get(session_id)
        esc = st.escalations.get(escalation_id) if st else None
        if esc is None:
            self.notify("that escalation is gone", severity="warning")
            return
        self._dismiss_arrival_toasts()
        self._show(lambda screen: isinstance(screen, EscalationScreen)
                   and (screen.session_id, screen.escalation_id) == (session_id, escalation_id),
                   lambda: EscalationScreen(self.view, session_id, esc))

    def _show(self, shows: Callable[[Screen[Any]], bool], make: Callable[[], Screen[Any]]
              ) -> None:
        """Go back to the screen that already shows this (closing those above it), or open
        it: one screen per session and per escalation, however often it is asked for (a
        burst of keys would otherwise pile up screens an operator must close one by one)."""
        for screen in reversed(self.screen_stack):
            if shows(screen):
                while self.screen is not screen:
                    self.pop_screen()
                return
        self.push_screen(make())

    @on(OpenSession)
    def _open_session_requested(self, message: OpenSession) -> None:
        self.open_session(message.session_id)

    @on(OpenEscalation)
    def _open_escalation_requested(self, message: OpenEscalation) -> None:
        self.open_escalation(message.session_id, message.escalation_id)

    def action_next_escalation(self) -> None:
        now = self.clock()
        queue = self.model.queue(now)
        if not queue:
            stale = len(self.model.stale(now))
            self.notify("nothing needs you" + (
                f" ({stale} stale escalation(s): their agents are not running)" if stale else ""))
            return
        sid, esc = queue[0]
        self.open_escalation(sid, str(esc.get("escalation_id")))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        self.push_screen(HelpScreen(help_sections()))

    def action_next_theme(self) -> None:
        names = self.theme_names or sorted(self.available_themes)
        index = names.index(self.theme) + 1 if self.theme in names else 0
        self.theme = names[index % len(names)]
        self.notify(f"theme: {self.theme}", markup=False)

    # -- decisions ---------------------------------------------------------------------------

    def refusal(self, session_id: str, action: str, escalation_id: str | None = None
                ) -> str | None:
        """Why `action` (an answer to `escalation_id`, or an operator command) cannot apply
        now, or None: the same checks as the CLI's (`supervisor.operator.refusals`)."""
        if self.read_only:
            return ("read-only: these are recordings, decisions are not written"
                    if self.recordings else "read-only: decisions are not written")
        st = self.model.sessions.get(session_id)
        if st is None:
            return f"session {session_id} is gone (its folder vanished)"
        if st.gone:
            return f"session {session_id} is gone (its {st.gone_what} vanished)"
        now = self.clock()
        unread = self._unread(st)
        if escalation_id is not None:
            return answer_refusal(st.summary, escalation_id, action, now, unread)
        return command_refusal(st.summary, action, now, unread)

    def _unread(self, st: SessionState) -> list[UnreadDecision]:
        """The session's decisions on their way to the agent, read from the store as the
        operator decides, as the CLI and the web page read them: the follower reads at its
        tick, and another dashboard's answer of a moment ago was written a second time. Only
        sealed decisions count (an agent's own "approve by alice" refused the operator's);
        the follower's account is the fallback when the store cannot be read."""
        try:
            return unread_decisions(self.store, st.session_id, st.summary)
        except (OSError, StoreError):
            return st.unread()

    def on_decision_requested(self, request: DecisionRequested) -> None:
        """The one place a decision is written, whoever asked (the escalation prompt, an
        operator command, the plan panel, the palette): refused as the CLI would refuse it,
        else written, recorded as sent in the model and, when asked to `follow`, announced
        and followed until the agent side applies or ignores it."""
        decision_id = self._write(request)
        if request.reply_to is not None:
            request.reply_to.post_message(DecisionResult(request, decision_id))

    def _write(self, request: DecisionRequested) -> str | None:
        sid, action = request.session_id, request.action
        refused = self.refusal(sid, action, request.escalation_id)
        if refused:
            self.notify(f"not sent: {refused}", severity="warning", markup=False)
            return None
        st = self.model.sessions[sid]
        operator = default_operator()
        try:
            decision_id = send_decision(
                self.store, sid, action, escalation_id=request.escalation_id,
                text=request.text, checkpoint_id=request.checkpoint_id, operator=operator,
                tasks=request.tasks, detector=request.detector, calls=request.calls,
                lift=request.lift,
            )
        except (ValueError, StoreError, OSError) as exc:
            self.notify(f"decision not written: {exc}", severity="error", markup=False)
            return None
        st.record_sent(decision_id, action, request.escalation_id, operator)
        if request.follow:
            # a command that is an option of the pending escalation answers it (as the guard
            # applies it); a quiet, a replan never does
            waits = any(action in (esc.get("options") or [])
                        for esc in st.summary.pending.values())
            follow = FollowUp(sid, decision_id, action, self.clock(), waits)
            self.commands[decision_id] = follow
            what = f"{action} {request.detector}" if request.detector else action
            what += " (lift)" if request.lift else ""
            self.notify(f"{what} sent to {sid}: " + sent_note(st, action, waits), markup=False)
        return decision_id

    @on(CommandRequested)
    def _command_requested(self, message: CommandRequested) -> None:
        self.operator_command(message.session_id, message.action)

    def operator_command(self, session_id: str, action: str) -> None:
        """pause / guidance / rollback / reset / abort on a session, escalated or not."""
        st = self.model.sessions.get(session_id)
        if st is None:
            return
        held = [eid for eid, esc in st.summary.pending.items() if is_hold(esc)]
        if KINDS[action].holds and held and not self.read_only:
            # already paused: its prompt is where it is resumed (a) or decided
            self.open_escalation(session_id, held[0])
            return
        refused = self.refusal(session_id, action)
        if refused:  # before asking for text or a checkpoint that could not be used
            self.notify(f"{action}: {refused}", severity="warning", markup=False)
            return
        self._operator_command(st, action)

    @work(group="operator-command")
    async def _operator_command(self, st: SessionState, action: str) -> None:
        session_id = st.session_id
        text = checkpoint = None
        kind = KINDS[action]
        if kind.needs == "text":
            text = await self.push_screen_wait(GuidanceScreen(session_id))
            if text is None:
                return
        elif kind.needs == "checkpoint":
            checkpoint = await self.pick_checkpoint(session_id)
            if checkpoint is None:
                return
        elif kind.confirm is not None:
            question = Text(f"{action.capitalize()} session ", style="bold")
            question.append_text(safe(session_id, 60, "bold"))
            # a reset says what it clears under this session's policy
            described = effect_text(kind, st.policy)
            question.append(f"?\n{described}" if described else f"? {kind.confirm}")
            if not await self.push_screen_wait(ConfirmScreen(question)):
                return
        self.post_message(DecisionRequested(session_id, action, text=text,
                                            checkpoint_id=checkpoint, follow=True))

    @on(RunRequested)
    def _run_requested(self, message: RunRequested) -> None:
        self._run_action(message)

    @work(group="run-action")
    async def _run_action(self, message: RunRequested) -> None:
        await runs.act(self, message.action, message.session_id, message.new_run)

    @on(PruneRequested)
    @work(group="prune", exclusive=True)
    async def _prune_requested(self, _message: PruneRequested) -> None:
        await prune.act(self)

    def follow_commands(self, now: float) -> None:
        """Tell the operator what became of each command sent from here (on the tick): applied,
        ignored, the session ended first, or not responding; then stop following it."""
        for decision_id, follow in list(self.commands.items()):
            st = self.model.sessions.get(follow.session_id)
            if st is None:
                del self.commands[decision_id]
                continue
            state, text = follow_state(st, follow, now)
            if state == follow.told:
                continue
            follow.told = state
            if state != "late":
                del self.commands[decision_id]
            self.notify(f"{follow.session_id}: {text}", markup=False, timeout=10,
                        severity="information" if state == "applied" else "warning")

    async def pick_checkpoint(self, session_id: str) -> str | None:
        return await pick_checkpoint(self, self.store, self.model, session_id, self.clock())

    # -- command palette ---------------------------------------------------------------------

    def action_command_palette(self) -> None:
        """`ctrl+p`: the palette, one that takes no selection once closed (`ClosingPalette`)."""
        if self.use_command_palette and not isinstance(self.screen, ClosingPalette):
            self.push_screen(ClosingPalette(id="--command-palette"))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """Everywhere: help, the oldest escalation, themes; then the commands of the screen
        under the palette (its own `commands()`); then each session's, found by name; Textual's
        own last, Quit the very last. The palette keeps this order among equal matches, and
        "qui" matches "Quit" as well as "Quiet …": what the operator is typing towards comes
        first, and quitting asks when agents wait (`action_quit`)."""
        yield from self._our_commands(screen)
        textual = list(super().get_system_commands(screen))
        yield from (c for c in textual if c.callback != self.action_quit)
        yield from (c for c in textual if c.callback == self.action_quit)

    def _our_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield SystemCommand("Help: every key", "Show the help screen", self.action_help)
        yield SystemCommand("Answer the oldest escalation", "Open the first of the queue",
                            self.action_next_escalation)
        for name in self.theme_names:
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme",
                                lambda n=name: setattr(self, "theme", n))
        if isinstance(screen, LiveScreen):
            yield from screen.commands()
        for sid, st in self.model.sessions.items():
            shown = clean(sid, keep_newlines=False, limit=60)
            yield SystemCommand(f"Open session {shown}", "Show its history and details",
                                lambda s=sid: self.open_session(s), discover=False)
            if st.summary.end_status is None and not st.gone:
                for action in session_commands():
                    yield SystemCommand(
                        f"{action.capitalize()} session {shown}",
                        f"Operator command: {action}",
                        lambda s=sid, a=action: self.operator_command(s, a), discover=False,
                    )


def sent_note(st: SessionState, action: str, agent_waits: bool) -> str:
    """What to expect after sending an operator command (said with the 'sent' notification)."""
    kind = KINDS[action]
    if agent_waits:
        held = any(is_hold(esc) for esc in st.summary.pending.values())
        if held and kind.answer_note:
            return f"it answers the pause, so {kind.answer_note}"
        return "it answers the pending escalation"
    if kind.holds:
        deadline = (st.guard or {}).get("pause_deadline_s")
        fallback = (st.guard or {}).get("fallback") or "skip"
        hold = (f"until you resume it, or {deadline:g} s, then the fallback ({fallback})"
                if isinstance(deadline, int | float) and deadline > 0
                else "until you resume it (a) or decide: no deadline")
        return f"the agent holds at its next tool call, {hold}"
    return "the agent applies it at its next tool call"


def help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every key of every screen, from the bindings themselves (the help can't go stale)."""
    from supervisor.tui.panels import PANELS
    from supervisor.tui.screens.batch import BatchScreen
    from supervisor.tui.screens.diff import DiffScreen
    from supervisor.tui.screens.escalation import EscalationScreen
    from supervisor.tui.screens.event import EventScreen
    from supervisor.tui.screens.modals import CheckpointPicker
    from supervisor.tui.screens.new_run import NewRunScreen
    from supervisor.tui.screens.session import SessionScreen
    from supervisor.tui.widgets.escalation_queue import EscalationQueue
    from supervisor.tui.widgets.history_view import HistoryView
    from supervisor.tui.widgets.session_table import SessionTable

    screens: list[tuple[str, type]] = [
        ("Everywhere", SupervisorApp), ("Sessions", SessionsScreen),
        ("Sessions table", SessionTable), ("Needs-you queue", EscalationQueue),
        ("Session", SessionScreen), ("History (session)", HistoryView),
        *((f"{panel.TITLE} tab", panel) for panel in PANELS),
        ("Event in full", EventScreen), ("Diff since a checkpoint", DiffScreen),
        ("Escalation prompt", EscalationScreen), ("Guidance box", GuidanceScreen),
        ("Checkpoint picker", CheckpointPicker), ("Confirmation", ConfirmScreen),
        ("New run", NewRunScreen), ("Answer the marked escalations", BatchScreen),
    ]
    sections = [(title, _keys(cls)) for title, cls in screens]
    sections = [(title, keys) for title, keys in sections if keys]
    sections[0][1].append(("ctrl+p", "command palette: every action, themes, sessions"))
    dict(sections)["Checkpoint picker"].append(
        ("enter", "Roll back to the highlighted checkpoint"))
    return sections


def _keys(cls: type) -> list[tuple[str, str]]:
    """The (key, description) of a class's bindings, its bases' of ours included; a screen's
    decision keys (`RegistryKeys`) first, from the registry as it is now."""
    keys: list[tuple[str, str]] = []
    if issubclass(cls, RegistryKeys):
        keys.extend((_key_name(b.key), b.description) for b in cls.decision_bindings())
    for klass in reversed(cls.__mro__):
        if not klass.__module__.startswith("supervisor."):
            continue
        for b in klass.__dict__.get("BINDINGS", ()):
            if isinstance(b, Binding):
                keys.append((_key_name(b.key), b.description))
    return keys


def _key_name(key: str) -> str:
    """A binding's key as the help shows it: `?`, `/`, `esc`; several keys `tab/shift+tab`."""
    names = {"question_mark": "?", "slash": "/", "escape": "esc"}
    return "/".join(names.get(k, k) for k in key.split(","))
