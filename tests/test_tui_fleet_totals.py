"""The dashboard's queue and root-line totals are kept as sessions change (`FleetTotals`), not
summed over every session at each tick: after any series of changes they must equal a full
recount."""

import random
import shutil
from pathlib import Path

import pytest
from tui_support import FROZEN_NOW, call, escalation, start, write_events

from supervisor.store.follower import Follower
from supervisor.tui.model import DashboardModel, day_of

DAY = 86400.0


def _recount(model: DashboardModel, now: float) -> dict[str, object]:
    """The totals as the dashboard summed them before: every session looked at."""
    day = day_of(now)
    spent = [st.cost_by_day[day] for st in model.sessions.values() if day in st.cost_by_day]
    looping = [st.loops for st in model.sessions.values() if st.loops.tokens or st.loops.cost]
    pending = []
    for sid, st in model.sessions.items():
        if st.gone or not st.summary.needs_you():
            continue
        pending += [(sid, eid) for eid in st.summary.needs_you()]
    return {"day": (pytest.approx(sum(spent)), len(spent)),
            "loops": (pytest.approx(sum(t.cost for t in looping)), len(looping),
                      sum(1 for t in looping if t.unknown)),
            "pending": sorted(pending)}


def _kept(model: DashboardModel, now: float) -> dict[str, object]:
    entries = model.queue(now) + model.stale(now)
    return {"day": model.day_cost(now), "loops": model.loop_cost(),
            "pending": sorted((sid, str(esc["escalation_id"])) for sid, esc in entries)}


def _usage(cost: float | None, ts: float) -> dict[str, object]:
    return {"type": "usage", "input_tokens": 100, "output_tokens": 10, "cost_usd": cost,
            "ts": ts}


@pytest.mark.parametrize("seed", range(4))
def test_totals_equal_a_full_recount_after_random_changes(root: Path, seed: int) -> None:
    rng = random.Random(seed)
    model, follower = DashboardModel(root), Follower(root)
    now = FROZEN_NOW
    names = [f"s{i}" for i in range(8)]
    escalations = 0
    seen = {"loops": 0, "spent": 0, "waiting": 0}
    for _step in range(120):
        sid = rng.choice(names)
        folder = root / "sessions" / sid
        action = rng.choice(["start", "calls", "usage", "usage", "escalate", "escalate",
                             "answer", "end", "remove", "forget", "next-day"])
        if action == "start" or not folder.exists():
            write_events(root, sid, [start(), *call(1)])
        elif action == "calls":
            write_events(root, sid, call(rng.randint(2, 9)))
        elif action == "usage":  # today or yesterday, cost known or not
            when = now - rng.choice([0.0, DAY])
            write_events(root, sid, [_usage(rng.choice([0.25, 1.5, None]), when)])
        elif action == "escalate":  # a loop: its evidence covers the usage before it
            escalations += 1
            write_events(root, sid, [*call(1), _usage(0.75, now), *call(3),
                                     escalation(f"esc-{escalations}", evidence=[1, 2])])
        elif action == "answer":
            st = model.sessions.get(sid)
            waiting = list(st.summary.pending) if st is not None else []
            if waiting:
                write_events(root, sid, [{"type": "decision_applied",
                                          "escalation_id": rng.choice(waiting),
                                          "decision_id": f"d{_step}", "action": "skip",
                                          "outcome": "skipped"}])
        elif action == "end":
            write_events(root, sid, [{"type": "session_end", "status": "completed"}])
        elif action == "remove":  # its folder vanishes: shown as vanished, not waiting
            shutil.rmtree(folder)
        elif action == "forget" and sid in model.sessions:  # pruned on purpose
            shutil.rmtree(folder)
            model.apply(follower.scan())
            model.forget(sid)
        elif action == "next-day":
            now += DAY / 2
        model.apply(follower.scan())
        assert _kept(model, now) == _recount(model, now), (seed, _step, action, sid)
        seen["loops"] += bool(model.loop_cost()[1])
        seen["spent"] += bool(model.day_cost(now)[1])
        seen["waiting"] += bool(model.totals.waiting)
    assert all(seen.values()), seen  # the series did reach every total


def test_the_queue_looks_only_at_the_sessions_that_wait(root: Path) -> None:
    for i in range(30):
        write_events(root, f"s{i:02d}", [start(), *call(1)])
    write_events(root, "s07", [escalation("esc-a")])
    model = DashboardModel(root)
    model.apply(Follower(root).scan())
    assert model.totals.waiting == {"s07"}
    looked: list[str] = []
    liveness = model.liveness
    model.liveness = lambda sid, now: (looked.append(sid), liveness(sid, now))[1]  # type: ignore[method-assign]
    assert [e.session_id for e in model.queue(FROZEN_NOW)] == ["s07"]
    assert looked == ["s07"]
