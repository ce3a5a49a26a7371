"""A usage line the agent appends does not dodge the store's daily budgets (attack round 5).

The day's spend (`guard/spend.py`) counts each session's usage once, by its `seq`, and is
rebuilt from every session's `usage` lines when its summary is missing: at the first call of
every day, or when the file is gone. The rebuild read any line of type `usage`, so one the agent
appended with a far `seq` (10^15) made that `seq` the session's last counted: none of its real
usage was counted again that day, and the budget never held it. Now the rebuild counts only the
usage lines the guard marked (`store.voice`), as the guard's catch-up does. Real hook calls."""

import json

import pytest

from supervisor.store.spend_file import SPEND_DIR
from tests.test_budgets import POLICY, Store


@pytest.fixture
def store(tmp_path):
    """A store whose daily budget is $0.03: five answers of $0.006."""
    return Store(tmp_path, POLICY.replace("cost_usd_per_day = 0.02", "cost_usd_per_day = 0.03"))


def test_a_forged_usage_does_not_stop_the_real_ones_from_counting(store: Store) -> None:
    for session in ("b", "a"):
        store.hook(session, "SessionStart", source="startup")
    store.answered("b")
    store.call("b")  # $0.006 in another session: the rebuild reads both
    store.answered("a")
    store.call("a")  # $0.012
    events = store.root / "sessions" / "a" / "events.jsonl"
    last = json.loads(events.read_bytes().splitlines()[-1])
    with events.open("a") as f:  # what a shell line of the agent does
        f.write(json.dumps({"v": 1, "seq": 10**15, "ts": last["ts"], "type": "usage",
                            "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}) + "\n")
    (summary,) = (store.root / SPEND_DIR).glob("*.json")
    summary.unlink()  # as at a day's first call: the day's spend is rebuilt from the store
    held: list[bool] = []
    while len(held) < 6 and True not in held:  # $0.018, $0.024 pass; $0.030 reaches $0.03
        store.answered("a")
        held.append(store.call("a") is not None)
    assert held == [False, False, True], "the budget never held the session"
    day = json.loads(summary.read_text())
    assert day["totals"]["all"]["cost_usd"] == pytest.approx(0.030)
    assert day["sessions"]["a"] < 10**15
