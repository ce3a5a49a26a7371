"""The engine effects of operator decisions: one typed record per effect, each applying itself.

A decision kind names its effect (`DecisionKind.effect`); `EFFECTS` maps that name to the record
type that builds it from the engine's state (`build`), applies it (`apply`), writes it into
`decision_applied` and reads it back (`to_dict`, `from_dict`). `Engine.apply_effect` does what
every effect shares (the time, the wait, the answered escalation) and hands the rest to the
effect, so a new effect is one class here and one line in `EFFECTS`, and no station branches on
an effect's name. What each one does is said in `supervisor.engine.decisions`' docstring.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from supervisor.engine.core import Engine
    from supervisor.engine.policy import Policy

APPROVALS_KEPT = 64
"""Approved signatures the engine remembers (the oldest is forgotten first)."""
QUIETS_KEPT = 16
"""Quiets the engine keeps at once (the oldest is dropped first)."""


@dataclass(frozen=True, slots=True)
class Effect:
    """What one applied operator decision does to the engine: the fields every effect has. On
    its own (`kind` `none`) it does nothing beyond `answers` (an approved operator pause, a
    failed rollback)."""

    kind: ClassVar[str] = "none"
    answers: bool = False
    """It answered the engine's pending escalation (closes it; a limit starts a new episode)."""
    signature: str | None = None
    """The escalated signature, for the record (and an approval's repeats)."""
    limit: str | None = None
    """The hard limit behind the answered escalation, if one caused it."""

    @classmethod
    def build(cls, engine: Engine, answers: bool, signature: str | None, limit: str | None,
              decision: Mapping[str, Any]) -> Effect:
        """The effect of a decision the guard is about to apply (`decisions.effect_of`)."""
        return cls(answers, signature, limit)

    @classmethod
    def read(cls, d: Mapping[str, Any], answers: bool, signature: str | None,
             limit: str | None) -> Effect | None:
        """The effect recorded as `d` (its common fields already read), or None when `d` is
        not a valid one."""
        return cls(answers, signature, limit)

    @staticmethod
    def describe(policy: Policy) -> str | None:
        """What it does under `policy`, in words for the operator, when that depends on the
        policy (a reset); None otherwise."""
        return None

    def apply(self, engine: Engine, now: float) -> None:
        """What it does to `engine`, beyond what every effect does (`Engine.apply_effect`)."""

    @property
    def repeats(self) -> int:
        """Further repeats of `signature` it allows (an approval's)."""
        return 0

    def not_carried_out(self) -> Effect:
        """The effect when the decision's side effect could not be done: it still answers the
        escalation, nothing else."""
        return Effect(self.answers, self.signature, self.limit)

    def to_dict(self) -> dict[str, Any]:
        """The `effect` field of `decision_applied`."""
        return {"kind": self.kind, "answers": self.answers, "repeats": self.repeats,
                "signature": self.signature, "limit": self.limit}

    @staticmethod
    def from_dict(d: Any) -> Effect | None:
        """The effect recorded in a `decision_applied`, or None when it is not a valid one."""
        if not isinstance(d, dict):
            return None
        effect = EFFECTS.get(d.get("kind"))  # type: ignore[arg-type]
        if effect is None:
            return None
        signature, limit = d.get("signature"), d.get("limit")
        return effect.read(d, bool(d.get("answers")),
                           signature if isinstance(signature, str) else None,
                           limit if isinstance(limit, str) else None)


@dataclass(frozen=True, slots=True)
class Approve(Effect):
    """Allows `repeats` further repeats of the escalated `signature`; clears the detectors'
    blocks; level at most 1."""

    kind: ClassVar[str] = "approve"
    allowed: int = 0
    """Further repeats of `signature` allowed (`approve_repeats`)."""

    @classmethod
    def build(cls, engine: Engine, answers: bool, signature: str | None, limit: str | None,
              decision: Mapping[str, Any]) -> Effect:
        if not answers:
            return Effect()  # an operator pause the engine never saw: just go on
        return cls(True, signature, limit, int(engine.policy["approve_repeats"]))

    @classmethod
    def read(cls, d: Mapping[str, Any], answers: bool, signature: str | None,
             limit: str | None) -> Effect | None:
        return cls(answers, signature, limit, max(0, _count(d.get("repeats"))))

    @property
    def repeats(self) -> int:
        return self.allowed

    def apply(self, engine: Engine, now: float) -> None:
        approvals = engine.st.approvals
        if self.signature and self.allowed > 0:
            approvals.pop(self.signature, None)
            approvals[self.signature] = self.allowed
            while len(approvals) > APPROVALS_KEPT:
                approvals.pop(next(iter(approvals)))
        engine.unblock()


