"""Is this task too big? Signals an operator sees at an escalation (docs/plans.md).

Computed from the session's events since the current task started, as a reader has them
(plain dicts), with no I/O: the dashboard's escalation prompt shows them, and offers `split`
first when they point to it. They are shown, never acted on: the operator decides.

- `files_changed`: distinct files whose content a call changed (the guard's `files_before`
  digests against the result's `files`); unknown (None) when no call of the task carried
  `files_before` (the guard digests only the files a call names as those it writes: a script
  or an agent's own tool may change files unseen, and "0" would then be untrue);
- `distinct_errors`: distinct errors of failed calls, numbers and hex ids masked (the same
  error at another line counts once);
- `steps_since_progress`: tool calls since the last call that changed a file and succeeded
  (or since the task started);
- `failing_places`: distinct files named by failures (`FAILED path::test`,
  `File "path", line N`, `path.py:N:`).

Each has a threshold (`THRESHOLDS`): a task that meets two or more looks like several tasks at
once. The thresholds are hand-picked, conservative starting points (a single-file fix changes
one or two files and fails in one way; fifteen calls without a successful change is long for
one step); they are not calibrated against labelled runs yet.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

THRESHOLDS = {
    "files_changed": 4,
    "distinct_errors": 3,
    "steps_since_progress": 15,
    "failing_places": 3,
}
"""From this value on, a signal points to a split."""
POINTING = 2
"""How many signals must point to a split for `split` to be offered first."""

LABELS = {
    "files_changed": "files changed",
    "distinct_errors": "distinct errors",
    "steps_since_progress": "steps since the last progress",
    "failing_places": "files with failing tests",
}

_MASK = re.compile(r"0x[0-9a-fA-F]+|\b[0-9a-f]{8,}\b|\d+")
_PLACES = (
    re.compile(r"FAILED\s+([\w./-]+?)(?:::|\s)"),
    re.compile(r'File "([^"]+)", line \d+'),
    re.compile(r"([\w./-]+\.\w{1,5}):\d+:"),
)
_ERROR_CHARS = 200


@dataclass(frozen=True, slots=True)
class TaskSize:
    """The signals' values for the current task, and which of them point to a split."""

    values: dict[str, int | None]
    """None: not known (`files_changed` of a task no call of which named the files it writes)."""

    @property
    def pointing(self) -> list[str]:
        """The signals at or above their threshold, in `THRESHOLDS` order."""
        return [name for name, limit in THRESHOLDS.items()
                if (self.values.get(name) or 0) >= limit]

    @property
    def suggests_split(self) -> bool:
        return len(self.pointing) >= POINTING

    def lines(self) -> list[str]:
        """One line per signal: its value, its threshold, and whether it points to a split."""
        return [f"{LABELS[name]}: {_shown(self.values.get(name, 0))} (split from {limit})"
                + ("  ◀" if name in self.pointing else "")
                for name, limit in THRESHOLDS.items()]


def _shown(value: int | None) -> str:
    return "unknown (no call named the files it writes)" if value is None else str(value)


def task_size(events: Iterable[dict[str, Any]]) -> TaskSize:
    """The signals over `events` (a session's events, oldest first), counted from the last
    `task_start` (the whole session when there is none)."""
    changed: set[str] = set()
    errors: set[str] = set()
    places: set[str] = set()
    steps = 0
    before: dict[str, dict[str, Any]] = {}
    measured = False  # a call of the task carried `files_before`
    for event in events:
        kind = event.get("type")
        if kind == "task_start":
            changed, errors, places, steps, before = set(), set(), set(), 0, {}
            measured = False
        elif kind == "tool_call":
            steps += 1
            files = event.get("files_before")
            if isinstance(files, dict):
                before[str(event.get("call_id"))] = files
                measured = True
        elif kind == "tool_result":
            wrote = _changed(before.pop(str(event.get("call_id")), None), event.get("files"))
            changed |= wrote
            if event.get("ok") is False:
                text = str(event.get("error") or event.get("output") or "")
                errors.add(_MASK.sub("#", text.strip()[:_ERROR_CHARS]))
                output = str(event.get("output") or "") + "\n" + text
                for pattern in _PLACES:
                    places.update(m.group(1) for m in pattern.finditer(output))
            elif wrote:
                steps = 0
    return TaskSize({"files_changed": len(changed) if measured else None,
                     "distinct_errors": len(errors),
                     "steps_since_progress": steps, "failing_places": len(places)})


def _changed(before: Any, after: Any) -> set[str]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return set()
    return {str(path) for path, digest in after.items() if before.get(path) != digest}
