"""The guard's own settings: checkpoints, escalation deadline and fallback.

(How many repeats an approval allows and how many resets a session gets are the policy's
`approve_repeats` and `limits.resets_per_conversation`: the engine applies them.)

Stdlib only (the hook loads them on every tool call). They come from the SDK's arguments, or
from the `[guard]` table of a policy file; every default is documented in docs/guard.md.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

FALLBACKS = ("skip", "abort")


@dataclass(frozen=True, slots=True)
class GuardSettings:
    """How the guard checkpoints and escalates."""

    checkpoints: bool = True
    """Keep git checkpoints of the working directory."""
    checkpoint_at_start: bool = True
    checkpoint_every: int = 25
    """An automatic checkpoint every N tool calls (0: never; the seeds say 25)."""
    checkpoint_max_file_bytes: int = 10 * 1024 * 1024
    escalation_deadline_s: float = 600.0
    """How long an escalation waits for the operator before the fallback applies (0: forever)."""
    pause_deadline_s: float = 0.0
    """How long an operator's pause holds before the fallback applies (0: until an operator
    resumes the agent or decides): a pause is a person's choice, not a loop to cut short."""
    fallback: str = "skip"
    """What the deadline does: `skip` the task (the seeds' choice) or `abort` the session."""
    memory: bool = True
    """The project's failure memory (docs/memory.md): learn from this session's failures,
    and tell the agent what failed before. False: neither."""
    memory_expire_days: float = 30.0
    """A remembered failure not seen again for this many days is no longer told (0: never
    expires)."""
    memory_project: str = ""
    """The project whose memory the session shares (empty: the work tree's repository)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GuardSettings:
        """Settings from a dict (such as a policy file's `[guard]` table); `ValueError` with a
        clear message for unknown keys and wrong values."""
        if not isinstance(data, dict):
            raise ValueError("guard settings must be a table")
        known = _FIELDS
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in known:
                raise ValueError(f"unknown guard setting '{key}' (known: {', '.join(known)})")
            default = known[key].default
            if isinstance(default, bool):
                ok = isinstance(value, bool)
            elif isinstance(default, int):
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            elif isinstance(default, float):
                ok = isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
            elif key == "fallback":
                ok = value in FALLBACKS
            else:
                ok = isinstance(value, str) and len(value) <= 200
            if not ok:
                expected = (
                    f"one of {', '.join(FALLBACKS)}" if key == "fallback"
                    else "a name (text, at most 200 characters)" if isinstance(default, str)
                    else f"a {'boolean' if isinstance(default, bool) else 'non-negative number'}"
                )
                raise ValueError(f"guard setting '{key}' must be {expected}, not {value!r}")
            values[key] = float(value) if isinstance(default, float) else value
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        # every field is a plain value: no `asdict` (a deep copy), which the hook paid per call
        return {name: getattr(self, name) for name in _FIELDS}


_FIELDS = {f.name: f for f in fields(GuardSettings)}