@dataclass(frozen=True, slots=True)
class Guidance(Effect):
    """A new conversation cycle, as a user message: per-cycle counters restart, blocks cleared,
    level 0."""

    kind: ClassVar[str] = "guidance"

    def apply(self, engine: Engine, now: float) -> None:
        engine.new_cycle()


@dataclass(frozen=True, slots=True)
class Rollback(Effect):
    """(The `rollback` event already changed the workspace.) Blocks cleared; level at most 1."""

    kind: ClassVar[str] = "rollback"

    def apply(self, engine: Engine, now: float) -> None:
        engine.unblock()


@dataclass(frozen=True, slots=True)
class Skip(Effect):
    """A task boundary: the per-task counter restarts, blocks cleared, level 0."""

    kind: ClassVar[str] = "skip"

    def apply(self, engine: Engine, now: float) -> None:
        engine.task_skipped()


@dataclass(frozen=True, slots=True)
class Split(Skip):
    """The task is replaced by its first sub-task: a task boundary like `skip`."""

    kind: ClassVar[str] = "split"


@dataclass(frozen=True, slots=True)
class Reset(Effect):
    """What `decisions.RESET_CLEARS` says, bounded by `resets_per_conversation` (past it, the
    decision has no effect)."""

    kind: ClassVar[str] = "reset"

    @classmethod
    def build(cls, engine: Engine, answers: bool, signature: str | None, limit: str | None,
              decision: Mapping[str, Any]) -> Effect:
        if not engine.can_reset():
            return Effect(answers, signature, limit)
        return cls(answers, signature, limit)

    @staticmethod
    def describe(policy: Policy) -> str | None:
        from supervisor.engine.decisions import reset_description

        return reset_description(policy)

    def apply(self, engine: Engine, now: float) -> None:
        engine.reset(now)


@dataclass(frozen=True, slots=True)
class Stop(Effect):
    """Level 4: every later call is refused."""

    kind: ClassVar[str] = "stop"

    def apply(self, engine: Engine, now: float) -> None:
        engine.st.level = 4


@dataclass(frozen=True, slots=True)
class Quiet(Effect):
    """The operator quiets `detector` (or one loop `signature` of it) for `calls` tool calls (0:
    until the session ends), or ends that quiet (`lift`). It answers no escalation."""

    kind: ClassVar[str] = "quiet"
    detector: str = ""
    calls: int = 0
    lift: bool = False

    @classmethod
    def build(cls, engine: Engine, answers: bool, signature: str | None, limit: str | None,
              decision: Mapping[str, Any]) -> Effect:
        calls = decision.get("calls")
        return cls(False, decision.get("signature") or None, None,
                   str(decision.get("detector") or ""),
                   calls if isinstance(calls, int) and calls > 0 else 0,
                   decision.get("lift") is True)

    @classmethod
    def read(cls, d: Mapping[str, Any], answers: bool, signature: str | None,
             limit: str | None) -> Effect | None:
        detector = d.get("detector")
        if not (isinstance(detector, str) and detector):
            return None  # a quiet of nothing
        return cls(answers, signature, limit, detector, max(0, _count(d.get("calls"))),
                   d.get("lift") is True)

    def apply(self, engine: Engine, now: float) -> None:
        st = engine.st
        if not self.detector:
            return
        st.quiet = [q for q in st.quiet if (q["detector"], q["signature"]) != (
            self.detector, self.signature)][-(QUIETS_KEPT - 1):]
        if not self.lift:
            st.quiet.append({"detector": self.detector, "signature": self.signature,
                             "until": st.step_count + self.calls if self.calls else None})

    def to_dict(self) -> dict[str, Any]:
        out = Effect.to_dict(self)
        out["detector"], out["calls"] = self.detector, self.calls
        if self.lift:
            out["lift"] = True
        return out


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def registered(effects: tuple[type[Effect], ...]) -> dict[str, type[Effect]]:
    """The effect types by name, checked as they are registered: two with one name raise
    `ValueError` naming both, instead of one quietly replacing the other."""
    out: dict[str, type[Effect]] = {}
    for effect in effects:
        other = out.get(effect.kind)
        if other is not None:
            raise ValueError(f"engine effects {other.__name__} and {effect.__name__} are both "
                             f"named {effect.kind!r}")
        out[effect.kind] = effect
    return out


EFFECTS: dict[str, type[Effect]] = registered((
    Approve, Guidance, Rollback, Skip, Reset, Stop, Effect, Split, Quiet,
))
"""Every engine effect, by the name a decision kind gives (`DecisionKind.effect`)."""
