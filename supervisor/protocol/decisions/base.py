"""What a decision kind is: the shape every operator action's module fills in.

An operator's decision travels from the dashboard, the CLI or the web page to the agent side and
is carried out there; every step of the way asks the same questions of its action — what does it
need, may it answer an escalation, when is it refused and in which words, what does it do on the
agent's side, what does it do to the engine, what is the agent told. A `DecisionKind` answers
them all, in one module per action (`supervisor/protocol/decisions/<action>.py`), and the
registry (`supervisor.protocol.decisions.KINDS`) lists them. Everything else derives from it:
the protocol's action list and its validator, the escalation's options, the sender-side refusals
(`supervisor.operator.refusals`), the guard's application (`supervisor.guard.desk`), the engine's
effect (`supervisor.engine.decisions`), the dashboard's keys and the docs' table
(docs/decisions.md, checked by a test).

The kinds live in the protocol layer because a decision line is part of the protocol and its
validator runs on the hook path (stdlib only, no pydantic). What the agent side does is said
against `Desk`, a small interface the guard implements; what a sender checks is said against
`SessionView`, which the store's `SessionSummary` satisfies. So a kind imports nothing above the
protocol and the arrows keep pointing down. (Its records are plain slotted classes, not
dataclasses or NamedTuples: every hook process imports this module, and building one of those
costs about a millisecond.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Literal, Protocol

Needs = Literal["text", "checkpoint", "tasks", "detector"]
"""What a decision carries besides its action: guidance `text`, a `checkpoint_id`, a plan's
`tasks`, a quiet's `detector` (with optional `signature` and `calls`)."""


class SessionView(Protocol):
    """What a sender knows of a session when it checks a decision (the store's summary)."""

    @property
    def pending(self) -> Mapping[str, Mapping[str, Any]]: ...

    @property
    def resets(self) -> int: ...

    @property
    def reset_limit(self) -> float | None: ...


class Unread(Protocol):
    """A decision in the control channel the agent side has not handled yet."""

    @property
    def action(self) -> str: ...

    @property
    def operator(self) -> str | None: ...


class EffectFacts(Protocol):
    """What a kind may read of the engine effect its decision will have (`engine.decisions`)."""

    @property
    def repeats(self) -> int: ...

    @property
    def signature(self) -> str | None: ...


class Desk(Protocol):
    """What the agent side offers a kind while carrying out its decision (`guard/desk.py`).

    Each call does what it says at once (events written, state changed); a kind calls only the
    ones its action needs."""

    def has_checkpoints(self) -> bool: ...

    def rollback(self, checkpoint_id: str) -> Result:
        """Restore a checkpoint; the result says what the agent is told and whether it ran."""
        ...

    def open_task(self) -> str | None:
        """The id of the task the agent works on, or None."""
        ...

    def skip_task(self) -> Skipped:
        """End the open task as `skipped` (a plan moves to its next step)."""
        ...

    def start_plan(self, decision: Mapping[str, Any], why: str | None) -> str:
        """Replace the task by the decision's sub-tasks; what the agent is told."""
        ...

    def replan(self, tasks: list[str]) -> str | None: ...

    def drop_plan(self) -> str | None: ...

    def can_reset(self) -> bool: ...

    def count_reset(self) -> str:
        """Count one reset; its outcome ("counters reset (1 of 3)")."""
        ...

    def reset_refused(self) -> str: ...

    def detectors(self) -> tuple[str, ...]: ...

    def hold(self, kind: str, reason: str, call_id: str | None) -> None:
        """Hold the agent at call `call_id` until an operator decides: an escalation of kind
        `kind` (the holding decision kind's name, `DecisionKind.holds`)."""
        ...

    def end_session(self, status: str, reason: str) -> None: ...


class Context:
    """Where a decision is carried out."""

    __slots__ = ("call_id", "escalation_id", "escalation_kind", "escalation_reason", "fallback",
                 "operator")

    def __init__(self, escalation_id: str | None = None, escalation_kind: str | None = None,
                 escalation_reason: str | None = None, fallback: bool = False,
                 operator: str | None = None, call_id: str | None = None) -> None:
        self.escalation_id = escalation_id
        """The escalation it answers (an operator's answer or the deadline's fallback), or
        None for an operator command."""
        self.escalation_kind = escalation_kind
        """That escalation's kind (`pause`: an operator's own pause, no loop behind it)."""
        self.escalation_reason = escalation_reason
        self.fallback = fallback
        """No operator answered before the deadline: the guard applies the fallback."""
        self.operator = operator
        self.call_id = call_id
        """The tool call it is applied at (None: while the agent waits)."""

    @property
    def answering(self) -> bool:
        return self.escalation_id is not None

    @property
    def by(self) -> str:
        return self.operator or "the operator"


class Result:
    """What carrying out a decision did: what the agent is told now and the operator reads."""

    __slots__ = ("carried_out", "changed_files", "message", "news", "outcome", "reason", "then",
                 "verdict")

    def __init__(self, verdict: str | None, message: str | None, outcome: str, *,
                 reason: str | None = None, carried_out: bool = True,
                 changed_files: tuple[str, ...] = (),
                 then: Callable[[], None] | None = None, news: bool = False) -> None:
        self.verdict = verdict
        """The verdict action for the agent (`allow`, `nudge`, `skip`, `block`, `stop`), or
        None: nothing is said to the agent now."""
        self.message = message
        self.outcome = outcome
        """For the operator: `decision_applied`'s outcome."""
        self.reason = reason
        """The verdict's reason for a command, when not the outcome."""
        self.carried_out = carried_out
        """False when what it asks could not be done (a rollback that failed): its engine
        effect is then none."""
        self.changed_files = changed_files
        self.then = then
        """What happens after the decision is recorded (the session ends, the agent pauses)."""
        self.news = news
        """The message is news the agent must hear even between tool calls, whatever its kind
        (`DecisionKind.news`): a skip that started the plan's next step."""


