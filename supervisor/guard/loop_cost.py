"""What a loop has cost: the tokens and money spent since an episode's onset.

The guard keeps, in the session's state (`GuardState.spend`), its running totals of the
`usage` it recorded and a bounded list of marks (`[seq, tokens, cost, calls, unknown, part]`
after each usage: the running totals, the tool calls made so far, how many usages had no known
cost, and 1 when the usage is a later part of the answer of the one before). A detection or an
escalation names its evidence; the spend since its first evidence step is the running totals
now less those before the answer that asked for the onset's call (the last mark before the
onset, from its answer's first part: `protocol.charge`, the rule `supervisor analyze` charges by
too), and the calls are those made since that answer. So "this loop has cost $1.84 over 14
calls" costs a binary search in at most `MARKS_KEPT` marks, whatever the session's length. An
onset older than the oldest mark kept is counted from that mark ("at least").
"""

from __future__ import annotations

import bisect
from array import array
from typing import Any, TypedDict

from supervisor.guard.state import GuardState
from supervisor.protocol import charge

MARKS_KEPT = 512


class Spent(TypedDict):
    """The spend since an episode's onset, as detections and escalations carry it (`spent`)."""

    tokens: int
    cost_usd: float | None
    """None: some of it has no known cost (a model the price table does not know)."""
    calls: int
    at_least: bool
    """The onset is older than the marks kept: the figures are lower bounds."""


def record(state: GuardState, seq: int, tokens: int, cost: float | None,
           answer: str | None = None) -> None:
    """Count one `usage` event (`seq`) of the session, a part of `answer` (the agent's id of
    it; None: unknown)."""
    spend = state.spend or {"tokens": 0, "cost": 0.0, "unknown": 0, "marks": []}
    spend["tokens"] += max(int(tokens), 0)
    if cost is None:
        spend["unknown"] += 1
    else:
        spend["cost"] += max(float(cost), 0.0)
    continues = int(answer is not None and spend.get("answer") == answer)
    spend["answer"] = answer
    spend["marks"].append([seq, spend["tokens"], spend["cost"], state.actions, spend["unknown"],
                           continues])
    del spend["marks"][:-MARKS_KEPT]
    state.spend = spend


def since(state: GuardState, onset_seq: int) -> Spent | None:
    """The spend from `onset_seq` on; None when the session recorded no usage."""
    spend = state.spend
    if not isinstance(spend, dict) or not spend.get("marks"):
        return None
    marks: list[list[Any]] = spend["marks"]
    # the mark of the answer that asked for the onset's call (-1: none; `protocol.charge`):
    # marks are appended in `seq` order, so a binary search (a detection at most calls of a
    # loop asks for it, on the call's path)
    last = charge.answer_of(marks, onset_seq, key=_seq)
    # from its first part (an answer read in parts: `protocol.charge`); a mark of an older
    # state has no sixth field: an answer of its own
    last = charge.first_part(last, lambda i: marks[i][5:6] == [1])
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


def _seq(mark: list[Any]) -> Any:
    return mark[0]


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


