"""What an operator decision does to the engine: defined once, recorded, replayed.

The guard decides *whether* a decision applies (is it for the pending escalation, is it late,
can a rollback be done) and carries out what happens outside the engine (restoring files, ending
the task or the session). What the decision then does to the engine is an `Effect`:

1. `effect_of(engine, kind.effect, ...)` builds it from the decision kind's `effect`
   (`supervisor.protocol.decisions`) and the engine's own state;
2. the guard carries out the side effects (their events, e.g. `rollback` or `task_end`, are
   observed by the engine as usual), then `Engine.apply_effect(effect, now)`;
3. the guard records the effect in `decision_applied` (field `effect`, plus the `level` after it);
4. every replay (`supervisor analyze`, `supervisor stats`, the dashboard) observes the same
   events, and the engine applies a `decision_applied`'s recorded effect when it observes it.

So the live engine and every replay of its event log reach the same state. A recording made
before effects were recorded gets the effect its action had (`recorded_effect`).

What each effect does (see also docs/engine.md, "Operator decisions"):

- `approve`: allows `repeats` further repeats of the escalated `signature`; clears the
  detectors' blocks; level at most 1.
- `guidance`: a new conversation cycle, as a user message: per-cycle counters restart, blocks
  cleared, level 0.
- `rollback`: (the `rollback` event already changed the workspace) blocks cleared; level at
  most 1.
- `skip`: a task boundary: the per-task counter restarts, blocks cleared, level 0.
- `split`: the task is replaced by its first sub-task (docs/plans.md): a task boundary like
  `skip`; each later sub-task's `task_start` is one too, so every sub-task has the policy's
  per-task limits of its own.
- `reset`: `RESET_CLEARS` below (bounded by `resets_per_conversation`).
- `stop`: level 4: every later call is refused.
- `quiet`: the operator quiets one detector (`detector`), or one loop signature of it
  (`signature`), for `calls` tool calls (0: until the session ends): its findings on those
  calls are dropped (no nudge, no block, no escalation). Nothing else changes: its memory
  keeps counting, so it fires again after the quiet if the loop goes on; hard limits are not
  detectors and are never quieted; a reset keeps the quiet.
- `none`: nothing beyond `answers` (an approved operator pause, a failed rollback).

Every effect with `answers` (the decision answered the engine's pending escalation, the
deadline's fallback included) first closes that escalation: the level drops to at most 1, and a
hard limit that caused it starts a new episode (its counter is measured from the current value
again), so the next call does not escalate again at once.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from supervisor.protocol.decisions import KINDS

if TYPE_CHECKING:
    from supervisor.engine.core import Engine
    from supervisor.engine.policy import Policy

EffectKind = Literal[
    "approve", "guidance", "rollback", "skip", "reset", "stop", "none",
    "split",
    "quiet",
]
EFFECT_KINDS: tuple[EffectKind, ...] = (
    "approve", "guidance", "rollback", "skip", "reset", "stop", "none",
    "split",
    "quiet",
)

PER_CYCLE_LIMITS = ("consecutive_tool_calls", "iterations_per_cycle")
"""Limits counted per conversation cycle: a user message, guidance and a reset restart them."""
SESSION_LIMITS = ("iterations_per_session", "errors_per_session", "duration_s", "tokens",
                  "cost_usd")
"""Limits counted over the whole session: a reset keeps them unless the policy's
`reset_clears_session_limits` is true."""
TASK_LIMITS = ("actions_per_task",)
"""Limits counted per task: a task boundary (or a skip) restarts them; a reset keeps them."""

RESET_CLEARS = (
    "the loop detectors' memory (repeated calls, outcomes, errors, cycles, polls)",
    "the degradation level and any escalation",
    "approvals granted earlier",
    "the file cache (re-reads run again)",
    "the per-cycle counters (" + ", ".join(PER_CYCLE_LIMITS) + ")",
)
"""What `reset` clears, in words (the engine's `reset` does exactly this)."""


@dataclass(frozen=True, slots=True)
class Effect:
    """What one applied operator decision does to the engine (see the module docstring)."""

    kind: EffectKind
    answers: bool = False
    """It answered the engine's pending escalation (closes it; a limit starts a new episode)."""
    repeats: int = 0
    """`approve`: further repeats of `signature` allowed."""
    signature: str | None = None
    """The escalated signature (`approve`), for the record and for `repeats`."""
    limit: str | None = None
    """The hard limit behind the answered escalation, if one caused it."""
    detector: str | None = None
    """`quiet`: the detector quieted (`signature`: only that loop signature of it)."""
    calls: int = 0
    """`quiet`: for how many tool calls (0: until the session ends)."""
    lift: bool = False
    """`quiet`: the quiet of `detector` (and `signature`) ends instead."""

    def not_carried_out(self) -> "Effect":
        """The effect when the decision's side effect could not be done: it still answers the
        escalation, nothing else."""
        return Effect("none", self.answers, 0, self.signature, self.limit)

    def to_dict(self) -> dict[str, Any]:
        """The `effect` field of `decision_applied`."""
        out: dict[str, Any] = {"kind": self.kind, "answers": self.answers,
                               "repeats": self.repeats, "signature": self.signature,
                               "limit": self.limit}
        if self.kind == "quiet":
            out["detector"], out["calls"] = self.detector, self.calls
            if self.lift:
                out["lift"] = True
        return out

    @classmethod
    def from_dict(cls, d: Any) -> "Effect | None":
        """The effect recorded in a `decision_applied`, or None when it is not a valid one."""
        if not isinstance(d, dict) or d.get("kind") not in EFFECT_KINDS:
            return None
        repeats = d.get("repeats")
        repeats = repeats if isinstance(repeats, int) and not isinstance(repeats, bool) else 0
        signature, limit = d.get("signature"), d.get("limit")
        detector, calls = d.get("detector"), d.get("calls")
        if d["kind"] == "quiet" and not (isinstance(detector, str) and detector):
            return None  # a quiet of nothing
        calls = calls if isinstance(calls, int) and not isinstance(calls, bool) else 0
        return cls(d["kind"], bool(d.get("answers")), max(0, repeats),
                   signature if isinstance(signature, str) else None,
                   limit if isinstance(limit, str) else None,
                   detector if isinstance(detector, str) else None, max(0, calls),
                   d.get("lift") is True)


def effect_of(engine: "Engine", kind: str, *, answering: bool,
              decision: Mapping[str, Any] | None = None) -> Effect:
    """The effect `kind` (a decision kind's `effect`, `supervisor.protocol.decisions`) of an
    operator decision the guard is about to apply.

    `answering`: the decision answers the engine's pending escalation (an operator's answer or
    the deadline's fallback). `decision`: the decision line (a `quiet` reads its fields). Call
    it before carrying out the side effects: it reads the engine's pending escalation, which a
    `task_end` would close; if the side effect then cannot be done (a rollback that failed),
    apply `Effect.not_carried_out()` instead."""
    esc = engine.st.escalation if answering else None
    answers = esc is not None
    signature = esc.get("signature") if esc else None
    limit = esc.get("limit") if esc else None
    if kind == "approve":
        if not answers:
            return Effect("none")  # an operator pause the engine never saw: just go on
        return Effect("approve", True, int(engine.policy["approve_repeats"]), signature, limit)
    if kind == "quiet":
        return quiet_effect(decision or {})
    if kind == "reset" and not engine.can_reset():
        kind = "none"
    if kind not in EFFECT_KINDS:
        raise ValueError(f"unknown effect kind {kind!r}")
    return Effect(kind, answers, 0, signature, limit)


def quiet_effect(decision: Mapping[str, Any]) -> Effect:
    """The effect of a `quiet` decision (its `detector`, `signature`, `calls`): it answers no
    escalation."""
    calls = decision.get("calls")
    return Effect("quiet", False, 0, decision.get("signature") or None, None,
                  str(decision.get("detector") or ""),
                  calls if isinstance(calls, int) and calls > 0 else 0,
                  decision.get("lift") is True)


def recorded_effect(engine: "Engine", event: dict[str, Any]) -> Effect | None:
    """The effect of a recorded `decision_applied`: its `effect` field, or for a recording made
    before effects were recorded (only these six actions existed then), the effect its action
    has (None: nothing to apply)."""
    if event.get("effect") is not None:
        return Effect.from_dict(event["effect"])
    action = event.get("action")
    if action not in ("approve", "guidance", "rollback", "skip", "reset", "abort"):
        return None
    return effect_of(engine, KINDS[str(action)].effect,
                     answering=event.get("escalation_id") is not None)


def effect_description(kind: str, policy: "Policy") -> str | None:
    """What the effect `kind` does under `policy`, in words for the operator, when it depends on
    the policy (a reset); None otherwise."""
    return reset_description(policy) if kind == "reset" else None


def reset_description(policy: "Policy") -> str:
    """What a reset clears and keeps under `policy`, in one short paragraph for the operator."""
    clears = list(RESET_CLEARS)
    keeps = list(TASK_LIMITS)
    if policy["reset_clears_session_limits"]:
        clears.append("the session's counters (" + ", ".join(SESSION_LIMITS) + ")")
    else:
        keeps = [*SESSION_LIMITS, *keeps]
    limit, _ = policy.limit("resets_per_conversation")
    bound = (f" At most {limit:g} reset(s) per conversation (resets_per_conversation)."
             if limit is not None else "")
    return f"Reset clears {_join(clears)}. Still counted: {_join(keeps)}.{bound}"


def _join(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)
