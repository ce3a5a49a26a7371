"""The Escalation modal: reason, evidence, recent steps, a deadline countdown, and the answers.

a approve (confirmed) · g guidance (text box, ctrl+s) · r rollback (checkpoint picker, enter) ·
s skip the task (confirmed) · x abort (confirmed) · p split the task into sub-tasks (a text
box, ctrl+s; docs/plans.md; offered first when the task-size signals shown point to it); an
operator's pause is resumed with `a` at once (it can be paused again). None of these keys
counts when it comes in a burst of keys (`supervisor.tui.deliberate`). The decision is written
to `control.jsonl`; the modal then shows whether the agent side applied it or ignored it (e.g.
another operator answered first).
"""

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from supervisor.operator.outcome import answered_said
from supervisor.protocol.decisions import KINDS, escalation_options, is_hold, meant
from supervisor.store.summary import Answer
from supervisor.store.voice import NO_SEAL_NOTE
from supervisor.tui import nav_keys
from supervisor.tui.decision_keys import RegistryKeys, answer_bindings
from supervisor.tui.event_detail import EvidenceStep, evidence_steps
from supervisor.tui.followup import FollowUp, follow_state
from supervisor.tui.format import (
    countdown,
    evidence_lines,
    evidence_title,
    level_text,
    safe,
    safe_block,
)
from supervisor.tui.history import HistoryStore, recent_steps
from supervisor.tui.messages import DecisionRequested, DecisionResult, OpenEscalation
from supervisor.tui.model import SessionState
from supervisor.tui.screens.modals import ConfirmScreen, GuidanceScreen, pick_checkpoint
from supervisor.tui.screens.plan_input import PlanScreen
from supervisor.tui.view import DashboardView, LiveScreen

if TYPE_CHECKING:  # the engine is imported by the worker that sizes the task, not at start
    from supervisor.engine.task_size import TaskSize

RECENT_STEPS = 8
"""Calls, results, messages and refused calls' verdicts shown before the escalation (not the
engine's detection and limit rows, the verdicts that let a call run, nor heartbeats:
`history.recent_steps`)."""


TALL = 30
"""Terminals at least this tall show the task-size signals in full (smaller: their verdict)."""


