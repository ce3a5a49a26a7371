"""`supervisor import --detect`: an imported run with what the engine saw in it.

The run is replayed through the engine by the analysis replay (`analysis.replay.analyze_events`,
the same replay `supervisor analyze` reports from); the engine's own answers are caught as it
gives them and written into the run the way the guard writes them live: after each tool call
its `detection` and `limit` events and its `verdict` (with the gauges), after each other event
the detections it caused. So the dashboard's Detections tab, the evidence and jump-to-evidence
work on runs of other frameworks as on supervised sessions.

What the recording may not pretend: the agent was not supervised. Every event added carries
`"replayed": true` (its verdict is what the engine would have said; the recorded result
after it is what really happened), and no `escalation` is written (nobody was asked, and an
imported run must not wait in the operator's queue). The run is numbered again (1..n, the
engine's events included) before the replay that is written, so evidence and the `#seq` in the
engine's messages name the steps as the dashboard shows them.
"""

from typing import Any

from supervisor.analysis.replay import RunReport, analyze_events
from supervisor.engine import Engine, Policy
from supervisor.engine.facts import CallFacts
from supervisor.engine.types import Check, Finding


class _Watched(Engine):
    """An engine that keeps, per event seq, the events the guard would have written after it.

    Only observes what the replay asks of the engine (its public `check`/`observe`), so the
    replay itself stays the one in `supervisor.analysis`."""

    def __init__(self, policy: Policy) -> None:
        super().__init__(policy)
        self.after: dict[int, list[dict[str, Any]]] = {}

    def check(self, call: dict[str, Any], now: float, facts: CallFacts | None = None
              ) -> Check:
        check = super().check(call, now, facts)
        events = [f.to_event() for f in check.findings]
        events += [hit.to_event() for hit in check.limits]
        verdict = check.to_verdict(str(call.get("call_id")))
        verdict["gauges"] = {g.name: round(g.value, 6) for g in self.gauges(now)}
        events.append(verdict)
        self._keep(call.get("seq"), events)
        return check

    def observe(self, event: dict[str, Any], now: float) -> list[Finding]:
        found = super().observe(event, now)
        self._keep(event.get("seq"), [f.to_event() for f in found])
        return found

    def _keep(self, seq: Any, events: list[dict[str, Any]]) -> None:
        if isinstance(seq, int) and not isinstance(seq, bool) and seq > 0 and events:
            self.after.setdefault(seq, []).extend(events)


def with_detections(events: list[dict[str, Any]], policy: Policy, *, session: str,
                    source: str) -> tuple[list[dict[str, Any]], RunReport]:
    """`events` (an imported run, in order) with the engine's events put in after the events
    that caused them; and the replay's report.

    Two replays: the first counts the events the engine adds after each event; the run is then
    numbered with room for them and replayed again, so the engine's evidence and the `#seq` in
    its messages name the final numbers (nothing is rewritten after the fact)."""
    first = _Watched(policy)
    analyze_events(events, policy, session=session, source=source, engine=first)
    numbered: list[dict[str, Any]] = []
    room: list[int] = []
    seq = 0
    for event in events:
        seq += 1
        numbered.append({**event, "seq": seq})
        recorded = event.get("seq")
        room.append(len(first.after.get(recorded, ())) if isinstance(recorded, int) else 0)
        seq += room[-1]
    engine = _Watched(policy)
    report = analyze_events(numbered, policy, session=session, source=source, engine=engine)
    out: list[dict[str, Any]] = []
    for event, space in zip(numbered, room, strict=True):
        out.append(event)
        added = engine.after.get(event["seq"], [])
        if len(added) != space:  # the engine is deterministic: this is a bug, not bad input
            raise RuntimeError(f"the replay of {source} differed between two runs at "
                               f"#{event['seq']}")
        out.extend({"v": event.get("v", 1), "seq": event["seq"] + i, "ts": event.get("ts"),
                    **extra, "replayed": True} for i, extra in enumerate(added, 1))
    return out, report