class LoopTally:
    """What a session spent inside its loops, counted as its events arrive (in `seq` order):
    the usage from each escalation's onset (the answer that asked for its first evidence call,
    as `since` counts it) to the escalation, each usage once however many escalations cover it,
    and the calls made in those spans. `stats` counts a recorded session with it (`in_loops`),
    the dashboard every session it follows, live. Usages and calls are kept as running totals
    in compact arrays (8 bytes an entry), so an event costs O(1) and an escalation O(log n)
    (amortised: a span is merged into a later one once)
    however long the session."""

    def __init__(self) -> None:
        self._usage_seqs = array("q")
        self._tokens, self._cost, self._unknown = array("q", [0]), array("d", [0.0]), array(
            "q", [0])
        """Running totals before each usage (index 0: none yet)."""
        self._continues = array("b")
        """Per usage: 1 when it is a later part of the answer of the one before."""
        self._answer: str | None = None
        self._call_seqs = array("q")
        self._usage_spans: list[tuple[int, int]] = []
        """The usages counted: disjoint ranges of indexes [from, to), in order."""
        self._call_spans: list[tuple[int, int]] = []
        """The calls counted: disjoint ranges of `seq` [from, to], in order."""
        self.tokens, self.cost, self.unknown, self.calls = 0, 0.0, 0, 0

    def usage(self, seq: int, tokens: int, cost: float | None, answer: str | None = None
              ) -> None:
        self._usage_seqs.append(seq)
        self._continues.append(int(answer is not None and answer == self._answer))
        self._answer = answer
        self._tokens.append(self._tokens[-1] + max(tokens, 0))
        self._cost.append(self._cost[-1] + (max(cost, 0.0) if cost is not None else 0.0))
        self._unknown.append(self._unknown[-1] + (cost is None))

    def call(self, seq: int) -> None:
        self._call_seqs.append(seq)

    def escalation(self, seq: int, kind: str | None, evidence: list[int]) -> None:
        """An escalation at `seq` whose evidence starts at `min(evidence)`; a budget or an
        operator's pause is no loop."""
        if kind in ("budget", "pause") or not evidence:
            return
        onset = min(evidence)
        charged = charge.span(self._usage_seqs, onset, seq,  # the rule of `protocol.charge`
                              continues=lambda i: bool(self._continues[i]))
        start, end = charged.start, charged.stop
        # an escalation ends after every earlier one: its span swallows those it reaches
        while self._usage_spans and self._usage_spans[-1][1] >= start:
            low, high = self._usage_spans.pop()
            self._count_usages(low, high, -1)
            start, end = min(start, low), max(end, high)
        self._usage_spans.append((start, end))
        self._count_usages(start, end, 1)
        while self._call_spans and self._call_spans[-1][1] >= onset:
            low, high = self._call_spans.pop()
            self.calls -= self._calls_in(low, high)
            onset, seq = min(onset, low), max(seq, high)
        self._call_spans.append((onset, seq))
        self.calls += self._calls_in(onset, seq)

    def _count_usages(self, low: int, high: int, sign: int) -> None:
        self.tokens += sign * (self._tokens[high] - self._tokens[low])
        self.cost += sign * (self._cost[high] - self._cost[low])
        self.unknown += sign * (self._unknown[high] - self._unknown[low])

    def _calls_in(self, low: int, high: int) -> int:
        return (bisect.bisect_right(self._call_seqs, high)
                - bisect.bisect_left(self._call_seqs, low))

    def feed(self, event: dict[str, Any]) -> None:
        """One recorded event (as a dict)."""
        seq, kind = event.get("seq"), event.get("type")
        if not isinstance(seq, int):
            return
        if kind == "usage":
            tokens = sum(v for v in (event.get("input_tokens"), event.get("output_tokens"))
                         if isinstance(v, int) and v > 0)
            cost = event.get("cost_usd")
            answer = event.get("answer")
            self.usage(seq, tokens, float(cost) if isinstance(cost, int | float) else None,
                       answer if isinstance(answer, str) else None)
        elif kind == "tool_call":
            self.call(seq)
        elif kind == "escalation":
            self.escalation(seq, event.get("kind"),
                            [s for s in event.get("evidence") or () if isinstance(s, int)])

    def spent(self) -> Spent | None:
        """The figures as `Spent`; None when the session recorded no usage."""
        if not self._usage_seqs:
            return None
        return Spent(tokens=self.tokens,
                     cost_usd=None if self.unknown else round(self.cost, 6),
                     calls=self.calls, at_least=False)


def in_loops(events: list[dict[str, Any]]) -> Spent | None:
    """What a recorded session spent inside its loops (`LoopTally`); None without usage."""
    tally = LoopTally()
    for event in events:
        tally.feed(event)
    return tally.spent()
