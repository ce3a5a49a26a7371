"""What the event log says the guard already did, for a state that does not know it.

The guard's state (`state.json`) is saved at the end of each step, after the step's events were
written. Two things can leave the state behind the log:

- the state is lost or reset (unreadable, another version): a fresh state would read
  `control.jsonl` from the start and apply every earlier operator decision again (an old
  rollback run a second time deletes newer work);
- the process is killed between writing `decision_applied` and saving: the next step would read
  the same decision again and apply it twice.

So the state records how far into `events.jsonl` it is up to date (`log_offset`), and each load
scans what lies past it (nothing, normally: a few lines of other writers) for what only the
guard writes: `decision_applied`/`decision_ignored` (by decision id), `escalation`, `task_start`
and `session_end`. A fresh state scans the whole log once. Stdlib only: the hook runs this.

The agent's side can append to `events.jsonl` too, so a line of a type the guard seals
(`store.voice`: decisions' outcomes, escalations, verdicts, the end) counts only with its seal:
one appended `decision_applied` released a held agent and granted its loop a thousand repeats,
and one a cycle (`guidance`) kept a loop from ever escalating. Such a line is left out of the
facts and of the events handed back, as every reader shows it (`unsealed`). Every other line
counts only with the guard's mark (in a session whose guard marks them): calls the agent
appended between the repeats of a loop kept it from escalating, a `task_start` after each call
restarted the engine's counts, an `allow` verdict released a refused call.

A state that is only behind (not lost) also asks for every event past it (`scan(...,
everything=True)`): the steps it missed are done again on it (`supervisor.guard.catch_up`),
because a state may be saved lazily (the resident hook server's) and its process killed first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from supervisor.protocol.bounded import loads
from supervisor.protocol.linereader import bounded_lines

if TYPE_CHECKING:
    from supervisor.store.voice import Voucher

_NUMBERED = re.compile(r"(?:esc-|t)(\d{1,9})")
_ENVELOPE = frozenset({"v", "seq", "ts", "seal"})
_CHECKED = frozenset({"decision_applied", "decision_ignored", "escalation", "task_start",
                      "session_end"})
"""The types the facts come from: a fresh state's scan reads and checks only those."""
_WANTED = tuple(f'"{kind}"'.encode() for kind in _CHECKED)


@dataclass(slots=True)
class LogFacts:
    """What a stretch of the event log says the guard did."""

    handled: list[str] = field(default_factory=list)
    """Decision ids with a recorded outcome (applied or ignored), in order."""
    applied: list[dict[str, Any]] = field(default_factory=list)
    """The `decision_applied` events, in order."""
    escalations: int = 0
    """The highest `esc-N` number used."""
    tasks: int = 0
    """The highest `tN` task number used."""
    ended: str | None = None
    """The status of the last `session_end`, if the session ended."""
    pending: dict[str, Any] | None = None
    """The last escalation of the stretch that nothing in it answered (no `decision_applied`
    naming it, no end), as the guard keeps it pending (without its loop's signature, which
    the log does not hold): a state lost, set aside or killed before it saved no longer
    forgets that the agent waits for an operator (`rm state.json` released a held agent)."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Every event of the stretch, in order (only when asked for: `scan(everything=True)`)."""


def scan(path: Path, start: int = 0, everything: bool = False,
         vouch: Callable[[], Voucher | None] | None = None) -> LogFacts:
    """The facts recorded in `path` from byte `start` on (a missing file: none); with
    `everything`, its events too (`LogFacts.events`). `vouch` makes the session's `Voucher`
    (None: no key, nothing can be checked), called at the first line it checks: a line the
    guard did not write (`Voucher.vouches`: its seal or mark does not hold) is left out."""
    facts = LogFacts()
    voucher: Voucher | None = None
    vouched = False
    try:
        stream = path.open("rb")
    except OSError:
        return facts
    with stream:
        stream.seek(start)
        for line in bounded_lines(stream):
            if line.oversized or not (everything or any(m in line.data for m in _WANTED)):
                continue
            try:
                event = loads(line.data)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            if vouch is not None and (everything or event.get("type") in _CHECKED):
                if not vouched:
                    voucher, vouched = vouch(), True
                if voucher is not None and not voucher.vouches(line.data, event):
                    continue
            _note(facts, event)
            if everything:
                facts.events.append(event)
    return facts


def _note(facts: LogFacts, event: dict[str, Any]) -> None:
    kind = event.get("type")
    if kind in ("decision_applied", "decision_ignored"):
        decision_id = event.get("decision_id")
        if isinstance(decision_id, str):
            facts.handled.append(decision_id)
            if kind == "decision_applied":
                facts.applied.append(event)
                if facts.pending is not None and (
                        event.get("escalation_id") == facts.pending.get("escalation_id")):
                    facts.pending = None
    elif kind == "escalation":
        facts.escalations = max(facts.escalations, _number(event.get("escalation_id"), "esc-"))
        if isinstance(event.get("escalation_id"), str):
            facts.pending = {k: v for k, v in event.items() if k not in _ENVELOPE}
    elif kind == "task_start":
        facts.tasks = max(facts.tasks, _number(event.get("task_id"), "t"))
    elif kind == "session_end" and isinstance(event.get("status"), str):
        facts.ended = event["status"]
        facts.pending = None


def _number(value: Any, prefix: str) -> int:
    if not isinstance(value, str) or not value.startswith(prefix):
        return 0
    match = _NUMBERED.fullmatch(value)
    return int(match.group(1)) if match else 0