class EscalationScreen(RegistryKeys, LiveScreen, ModalScreen[None]):
    """Answer one escalation: each answer's key (`RegistryKeys`), bound as it is built."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(nav_keys.key("next_pending"), "next_pending", "Next pending", show=True),
        Binding("escape", "close", "Close", show=True),
    ]
    KEYS_WHERE = "the escalation prompt"
    decision_bindings = staticmethod(answer_bindings)
    DEFAULT_CSS = """
    EscalationScreen { align: center middle; }
    EscalationScreen > Vertical { width: 90%; max-width: 120; height: auto; max-height: 95%;
        border: thick $error; background: $surface; padding: 0 1; }
    #esc-head { height: auto; max-height: 50vh; }
    #esc-title { height: auto; text-style: bold; }
    #esc-deadline { height: 1; }
    #esc-body { height: auto; max-height: 55vh; min-height: 3; border-top: solid $panel; }
    #esc-evidence, #esc-recent { text-wrap: nowrap; text-overflow: ellipsis; }
    #esc-outcome { height: auto; padding: 0 1; }
    #esc-outcome.-applied { background: $success 30%; }
    #esc-outcome.-ignored { background: $warning 30%; }
    #esc-next { height: auto; padding: 0 1; display: none; }
    #esc-next.-shown { display: block; }
    """

    def __init__(self, view: DashboardView, session_id: str, escalation: dict[str, Any]
                 ) -> None:
        super().__init__()
        self.ready = False
        """Composed and mounted: the app's tick may redraw it."""
        self.view = view
        self.session_id = session_id
        self.escalation = escalation
        self.escalation_id: str = str(escalation.get("escalation_id"))
        self.follow: FollowUp | None = None
        """The decision sent from here, followed until the agent records it."""
        self._asked = False
        """An answer was handed to the app, which has not said yet whether it wrote it."""
        self.refused: str | None = None
        """Why the last answer tried here could not apply (nothing was written)."""
        self.is_pause = is_hold(escalation)
        """An operator's pause: `a` resumes it, and it may have no deadline at all."""
        self._options_open: bool | None = None
        self._answered_drawn = False
        """Whether the line of the others waiting was last drawn as the offer of `n`."""
        self.task_size: TaskSize | None = None
        """The task-size signals (docs/plans.md), once read in a worker."""
        """Whether the answers were last drawn as still offered (redrawn when that changes)."""

    @property
    def decision_id(self) -> str | None:
        """The id of the decision sent from here, if any."""
        return self.follow.decision_id if self.follow is not None else None

    def compose(self) -> ComposeResult:
        with Vertical():
            # at most half the height: at 80x24 a long reason and the answers' legend took
            # every row, and the evidence "scrolled" out of sight (tab scrolls this part)
            with VerticalScroll(id="esc-head"):
                yield Static(id="esc-title")
                yield Static(id="esc-deadline")
                yield Static(id="esc-options")
                # what became of the answer and who else waits before the task-size signals:
                # at 80x24 the head is cut at half the height, and they were below the cut
                yield Static("", id="esc-outcome")
                yield Static("", id="esc-next")
                yield Static("", id="esc-size")
            with VerticalScroll(id="esc-body"):  # the choices stay visible on small terminals
                yield Static("", id="esc-seal")
                yield Static(id="esc-evidence")
                yield Static(id="esc-recent")
        yield Footer()

    def on_mount(self) -> None:
        esc = self.escalation
        title = Text(no_wrap=False)
        title.append("Paused " if self.is_pause else "Escalation ", style="bold red")
        title.append_text(safe(self.escalation_id, 60, "bold"))
        title.append("  session ")
        title.append_text(safe(self.session_id, 60, "bold"))
        if self.is_pause:  # the operator's choice, not a degradation of the agent
            title.append("  paused by an operator", style="bold")
        else:
            title.append("  level ")
            title.append_text(level_text(esc.get("level", 3)))
        if esc.get("kind"):
            title.append("  kind ")
            title.append_text(safe(esc.get("kind"), 20))
        st = self.view.model.sessions.get(self.session_id)
        if st is not None and not st.summary.sealed:  # no one can tell whose words these are
            title.append("  no seal (below)", style="bold yellow")
            self.query_one("#esc-seal", Static).update(Text(NO_SEAL_NOTE, style="yellow"))
        title.append("\n")
        title.append("Reason: ", style="bold")
        title.append_text(safe(esc.get("reason"), 600))
        self.query_one("#esc-title", Static).update(title)
        self._fill_steps()
        self._load_size()
        self.refresh_view()
        # the evidence and the steps scroll with the arrow keys, however small the terminal
        self.query_one("#esc-body", VerticalScroll).focus()
        self.ready = True

    def _fill_steps(self) -> None:
        st = self.view.model.sessions.get(self.session_id)
        if st is None:
            return
        history = st.history
        seqs = [int(n) for n in (self.escalation.get("evidence") or []) if isinstance(n, int)]
        if not seqs and self.is_pause:
            none = Text("Evidence: none, an operator paused it (the steps before it are "
                        "below)\n", style="bold")
            self.query_one("#esc-evidence", Static).update(none)
        else:
            loading = Text(evidence_title(len(seqs)) + ")\n", style="bold", no_wrap=True)
            loading.append("  reading the evidence calls and their results…", style="dim")
            self.query_one("#esc-evidence", Static).update(loading)
            self._load_evidence(history, seqs)
        recent = Text(no_wrap=True, overflow="ellipsis")
        recent.append("Recent steps before it\n", style="bold")
        for row in recent_steps(history, RECENT_STEPS, before_seq=self.escalation.get("seq")):
            recent.append_text(self._row_text(row))
        self.query_one("#esc-recent", Static).update(recent)

    @work(thread=True, exclusive=True, group="escalation-evidence")
    def _load_evidence(self, history: HistoryStore, seqs: list[int]) -> None:
        """In a worker: each evidence call with its result is read back from the log."""
        steps = evidence_steps(history, seqs)
        self.app.call_from_thread(self._show_evidence, len(seqs), steps)

    @work(thread=True, exclusive=True, group="escalation-size")
    def _load_size(self) -> None:
        """In a worker: the task-size signals from the session's events up to the escalation.
        The engine is imported here, in the worker: the dashboard's start does not load it."""
        from supervisor.engine.task_size import task_size

        upto = self.escalation.get("seq")
        events = []
        for event in self.view.store.read_all(self.session_id).events:
            if isinstance(upto, int) and event.seq > upto:
                break
            events.append(event.model_dump(mode="json"))
        self.app.call_from_thread(self._show_size, task_size(events))

    def _show_size(self, size: "TaskSize") -> None:
        from supervisor.engine.task_size import LABELS

        self.task_size = size
        text = Text("Is this task too big? ", style="bold")
        text.append("split may help: " + ", ".join(LABELS[n] for n in size.pointing)
                    if size.suggests_split else "the signals do not point to a split",
                    style="bold" if size.suggests_split else "dim")
        if self.app.size.height >= TALL:  # a split pane keeps its lines for the evidence
            text.append("\n  " + "   ".join(size.lines()), style="dim")
        self.query_one("#esc-size", Static).update(text)
        self._options_open = None  # redraw the answers: split may come first now
        self.refresh_view()

    def _show_evidence(self, count: int, steps: list[EvidenceStep]) -> None:
        evidence = Text(no_wrap=True, overflow="ellipsis")
        evidence.append(evidence_title(count) + ", each call with its result)\n", style="bold")
        for line in evidence_lines(steps):
            evidence.append_text(line)
            evidence.append("\n")
        if count > len(steps):
            evidence.append(f"  … {count - len(steps)} more\n", style="dim")
        self.query_one("#esc-evidence", Static).update(evidence)

    def _show_options(self, still_open: bool) -> None:
        """The answers offered, and what the deadline will do; once the escalation is answered
        (here or elsewhere) or its deadline passed (the fallback applies), the answers are
        dimmed and no fallback is announced: nothing pressed here can apply any more."""
        if still_open == self._options_open:
            return
        self._options_open = still_open
        esc = self.escalation
        options = Text()
        allowed = esc.get("options") or []
        answers = [(KINDS[name].key, name) for name in escalation_options()]
        if self.task_size is not None and self.task_size.suggests_split:
            # the answer that splits the task (it needs the sub-tasks) is offered first
            answers.sort(key=lambda answer: KINDS[answer[1]].needs != "tasks")
        for key, action in answers:
            style = ("bold" if action in allowed else "dim strike") if still_open else "dim"
            options.append(f" {key} ", style="reverse " + style)
            kind = meant(action, esc)  # on a pause, `a` resumes
            options.append(f" {kind.name}", style=style)
            options.append(f" ({kind.protection})  ", style="dim")
        if still_open:
            options.append("\n+y: asks, y confirms (cannot be taken back)  +pick: choose the "
                           "checkpoint, enter  " + ("resume: P pauses again  "
                                                    if self.is_pause else ""), style="dim")
            options.append("\nkeys that come faster than a person types are ignored; "
                           "↑↓ pgup pgdn scroll the evidence (tab: the text above it)",
                           style="dim")
        if still_open and esc.get("deadline_ts") is not None:  # else: answered, or it holds
            options.append("\nfallback when the deadline passes: ", style="dim")
            options.append_text(safe(esc.get("fallback") or "-", 20))
        self.query_one("#esc-options", Static).update(options)

    def _row_text(self, row: Any) -> Text:
        line = Text()
        line.append(f"  #{row.seq:<6} {self.view.clock_format(row.ts)} ", style="dim")
        line.append(f"{row.type:<16} ", style="bold")
        line.append(row.text[:200])  # already cleaned by the history store
        line.append("\n")
        return line

    def refresh_view(self) -> None:
        """Countdown and the outcome of our decision (called on the app's tick)."""
        now = self.view.clock()
        st = self.view.model.sessions.get(self.session_id)
        deadline_ts = self.escalation.get("deadline_ts")
        dead = st is not None and self.view.model.liveness(self.session_id, now).alive is False
        self._show_options(self.follow is None and not dead and not self.view.read_only and (
            st is None or self.escalation_id in st.summary.pending) and not (
            isinstance(deadline_ts, int | float) and now >= deadline_ts))
        deadline = Text("Deadline: ", style="bold")
        if st is not None and self.escalation_id not in st.summary.pending:
            answer = st.summary.answers.get(self.escalation_id)
            if answer is not None and answer.decision_id == "fallback":
                deadline.append(f"passed: the fallback ({answer.action}) applied", style="bold")
            else:
                deadline.append("answered", style="bold")
        elif dead:  # its guard is gone: neither an answer nor the fallback can apply
            deadline.append("none applies: the agent is not running (", style="bold red")
            deadline.append_text(safe(self.view.model.liveness(self.session_id, now).reason, 80,
                                      "bold red"))
            deadline.append("); no answer can reach it", style="bold red")
        elif self.escalation.get("deadline_ts") is None:
            deadline.append("none: it holds until " + (
                "you resume it (a) or decide" if self.is_pause else "someone decides"))
        else:
            deadline.append_text(countdown(self.escalation.get("deadline_ts"), now))
        if st is not None:
            deadline.append_text(notified_text(st.summary.notifications.get(self.escalation_id)))
        self.query_one("#esc-deadline", Static).update(deadline)
        box = self.query_one("#esc-outcome", Static)
        self._offer_next(st, now)
        if st is None:
            return
        if self.follow is not None:
            state, message = follow_state(st, self.follow, now)
            text = safe_block(message, 600, "bold")
            first = st.summary.answers.get(self.escalation_id)
            if state == "ignored" and first is not None and \
                    first.decision_id != self.follow.decision_id:
                text.append("  — another operator answered first: ", style="dim")
                text.append_text(safe(f"{first.operator or first.decision_id}: {first.action}",
                                      80, "dim"))
            if state != "sent":
                text.append("   (escape closes)", style="dim")
            box.set_class(state == "applied", "-applied")
            box.set_class(state in ("ignored", "ended", "late"), "-ignored")
            box.update(text)
        elif (answer := st.summary.answers.get(self.escalation_id)) is not None:
            # before a refusal: a refusal's reason is of its moment ("the agent has not
            # applied it yet"), and the agent applying that answer since must not leave it so
            box.set_class(True, "-ignored")
            box.update(answered_text(answer))
        elif self.refused is not None:
            box.set_class(True, "-ignored")
            text = Text("refused: ", style="bold")
            text.append_text(safe_block(self.refused, 400))
            text.append("   (escape closes)", style="dim")
            box.update(text)
        elif self.escalation_id not in st.summary.pending:
            box.set_class(True, "-ignored")
            box.update(answered_text(None, st.summary.end_status))
        box.display = bool(str(box.content).strip())  # no blank row in a head cut at 80x24

    def _others(self, now: float) -> list[tuple[str, dict[str, Any]]]:
        """The other pending escalations of the queue, oldest first."""
        return [(sid, esc) for sid, esc in self.view.model.queue(now)
                if (sid, str(esc.get("escalation_id"))) != (self.session_id, self.escalation_id)]

    def next_pending(self, now: float) -> tuple[str, dict[str, Any]] | None:
        """The escalation to answer after this one: the oldest other one in the queue."""
        others = self._others(now)
        return others[0] if others else None

    def _answered(self, st: SessionState | None) -> bool:
        return self.decision_id is not None or (
            st is not None and self.escalation_id not in st.summary.pending)

    def _offer_next(self, st: SessionState | None, now: float) -> None:
        """The other pending escalations: how many wait, and the oldest (no toast covers the
        prompt to say one arrived); once this one is answered, offered on `n`."""
        offer = self.query_one("#esc-next", Static)
        others = self._others(now)
        answered = self._answered(st)
        if (offer.has_class("-shown"), self._answered_drawn) != (bool(others), answered):
            offer.set_class(bool(others), "-shown")
            self._answered_drawn = answered
            self.refresh_bindings()  # `n` shows in the footer only when it has something
        if not others:
            return
        sid, esc = others[0]
        if not answered:
            waiting = Text(f"also waiting: {len(others)}, the oldest ", style="dim")
            waiting.append_text(safe(sid, 40, "bold"))
            waiting.append(" (n opens it once this one is answered)", style="dim")
            offer.update(waiting)
            return
        text = Text(" n ", style="reverse bold")
        text.append(" next: ", style="bold")
        text.append_text(safe(sid, 40, "bold"))
        text.append("  ")
        text.append_text(level_text(esc.get("level", 3)))
        text.append("  ")
        text.append_text(safe(esc.get("reason"), 80))
        text.append(f"   ({len(others)} waiting)", style="dim")
        offer.update(text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "decide" and (self.view.read_only or self.follow is not None):
            return False  # nothing can be answered from here, or it was answered from here
        if action == "next_pending":
            shown = self.query("#esc-next")
            return bool(shown) and shown.first().has_class("-shown") and self._answered_drawn
        return True

    def action_next_pending(self) -> None:
        upcoming = self.next_pending(self.view.clock())
        if upcoming is None:
            self.notify("nothing else needs you")
            return
        if not self._answered(self.view.model.sessions.get(self.session_id)):
            self.notify("answer this escalation first (or escape to leave it)",
                        severity="warning")
            return
        sid, esc = upcoming
        self.app.post_message(OpenEscalation(sid, str(esc.get("escalation_id"))))
        self.dismiss(None)

    # -- answers -----------------------------------------------------------------------------

    def action_decide(self, action: str) -> None:
        if self.follow is not None or self._asked:
            self.notify("a decision was already sent from here", severity="warning")
            return
        allowed = self.escalation.get("options")
        if allowed and action not in allowed:
            self.notify(f"{action} is not offered for this escalation", severity="warning")
            return
        if self._refuse(action):  # before asking for a text that could not be used
            return
        self._decide(action)

    def _refuse(self, action: str) -> bool:
        """Show why `action` cannot apply now, if it cannot; True when refused."""
        self.refused = self.view.refusal(self.session_id, action, self.escalation_id)
        if self.refused is None:
            return False
        self.notify(f"{action} refused: {self.refused}", severity="warning", markup=False)
        self.refresh_view()
        return True

    @work(exclusive=True, group="escalation-decision")
    async def _decide(self, action: str) -> None:
        text = checkpoint = None
        tasks: list[str] | None = None
        kind = meant(action, self.escalation)
        if kind.needs == "text":
            text = await self.app.push_screen_wait(GuidanceScreen(self.session_id))
            if text is None:
                return
        elif kind.needs == "checkpoint":
            checkpoint = await pick_checkpoint(self.app, self.view.store, self.view.model,
                                               self.session_id, self.view.clock())
            if checkpoint is None:
                return
        elif kind.needs == "tasks":
            tasks = await self.app.push_screen_wait(
                PlanScreen(self.session_id, self.escalation.get("reason")))
            if tasks is None:
                return
        elif kind.confirm is not None:
            question = Text(f"{action.capitalize()} ", style="bold")
            question.append_text(safe(self.escalation_id, 60, "bold"))
            question.append(" of session ", style="bold")
            question.append_text(safe(self.session_id, 60, "bold"))
            question.append(f"? {kind.confirm} This cannot be taken back.")
            if not await self.app.push_screen_wait(ConfirmScreen(question)):
                return
        if self._refuse(action):  # things may have changed while the operator typed
            return
        self._asked = True
        self.post_message(DecisionRequested(
            self.session_id, action, escalation_id=self.escalation_id, text=text,
            checkpoint_id=checkpoint, tasks=tasks, reply_to=self))

    def on_decision_result(self, result: DecisionResult) -> None:
        """The app wrote our answer (then it is followed here) or said why it did not."""
        self._asked = False
        if result.decision_id is not None:
            # what the operator pressed: on a pause, `resume` (written as approve)
            action = meant(result.request.action, self.escalation).name
            self.follow = FollowUp(self.session_id, result.decision_id, action,
                                   self.view.clock(), agent_waits=True)
            self.refresh_bindings()
            self.refresh_view()

    def action_close(self) -> None:
        self.dismiss(None)

    def commands(self) -> Iterable[SystemCommand]:
        for action in escalation_options():
            yield SystemCommand(f"Decide: {action}", "Answer this escalation",
                                lambda a=action: self.action_decide(a))


def answered_text(answer: Answer | None, ended: str | None = None) -> Text:
    """`already answered by alice: skip (d-…) task t1 skipped`, or the deadline's fallback;
    with no answer recorded, the session's end (`ended`: its status) when it ended
    (`operator.outcome.answered_said`, the web page's words too)."""
    said = (answered_said(None, None, None, None, ended) if answer is None else
            answered_said(answer.action, answer.operator, answer.decision_id, answer.outcome))
    text = safe(said, 400, "bold")
    text.append("   (escape closes)", style="dim")
    return text


def notified_text(by_service: dict[str, Any] | None) -> Text:
    """`  · notified: sent` (or `retrying 2`, `FAILED: <reason>`) per service, after the
    deadline: whether the operator's phone heard of it (docs/notify.md)."""
    text = Text()
    for service, n in (by_service or {}).items():
        outcome = n.get("outcome")
        text.append("  · notified: ", style="dim")
        if outcome == "sent":
            text.append("sent", style="bold")
        else:
            text.append(f"{'FAILED' if outcome == 'failed' else 'retrying'} "
                        f"(attempt {n.get('attempt')})", style="bold red")
            text.append_text(safe(f": {n.get('reason') or '?'}", 120))
        text.append_text(safe(f" via {service.split('://')[0]}", 30, "dim"))
    return text