class Skipped:
    """What a skip ended and started (`Desk.skip_task`)."""

    __slots__ = ("following", "line", "task_id")

    def __init__(self, task_id: str | None, line: str | None, following: str | None) -> None:
        self.task_id = task_id
        """The task that ended `skipped`, or None when none was open."""
        self.line = line
        """During a plan, the operators' line naming the step skipped and the step that starts
        (or that the plan is finished); None without a plan."""
        self.following = following
        """During a plan, the instruction of the step that starts (None: none starts)."""


class Ignored:
    """The agent side cannot carry the decision out; `reason` is recorded (`decision_ignored`)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def not_an_option(action: str, escalation_id: str, options: Iterable[str]) -> str:
    """One wording, sender and agent side, for an answer its escalation does not offer."""
    return f"'{action}' is not an option of {escalation_id} (options: {', '.join(options)})"


class DecisionKind:
    """One operator action. Subclass it in a module of its own and list an instance in
    `KINDS` (`supervisor/protocol/decisions/__init__.py`)."""

    name: ClassVar[str]
    """The action as written in the decision line."""
    title: ClassVar[str]
    """Its label on the dashboard ("Skip task")."""
    summary: ClassVar[str]
    """What it does, in one sentence (the docs' table, the CLI's help)."""
    needs: ClassVar[Needs | None] = None
    answers: ClassVar[bool] = False
    """An escalation offers it as an answer (one of its `options`)."""
    command: ClassVar[bool] = True
    """An operator may send it with no escalation."""
    wire: ClassVar[str | None] = None
    """The action it writes, when not its own name (`resume` writes `approve`); such a kind is
    an operator command only, never a line of its own."""
    effect: ClassVar[str] = "none"
    """Its engine effect (a name in `supervisor.engine.effects.EFFECTS`) when carried out."""
    key: ClassVar[str | None] = None
    """The escalation prompt's key for it (answers only)."""
    command_key: ClassVar[str | None] = None
    """The sessions and session screens' key for it as a command (None: the palette only)."""
    command_shown: ClassVar[bool] = False
    """That key is shown in the footer (the others are in the help screen)."""
    protection: ClassVar[str] = ""
    """The second step the dashboard asks for before sending it, said beside its key: `+y`
    (confirm), `+ctrl+s` (a text box), `+pick` (a checkpoint picker)."""
    confirm: ClassVar[str | None] = None
    """What a confirmed answer does, asked before it is sent (None: no confirmation)."""
    cli: ClassVar[str]
    """The command line that sends it (docs; a test checks the command exists)."""
    news: ClassVar[bool] = False
    """What it tells the agent is news the agent must hear even between tool calls (guidance;
    a rollback changed its files): an agent CLI's start and stop hooks pass it on, where a
    fallback's or a reset's words would only keep an agent working that is about to stop."""
    waits_for_pending: ClassVar[bool] = False
    """Refused as a command while an escalation is pending (answer that first)."""
    holds: ClassVar[bool] = False
    """Carrying it out holds the agent in an escalation named after the kind (`pause`): an
    operator's hold, no loop behind it, so the engine has none to answer, the operators are not
    notified, its deadline is the guard's `pause_deadline_s`, and sending it again while it
    holds opens that hold's prompt instead (`registry.is_hold`)."""
    approves: ClassVar[bool] = False
    """As an answer it lets the stopped call go on: a budget's escalation so answered by an
    operator raises that budget once, for today (docs/budgets.md)."""
    answer_note: ClassVar[str | None] = None
    """What else happens when it answers a waiting agent, in the operator's words ("the agent
    also resumes, with your guidance"), said when it is sent as a command that answers."""

    @property
    def cli_command(self) -> str:
        """The `supervisor` subcommand that sends it (`guide` for `guidance`)."""
        return self.cli.split()[1]

    @property
    def action(self) -> str:
        """The action written in the decision line."""
        return self.wire or self.name

    def fields_problem(self, value: Mapping[str, Any]) -> str | None:
        """Why the decision line's own fields are not valid for this action, or None (the common
        fields are checked already)."""
        return None

    def pending_refusal(self, pending: Mapping[str, Any]) -> str:
        """Why it cannot apply as a command while the escalation `pending` waits for an answer
        (with `waits_for_pending`): one wording for the sender and the agent side."""
        return f"{pending.get('escalation_id')} is pending: answer it first"

    def answer_refusal(self, escalation_id: str, options: Iterable[str]) -> str | None:
        """Why it cannot answer `escalation_id` (which offers `options`), or None."""
        options = list(options)
        if self.name not in options:
            return not_an_option(self.name, escalation_id, options)
        return None

    def command_refusal(self, view: SessionView, unread: Iterable[Unread]) -> str | None:
        """Why a sender refuses it as a command on a running session, or None (the guard would
        ignore it)."""
        pending = next(iter(view.pending.values()), None)
        if self.waits_for_pending and pending is not None:
            return self.pending_refusal(pending)
        return None

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        """Do it on the agent's side; what the agent is told. `effect` is the engine effect the
        guard will apply (computed before anything changed)."""
        raise NotImplementedError
