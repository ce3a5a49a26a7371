"""What a loop has cost: the tokens and money spent since an episode's onset.

The guard keeps, in the session's state (`GuardState.spend`), its running totals of the
`usage` it recorded and a bounded list of marks (`[seq, tokens, cost, calls, unknown]` after
each usage: the running totals, the tool calls made so far, and how many usages had no known
cost). A detection or an escalation names its evidence; the spend since its first evidence step
is the running totals now less those before the answer that asked for the onset's call (the
last mark before the onset), and the calls are those made since that answer. So "this loop has
cost $1.84 over 14 calls" costs a walk over at most `MARKS_KEPT` marks, whatever the session's
length. An onset older than the oldest mark kept is counted from that mark ("at least").
"""

from __future__ import annotations

from typing import Any, TypedDict

from supervisor.guard.state import GuardState

MARKS_KEPT = 512


class Spent(TypedDict):
    """The spend since an episode's onset, as detections and escalations carry it (`spent`)."""

    tokens: int
    cost_usd: float | None
    """None: some of it has no known cost (a model the price table does not know)."""
    calls: int
    at_least: bool
    """The onset is older than the marks kept: the figures are lower bounds."""


def record(state: GuardState, seq: int, tokens: int, cost: float | None) -> None:
    """Count one `usage` event (`seq`) of the session."""
    spend = state.spend or {"tokens": 0, "cost": 0.0, "unknown": 0, "marks": []}
    spend["tokens"] += max(int(tokens), 0)
    if cost is None:
        spend["unknown"] += 1
    else:
        spend["cost"] += max(float(cost), 0.0)
    spend["marks"].append([seq, spend["tokens"], spend["cost"], state.actions, spend["unknown"]])
    del spend["marks"][:-MARKS_KEPT]
    state.spend = spend


def since(state: GuardState, onset_seq: int) -> Spent | None:
    """The spend from `onset_seq` on; None when the session recorded no usage."""
    spend = state.spend
    if not isinstance(spend, dict) or not spend.get("marks"):
        return None
    marks: list[list[Any]] = spend["marks"]
    last = -1  # the last mark before the onset: the answer that asked for the onset's call
    for index, mark in enumerate(marks):
        if mark[0] >= onset_seq:
            break
        last = index
    at_least = last < 0 and len(marks) >= MARKS_KEPT  # the marks before it are gone
    zero = [0, 0, 0.0, 0, 0]
    if at_least:
        base, calls_base = marks[0], marks[0][3]
    else:
        base = marks[last - 1] if last >= 1 else zero
        calls_base = marks[last][3] if last >= 0 else 0
    unknown = spend["unknown"] - base[4]
    return {"tokens": spend["tokens"] - base[1],
            "cost_usd": None if unknown else round(spend["cost"] - base[2], 6),
            "calls": max(state.actions - calls_base, 0), "at_least": at_least}


def sentence(spent: Spent | None) -> str | None:
    """"this loop has cost $1.84 over 14 calls" (None: nothing recorded)."""
    if spent is None or not (spent["tokens"] or spent["cost_usd"]):
        return None
    more = "at least " if spent["at_least"] else ""
    cost = spent["cost_usd"]
    money = (f"${cost:.2f}" if cost is not None and cost >= 0.01 else
             f"${cost:.4f}" if cost is not None else f"{spent['tokens']:,} tokens (cost unknown)")
    calls = spent["calls"]
    return f"this loop has cost {more}{money} over {calls} call{'s' if calls != 1 else ''}"


def annotate(state: GuardState, event: dict[str, Any]) -> dict[str, Any]:
    """A `detection` or `escalation` event with `spent` (the spend since its first evidence
    step) when the session recorded usage; the same event otherwise."""
    evidence = [s for s in event.get("evidence") or () if isinstance(s, int)]
    found = since(state, min(evidence)) if evidence else None
    if found is not None:
        event["spent"] = found
    return event


def in_loops(events: list[dict[str, Any]]) -> Spent | None:
    """What a recorded session spent inside its loops: the usage from each escalation's onset
    (the answer that asked for its first evidence call, as `since` counts it) to the
    escalation, each usage once however many escalations cover it; None without usage."""
    usages: list[tuple[int, int, float | None]] = []
    spans: list[tuple[int, int]] = []
    calls: list[int] = []
    for event in events:
        seq, kind = event.get("seq"), event.get("type")
        if not isinstance(seq, int):
            continue
        if kind == "usage":
            tokens = sum(v for v in (event.get("input_tokens"), event.get("output_tokens"))
                         if isinstance(v, int) and v > 0)
            cost = event.get("cost_usd")
            usages.append((seq, tokens, float(cost) if isinstance(cost, int | float) else None))
        elif kind == "tool_call":
            calls.append(seq)
        elif kind == "escalation" and event.get("kind") not in ("budget", "pause"):
            evidence = [s for s in event.get("evidence") or () if isinstance(s, int)]
            if evidence:
                spans.append((min(evidence), seq))
    if not usages:
        return None
    inside: set[int] = set()
    call_set: set[int] = set()
    for onset, end in spans:
        before = [i for i, u in enumerate(usages) if u[0] < onset]
        start = usages[before[-1]][0] if before else onset  # the answer that asked for it
        inside.update(i for i, u in enumerate(usages) if start <= u[0] <= end)
        call_set.update(c for c in calls if onset <= c <= end)
    costs = [usages[i][2] for i in inside]
    return Spent(tokens=sum(usages[i][1] for i in inside),
                 cost_usd=None if None in costs else round(sum(c or 0.0 for c in costs), 6),
                 calls=len(call_set), at_least=False)
