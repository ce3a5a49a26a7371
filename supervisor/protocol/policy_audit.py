"""What a policy switches off: the warnings an operator must see.

A policy file can silently disable supervision: every detector `enabled = false`, or
thresholds no run reaches (`nudge = 1e9`), or hard limits of 10^9. It is valid, so nothing
refused it; it must not be invisible. `switched_off` reads a policy as recorded (the
`session_start` event's `policy`, or `Policy.to_dict()`), stdlib only, so `policy show`, the
guard (a system message at session start, which the dashboard shows in the session), `sessions`
and the store's summaries all say the same.
"""

from __future__ import annotations

from typing import Any

OUT_OF_REACH = 10_000
"""A detector whose every threshold is at least this never fires in a real run."""
LIMIT_OUT_OF_REACH = 1e9
"""A hard limit at least this never applies."""
_THRESHOLDS = ("nudge", "block", "escalate", "stop")


def switched_off(policy: Any) -> list[str]:
    """One line per kind of supervision the policy switches off (empty: none)."""
    if not isinstance(policy, dict):
        return []
    out = []
    detectors = policy.get("detectors")
    if isinstance(detectors, dict) and detectors:
        off = sorted(name for name, p in detectors.items() if _detector_off(p))
        if len(off) == len(detectors):  # some are off by default: only all of them is news
            out.append("loop detection is off: every detector is disabled or has thresholds "
                       f"no run reaches ({OUT_OF_REACH} or more)")
    limits = policy.get("limits")
    if isinstance(limits, dict):
        off = sorted(name for name, p in limits.items() if isinstance(p, dict)
                     and _number(p.get("limit")) is not None
                     and _number(p.get("limit")) >= LIMIT_OUT_OF_REACH)  # type: ignore[operator]
        if off:
            out.append(f"hard limits out of reach (10^9 or more): {', '.join(off)}")
    return out


def _detector_off(params: Any) -> bool:
    """Disabled, or every positive threshold it has out of reach."""
    if not isinstance(params, dict):
        return False
    if params.get("enabled") is False:
        return True
    given = [_number(params.get(k)) for k in _THRESHOLDS]
    live = [v for v in given if v is not None and v > 0]
    return bool(live) and all(v >= OUT_OF_REACH for v in live)


def _number(value: Any) -> float | int | None:
    """A number as given (a 400-digit int stays an int: no float overflow), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return value
