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

Each effect is a typed record in `supervisor.engine.effects` (`EFFECTS`: its name to its type),
which builds it, applies it and records it, so nothing here or in the engine branches on an
effect's name. What each one does (see also docs/engine.md, "Operator decisions"):

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
from typing import TYPE_CHECKING, Any

from supervisor.engine.effects import EFFECTS, Effect
from supervisor.protocol.decisions import KINDS

if TYPE_CHECKING:
    from supervisor.engine.core import Engine
    from supervisor.engine.policy import Policy

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
    effect = EFFECTS.get(kind)
    if effect is None:
        raise ValueError(f"unknown effect kind {kind!r}")
    return effect.build(engine, esc is not None, esc.get("signature") if esc else None,
                        esc.get("limit") if esc else None, decision or {})


_FIRST_ACTIONS = ("approve", "guidance", "rollback", "skip", "reset", "abort")
"""The actions that existed before effects were recorded in `decision_applied`."""


def recorded_effect(engine: "Engine", event: dict[str, Any]) -> Effect | None:
    """The effect of a recorded `decision_applied`: its `effect` field, or for a recording made
    before effects were recorded (only these six actions existed then), the effect its action
    has (None: nothing to apply)."""
    if event.get("effect") is not None:
        return Effect.from_dict(event["effect"])
    action = event.get("action")
    if action not in _FIRST_ACTIONS:
        return None
    return effect_of(engine, KINDS[str(action)].effect,
                     answering=event.get("escalation_id") is not None)


def effect_description(kind: str, policy: "Policy") -> str | None:
    """What the effect `kind` does under `policy`, in words for the operator, when it depends on
    the policy (a reset); None otherwise."""
    effect = EFFECTS.get(kind)
    return effect.describe(policy) if effect is not None else None


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
