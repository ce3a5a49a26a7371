"""The loop-prevention engine: detectors, hard limits, degradation levels, guidance, file cache.

Pure and incremental: no I/O and no clock (every call takes `now`), events are plain dicts in
the protocol's JSON shape, and the whole state is a JSON snapshot bounded by the policy's
window, so a hook process can restore it, apply one step and save it. Importing this package
loads no pydantic, textual, watchfiles, store, guard or tui code; rapidfuzz is imported at the
first similarity comparison.

Usage::

    from supervisor.engine import Engine, Policy

    engine = Engine(Policy.profile("default"))          # or Policy.from_dict({...})
    engine.observe({"seq": 1, "ts": t0, "type": "session_start", "agent": "x"}, now=t0)

    call = {"call_id": "c1", "tool": "Bash", "args": {"command": "pytest -q"}}
    check = engine.check(call, now=t1)                 # before the call runs
    if check.action in ("allow", "nudge"):
        ...                                            # run it; show check.message if any
    elif check.action == "skip":
        ...                                            # hand back check.cached_output
    elif check.action == "pause":
        ...                                            # escalate check.escalation to the operator
    # every event is observed, the tool_call too (not counted twice after check):
    engine.observe({"seq": 2, "ts": t1, "type": "tool_call", **call}, now=t1)
    findings = engine.observe({"seq": 3, "ts": t2, "type": "tool_result", "call_id": "c1",
                               "ok": False, "output": "...", "output_bytes": 3,
                               "output_hash": "...", "error": "exit 1",
                               "duration_ms": 900}, now=t2)
    for f in findings:                                 # nudges: tell the agent f.message now
        writer.append(f.to_event())

    state = engine.snapshot()                          # JSON-serialisable
    engine = Engine.restore(state)                     # continues exactly the same way
    # a hook process: Engine.restore(json.loads(text), copy=False) on start,
    # json.dumps(engine.snapshot(copy=False)) on exit (no copies)

Operator decisions have one meaning, defined in `supervisor.engine.decisions` (each effect a
typed record in `supervisor.engine.effects` that applies itself): the guard builds an `Effect`
with `effect_of(engine, kind.effect, answering=...)`, applies it with
`engine.apply_effect(effect, now)` and records it in `decision_applied`; a replay applies the
recorded effect when the engine observes that event. `reset_description(policy)` says in words
what a reset clears. A user message starts a new cycle by itself (`new_cycle()`).
"""

from supervisor.engine.core import Engine
from supervisor.engine.decisions import effect_of, reset_description
from supervisor.engine.effects import Effect
from supervisor.engine.policy import CATEGORIES, DETECTORS, LIMITS, PROFILES, Policy
from supervisor.engine.types import Check, EscalationRequest, Finding, LimitGauge, LimitHit

__all__ = [
    "CATEGORIES",
    "DETECTORS",
    "LIMITS",
    "PROFILES",
    "Check",
    "Effect",
    "Engine",
    "EscalationRequest",
    "Finding",
    "LimitGauge",
    "LimitHit",
    "Policy",
    "effect_of",
    "reset_description",
]
