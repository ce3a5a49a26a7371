"""What sessions spent inside their loops, counted as events arrive (`guard.loop_cost.LoopTally`):
the same figures as a plain count over the whole recording, whatever the spans' overlaps; and
the dashboard sums them over every session it follows (the fleet's loops) in its root line."""

import random
from pathlib import Path

import pytest
from tui_support import call, escalation, load, make_app, screen_text, start, write_events

from supervisor.guard import loop_cost
from supervisor.guard.loop_cost import in_loops
from supervisor.guard.state import GuardState
from supervisor.store.follower import Follower
from supervisor.tui.model import DashboardModel


def reference(events: list[dict]) -> tuple[int, float, int]:
    """(tokens, cost, calls) inside loops by the definition: every usage from the last answer
    before an escalation's onset to the escalation, every call from its onset, each once."""
    usages = [e for e in events if e["type"] == "usage"]
    inside_usages: set[int] = set()
    inside_calls: set[int] = set()
    for esc in (e for e in events if e["type"] == "escalation" and e.get("kind") != "budget"):
        onset, end = min(esc["evidence"]), esc["seq"]
        before = [u for u in usages if u["seq"] < onset]
        while len(before) > 1 and before[-1].get("answer") is not None and \
                before[-2].get("answer") == before[-1]["answer"]:
            before.pop()  # the answer's first part (an answer read in parts)
        start_seq = before[-1]["seq"] if before else onset
        inside_usages.update(u["seq"] for u in usages if start_seq <= u["seq"] <= end)
        inside_calls.update(e["seq"] for e in events
                            if e["type"] == "tool_call" and onset <= e["seq"] <= end)
    chosen = [u for u in usages if u["seq"] in inside_usages]
    return (sum(u["input_tokens"] + u["output_tokens"] for u in chosen),
            sum(u["cost_usd"] for u in chosen), len(inside_calls))


@pytest.mark.parametrize("seed", range(20))
def test_the_running_tally_is_the_count_over_the_whole_recording(seed: int) -> None:
    rng = random.Random(seed)
    events: list[dict] = []
    answer = 0
    for seq in range(1, 400):
        kind = rng.choice(["tool_call", "tool_call", "usage", "other", "escalation"])
        if kind == "usage":
            answer += rng.random() < 0.6  # else a later part of the answer before
            events.append({"type": "usage", "seq": seq, "input_tokens": rng.randint(0, 900),
                           "output_tokens": rng.randint(0, 90),
                           "cost_usd": round(rng.random() / 100, 6)})
            if rng.random() < 0.9:  # (an older recording names none)
                events[-1]["answer"] = f"msg_{answer}"
        elif kind == "escalation" and rng.random() < 0.3:
            onset = rng.randint(max(1, seq - 60), seq)
            events.append({"type": "escalation", "seq": seq, "kind": rng.choice(
                ["exact_repeat", "cycle", "budget"]), "evidence": [onset + 2, onset]})
        else:
            events.append({"type": "other" if kind == "escalation" else kind, "seq": seq})
    tokens, cost, calls = reference(events)
    spent = in_loops(events)
    assert spent is not None
    assert (spent["tokens"], spent["calls"]) == (tokens, calls)
    assert spent["cost_usd"] == pytest.approx(cost)


def test_the_guards_spent_counts_an_answer_read_in_parts_from_its_first_part() -> None:
    """An answer of two parallel calls read in two parts, the second after the first call: a
    loop whose onset is the second call is charged the whole answer (the second part alone
    before), and both calls since it."""
    state = GuardState()
    loop_cost.record(state, 1, 1050, 0.006, "msg_1")
    state.actions += 1  # the first call, seq 2
    loop_cost.record(state, 3, 386, 0.0058, "msg_1")
    state.actions += 1  # the second, seq 4: the loop's onset
    assert loop_cost.since(state, 4) == {"tokens": 1436, "cost_usd": 0.0118, "calls": 2,
                                         "at_least": False}
    state.spend["marks"][-1] = state.spend["marks"][-1][:5]  # a mark an older guard saved
    assert loop_cost.since(state, 4)["tokens"] == 386  # type: ignore[index]


def looping(cost: float) -> list[dict]:
    """A session whose answers cost `cost` each and whose `make` loop escalates."""
    events = [start()]
    for n in range(1, 4):
        events += [{"type": "usage", "input_tokens": 100, "output_tokens": 10,
                    "cost_usd": cost}, *call(n)]
    return [*events, escalation(evidence=[6, 9])]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_fleet_view_sums_what_every_sessions_loops_cost(root: Path) -> None:
    write_events(root, "ci-1", looping(0.25))
    write_events(root, "ci-2", looping(0.5))
    write_events(root, "calm", [start(), *call(1)])
    model = DashboardModel(root)
    model.apply(Follower(root).scan())
    # the escalation (#11) of the calls from #6 on: the answers #5 and #8 of each session
    assert model.loop_cost() == (pytest.approx(2 * 0.25 + 2 * 0.5), 2, 0)
    app = make_app(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await load(pilot, initial=True)
        assert "in loops $1.50 in 2 sessions" in screen_text(app)


@pytest.mark.anyio
async def test_a_loop_of_a_fraction_of_a_cent_is_not_said_to_cost_nothing(root: Path) -> None:
    """The root line counts money as the limits do ($0.002): "in loops $0.00" beside a queue
    entry saying the loop cost $0.0020 was not true (the demo's own loop shows it)."""
    write_events(root, "cheap", looping(0.001))
    app = make_app(root)
    async with app.run_test(size=(160, 40)) as pilot:
        await load(pilot, initial=True)
        text = screen_text(app)
        assert "in loops $0.002 in 1 session" in text
        assert "today $0.003 in 1 session" in text


def test_the_spend_since_an_onset_counts_from_the_answer_before_it() -> None:
    """`since`: the running totals less those before the answer that asked for the onset's
    call (the last mark before the onset), the calls since that answer; at the edges too."""
    from supervisor.guard.loop_cost import MARKS_KEPT, record, since
    from supervisor.guard.state import GuardState

    state = GuardState()
    assert since(state, 1) is None  # no usage recorded
    for seq in (10, 20, 30):  # an answer (100 tokens, $1) at each, a call after it
        record(state, seq, 100, 1.0)
        state.actions += 1
    assert since(state, 5) == {"tokens": 300, "cost_usd": 3.0, "calls": 3, "at_least": False}
    assert since(state, 10) == {"tokens": 300, "cost_usd": 3.0, "calls": 3, "at_least": False}
    assert since(state, 11) == {"tokens": 300, "cost_usd": 3.0, "calls": 3, "at_least": False}
    assert since(state, 21) == {"tokens": 200, "cost_usd": 2.0, "calls": 2, "at_least": False}
    assert since(state, 31) == {"tokens": 100, "cost_usd": 1.0, "calls": 1, "at_least": False}
    for seq in range(40, 40 + MARKS_KEPT):  # the oldest marks are dropped
        record(state, seq, 1, None)
    assert since(state, 12) == {"tokens": MARKS_KEPT - 1, "cost_usd": None, "calls": 0,
                                "at_least": True}
    assert since(state, 40 + MARKS_KEPT - 1) == {"tokens": 2, "cost_usd": None, "calls": 0,
                                                 "at_least": False}
