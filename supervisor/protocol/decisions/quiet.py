"""`quiet`: one detector (or one loop signature of it) is quieted for some calls or the rest
of the session. Its findings on those calls are dropped; its memory keeps counting; hard limits
are never quieted. The agent is told nothing. A quiet with `lift: true` ends the quiet of that
detector (and signature) at once: an operator who quieted the wrong thing can take it back.
"""

from collections.abc import Mapping
from typing import Any

from supervisor.protocol.decisions.base import (
    Context,
    DecisionKind,
    Desk,
    EffectFacts,
    Ignored,
    Result,
)
from supervisor.protocol.names import MAX_QUIET_CALLS


class Quiet(DecisionKind):
    name = "quiet"
    title = "Quiet"
    summary = ("one detector (or one signature of it) is quieted for N calls or the session, or "
               "its quiet lifted")
    needs = "detector"
    effect = "quiet"
    cli = "supervisor quiet SESSION --detector NAME [--signature SIG] [--calls N] [--lift]"

    def fields_problem(self, value: Mapping[str, Any]) -> str | None:
        if not value.get("detector"):
            return "quiet needs a 'detector'"
        return None

    def carry_out(self, desk: Desk, decision: Mapping[str, Any], ctx: Context,
                  effect: EffectFacts) -> Result | Ignored:
        detector = str(decision.get("detector") or "")
        known = desk.detectors()
        if detector not in known:
            return Ignored(f"unknown detector '{detector}' (one of {', '.join(known)})")
        signature = decision.get("signature")
        calls = decision.get("calls")
        what = detector + (f" (signature {signature})" if signature else "")
        if decision.get("lift"):
            return Result(None, None, f"{what}: quiet lifted, its findings count again")
        span = (f"for the next {calls} tool call(s)" if isinstance(calls, int) and calls > 0
                else "until the session ends")
        return Result(None, None, f"{what} quiet {span}")


def quiet_fields_problem(value: Mapping[str, Any]) -> str | None:
    """Why the `quiet` fields (`detector`, `signature`, `calls`, `lift`) of any decision line
    are not valid, or None."""
    for name in ("detector", "signature"):
        if value.get(name) is not None and (not isinstance(value[name], str)
                                            or not value[name] or len(value[name]) > 200):
            return f"field '{name}' must be a non-empty string of at most 200 characters or null"
    if value.get("lift") is not None and not isinstance(value["lift"], bool):
        return "field 'lift' must be true, false or null"
    if value.get("lift") and value.get("calls") is not None:
        return "a quiet's 'lift' takes no 'calls'"
    calls = value.get("calls")
    if calls is not None and (not isinstance(calls, int) or isinstance(calls, bool)
                              or not 1 <= calls <= MAX_QUIET_CALLS):
        return f"field 'calls' must be an integer between 1 and {MAX_QUIET_CALLS} or null"
    return None


KIND = Quiet()
