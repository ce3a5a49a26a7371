"""Which model answers a tool call is charged: the one rule behind every figure of a loop's cost.

A `usage` event is the cost of one model answer. The answer that asked for a tool call is the
last `usage` recorded before the call: the calls of one answer (a parallel batch) share it,
and an answer that asked for no call (a reply to the person before the next prompt) is charged
to none. Every figure of what a loop cost counts with these functions, so they cannot drift
apart (`tests/test_hook_usage.py` reads all three off one recorded session):

- the guard's `spent` on a detection or an escalation, and `supervisor stats` (summed over the
  session's escalations: `guard.loop_cost`): a span of calls, from the loop's onset (its first
  evidence call) to the event, is charged every answer from the one that asked for the onset's
  call to the last one before the event (`span`);
- `supervisor analyze` (`analysis.replay`, `loop_cost_usd`): the calls inside the loops the
  replay found, each charged the answer that asked for it (`answer_of`), each answer once.

An answer read in parts (its lines split across reads: parallel calls, a line read after the
batch) is several `usage` events with the same `answer` (the agent's id of the answer, as the
event records it): the call is charged every part, not only the last one before it. An agent
writes one answer's lines before the next answer's, so the parts of an answer are consecutive
usages (`parts`); a usage without `answer` (an older recording) is an answer of its own. A
span starts at the first part of its onset's answer (`first_part`); its later parts, recorded
after the event, are not in it (the guard tells the figure when the event is written).

They take the usages in order, as positions in the session (`seq`, or the place in a file),
read through `key` when they are records of another shape; stdlib only (the guard's step path
counts with it).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any


def answer_of(usages: Sequence[Any], call: int,
              key: Callable[[Any], int] | None = None) -> int:
    """The index in `usages` (positions, in order) of the answer that asked for the call at
    position `call`: the last usage before it; -1 when none came before."""
    return bisect.bisect_left(usages, call, key=key) - 1


def span(usages: Sequence[Any], onset: int, end: int,
         key: Callable[[Any], int] | None = None,
         continues: Callable[[int], bool] | None = None) -> range:
    """The indexes in `usages` that the calls from position `onset` to `end` are charged: from
    the answer that asked for the onset's call (its first part: `continues(i)` says whether
    the usage at `i` is a later part of the answer of the one before it) through the last usage
    at or before `end`."""
    start = answer_of(usages, onset, key)
    if continues is not None:
        start = first_part(start, continues)
    return range(max(start, 0), bisect.bisect_right(usages, end, key=key))


def first_part(index: int, continues: Callable[[int], bool]) -> int:
    """The index of the first part of the answer of the usage at `index` (`continues(i)`: the
    usage at `i` is a later part of the answer of the one before it); -1 stays -1."""
    while index > 0 and continues(index):
        index -= 1
    return index


def parts(answers: Sequence[str | None], index: int) -> range:
    """The indexes of the parts of the answer of the usage at `index` (`answers`: each usage's
    `answer`, None when it has none): the consecutive usages around it with the same `answer`
    (only `index` when it has none; empty when `index` is -1, no answer)."""
    if index < 0:
        return range(0)
    answer = answers[index]
    if answer is None:
        return range(index, index + 1)
    start, end = index, index + 1
    while start > 0 and answers[start - 1] == answer:
        start -= 1
    while end < len(answers) and answers[end] == answer:
        end += 1
    return range(start, end)
