"""Daily budgets over the sessions of a store (guard/spend.py), through the hook platform
in-process with real files: the call that would cross a budget is held for the operator with
the budget and the spend named, a warning at 80 %, an approval raises the budget once, two
calls at once cannot both pass a budget with room for one, the spend survives the loss of its
summary (rebuilt from the store), and a bad table is reported, never a crash."""

import json
import threading
import time
from pathlib import Path

import pytest

from supervisor.guard.spend import Spending, budget_rules
from supervisor.hooks.budget import Budget
from supervisor.hooks.runtime import run_safely
from supervisor.operator.send import send_decision
from supervisor.store.spend_file import SPEND_DIR
from tests.guard_helpers import of_type, wait_for
from tests.hook_helpers import events, payload
from tests.notify_helpers import Receiver, write_config

SONNET = "claude-sonnet-4-5-20250929"
USAGE = {"input_tokens": 1000, "output_tokens": 50, "cache_read_input_tokens": 5000,
         "cache_creation_input_tokens": 200}
"""$0.006 with Claude Sonnet 4.5's prices."""
POLICY = """
[guard]
checkpoints = false
escalation_deadline_s = 1
fallback = "skip"

[budgets.store]
cost_usd_per_day = 0.02
raise_by = 0.01
"""


class Store:
    """Hook calls of several Claude Code sessions against one store root, in this process."""

    def __init__(self, tmp: Path, policy: str = POLICY) -> None:
        self.root, self.cwd = tmp / "store", tmp / "ws"
        self.root.mkdir()
        self.cwd.mkdir()
        self.tmp = tmp
        (self.root / "policy.toml").write_text(policy)
        self.calls = 0

    def transcript(self, session: str) -> Path:
        return self.tmp / f"{session}.jsonl"

    def hook(self, session: str, event: str, timeout: float = 60, **fields: object) -> dict | None:
        body = {**payload(event, session=session, cwd=self.cwd, **fields),
                "transcript_path": str(self.transcript(session))}
        complaints: list[str] = []
        text = run_safely("claude-code", json.dumps(body).encode(), self.root, Budget(timeout),
                          complaints.append)
        assert complaints == []
        return json.loads(text) if text else None

    def answered(self, session: str) -> None:
        """The model answered (one message with `USAGE`) in `session`'s transcript."""
        self.calls += 1
        with self.transcript(session).open("a") as handle:
            handle.write(json.dumps({"type": "assistant", "message": {
                "id": f"msg_{self.calls}", "role": "assistant", "model": SONNET,
                "content": [], "usage": USAGE}}) + "\n")

    def call(self, session: str) -> dict | None:
        self.calls += 1
        return self.hook(session, "PreToolUse", tool_name="Read",
                         tool_input={"file_path": f"/w/f{self.calls}.py"},
                         tool_use_id=f"toolu_{self.calls}")

    def events(self, session: str, kind: str) -> list[dict]:
        return [e for e in events(self.root, session) if e["type"] == kind]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def test_the_call_that_would_cross_a_daily_budget_of_the_store_is_held(store: Store) -> None:
    for session in ("a", "b"):
        store.hook(session, "SessionStart", source="startup")
    store.answered("a")
    assert store.call("a") is None  # $0.006
    store.answered("a")
    assert store.call("a") is None  # $0.012
    store.answered("b")
    refused = store.call("b")  # $0.018 spent, and b's next answer would cost $0.006 more
    (escalation,) = store.events("b", "escalation")
    assert escalation["kind"] == "budget"
    assert escalation["reason"] == (  # a's last call is under way: its answer is expected
        "daily budget 'store' of every session of this store reached: $0.018 spent today and "
        "$0.006 expected for calls under way, of $0.02; approving raises it by $0.01, once")
    assert refused is not None and refused["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert store.events("a", "escalation") == []
    limit = [e for e in store.events("b", "limit") if e["action"] == "pause"]
    assert limit[0]["name"] == "budget:store" and limit[0]["value"] == pytest.approx(0.018)


@pytest.mark.slow
def test_a_warning_at_80_percent_once(store: Store) -> None:
    store.hook("a", "SessionStart", source="startup")
    for _ in range(2):
        store.answered("a")
        store.call("a")
    assert store.events("a", "limit") == []  # $0.012: 60 %
    store.answered("a")
    store.hook("a", "PostToolUse", tool_name="Read", tool_input={"file_path": "/w/x.py"},
               tool_use_id="toolu_x", tool_response={"file": {"content": "x"}})
    store.answered("a")
    store.call("a")
    warnings = [e for e in store.events("a", "limit") if e["action"] == "warn"]
    assert [(w["name"], round(w["value"], 3), w["limit"]) for w in warnings] == [
        ("budget:store", 0.018, 0.02)]


@pytest.mark.slow
def test_the_warning_is_notified_once_a_day_not_once_a_call(tmp_path: Path) -> None:
    """Real `supervisor notify deliver` processes and a real receiver on 127.0.0.1: the call
    that reaches `warn_at` sends one message; the calls after it, in this session or another,
    send none (the budget warned once today)."""
    store = Store(tmp_path, POLICY.replace("cost_usd_per_day = 0.02",
                                           "cost_usd_per_day = 0.1\nwarn_at = 0.1"))
    with Receiver() as rx:
        write_config(tmp_path / "config", [rx.url], burst_s=0)
        for session in ("a", "b"):
            store.hook(session, "SessionStart", source="startup")
        for _ in range(4):  # $0.006, $0.012 (over 10 %), $0.018, $0.024
            store.answered("a")
            store.call("a")
        store.answered("b")
        store.call("b")
        evs = wait_for(store.root, "a", lambda e: bool(of_type(e, "notification")))
        time.sleep(2.0)  # what a second deliverer would have needed to start and send
        assert len(rx.messages) == 1
    (warning,) = [e for e in evs if e["type"] == "limit" and e["action"] == "warn"]
    assert rx.messages[0]["title"] == "warning: a"
    assert rx.messages[0]["message"] == (
        "daily budget 'store' at 12%: $0.012 of $0.1 today")
    (sent,) = of_type(events(store.root, "a"), "notification")
    assert (sent["escalation_id"], sent["outcome"]) == (f"warn-{warning['seq']}", "sent")
    assert store.events("b", "notification") == store.events("b", "limit") == []


def test_an_approval_raises_the_budget_once(tmp_path: Path) -> None:
    store = Store(tmp_path, POLICY.replace("deadline_s = 1", "deadline_s = 60"))
    store.hook("a", "SessionStart", source="startup")
    for _ in range(2):
        store.answered("a")
        store.call("a")
    store.answered("a")
    answers: list[dict | None] = []
    held = threading.Thread(target=lambda: answers.append(store.call("a")))
    held.start()
    deadline = time.monotonic() + 30
    while not store.events("a", "escalation") and time.monotonic() < deadline:
        time.sleep(0.05)
    (escalation,) = store.events("a", "escalation")
    send_decision(store.root, "a", "approve", escalation_id=escalation["escalation_id"],
                  operator="ana")
    held.join()
    assert "deny" not in json.dumps(answers)  # the held call goes on
    (applied,) = store.events("a", "decision_applied")
    assert "daily budget 'store' raised by 0.01 for today" in applied["outcome"]
    store.answered("a")
    assert store.call("a") is None  # $0.024 of $0.03
    store.answered("a")
    again = threading.Thread(target=store.call, args=("a",))  # $0.03: held again
    again.start()
    deadline = time.monotonic() + 30
    while len(store.events("a", "escalation")) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    second = store.events("a", "escalation")[-1]
    assert second["escalation_id"] != escalation["escalation_id"]
    send_decision(store.root, "a", "skip", escalation_id=second["escalation_id"], operator="ana")
    again.join()


def test_two_calls_at_once_cannot_both_pass_a_budget_with_room_for_one(tmp_path: Path) -> None:
    rules = budget_rules({"store": {"cost_usd_per_day": 0.02}})
    now = 1_800_000_000.0
    Spending(tmp_path, rules, "old", "claude-code", "/w").add(1, 1000, 0.018, now)
    fresh = [Spending(tmp_path, rules, f"new{i}", "claude-code", "/w") for i in range(2)]
    for spending in fresh:  # each answered once for $0.0006: $0.0192 spent, room for one more
        spending.add(1, 10, 0.0006, now)
    passed: list[str] = []
    barrier = threading.Barrier(2)

    def check(spending: Spending) -> None:
        barrier.wait()
        if spending.check(now) is None:
            passed.append(spending.session)

    threads = [threading.Thread(target=check, args=(s,)) for s in fresh]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(passed) == 1, passed
    held = next(s for s in fresh if s.session not in passed)
    breach = held.check(now)
    assert breach is not None and breach.reserved == pytest.approx(0.0006)
    Spending(tmp_path, rules, passed[0], "claude-code", "/w").add(2, 0, 0.0, now)  # paid: $0
    assert held.check(now) is None  # the reservation is gone with the usage counted


def test_the_spend_is_rebuilt_from_the_store_when_its_summary_is_lost(store: Store) -> None:
    store.hook("a", "SessionStart", source="startup")
    for _ in range(2):
        store.answered("a")
        store.call("a")
    (summary,) = (store.root / SPEND_DIR).glob("*.json")
    before = json.loads(summary.read_text())
    summary.unlink()
    store.answered("a")
    store.call("a")  # rebuilt ($0.012), then counted: $0.018
    after = json.loads(summary.read_text())
    assert after["totals"]["all"]["cost_usd"] == pytest.approx(
        before["totals"]["all"]["cost_usd"] + 0.006)
    assert after["sessions"]["a"] > before["sessions"]["a"]


def test_a_bad_budget_table_is_reported_and_holds_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path, "[guard]\ncheckpoints = false\n[budgets.day]\ncost_usd = 1\n")
    store.hook("a", "SessionStart", source="startup")
    store.answered("a")
    assert store.call("a") is None
    errors = store.events("a", "supervisor_error")
    assert errors and "unknown key 'cost_usd'" in errors[-1]["message"]


def test_budget_rules_per_agent_and_project() -> None:
    rules = budget_rules({"claude": {"tokens_per_day": 100, "agent": "claude-code"},
                          "shop": {"cost_usd_per_day": 5, "paths": ["/src/shop"]}})
    spending = Spending(Path("/nonexistent"), rules, "s", "claude-code", "/src/shop/api")
    assert spending.budget_keys() == ["all", "agent:claude-code", "project:shop"]
    other = Spending(Path("/nonexistent"), rules, "s", "codex", "/src/shopping")
    assert other.budget_keys() == ["all", "agent:codex"]
    for bad in ({"x": 1}, {"x": {}}, {"x": {"cost_usd_per_day": -1}},
                {"x": {"cost_usd_per_day": 1, "tokens_per_day": 2}},
                {"x": {"tokens_per_day": 1, "paths": "/src"}}):
        with pytest.raises(ValueError):
            budget_rules(bad)


def test_an_sdk_session_counts_in_the_daily_budgets_of_its_store(store: Store) -> None:
    """What the SDK's `usage()` reports is added to the same day's spend as the hook sessions';
    the SDK call that would cross the budget is held, with the budget named."""
    from supervisor.guard import Session
    from supervisor.guard.settings import GuardSettings

    settings = GuardSettings(checkpoints=False, escalation_deadline_s=1, fallback="skip")
    with Session("sdk-agent", cwd=store.cwd, root=store.root, session_id="sdk",
                 settings=settings, heartbeat_s=None) as sdk:
        sdk.usage(1000, 50, cost_usd=0.003)
        assert sdk.before_call("Read", {"path": "a.py"}).action == "allow"
        store.hook("a", "SessionStart", source="startup")
        store.answered("a")  # a Claude Code session: $0.009 spent, its answer $0.006
        assert store.call("a") is None
        sdk.usage(1000, 50, cost_usd=0.003)  # $0.012, its next $0.003, and $0.006 under way
        held = sdk.before_call("Read", {"path": "b.py"})
    assert held.action != "allow"
    (escalation,) = store.events("sdk", "escalation")
    assert escalation["kind"] == "budget"
    assert escalation["reason"] == (
        "daily budget 'store' of every session of this store reached: $0.012 spent today and "
        "$0.006 expected for calls under way, of $0.02; approving raises it by $0.01, once")
    (summary,) = (store.root / SPEND_DIR).glob("*.json")
    day = json.loads(summary.read_text())
    assert day["totals"]["agent:sdk-agent"]["cost_usd"] == pytest.approx(0.006)


def test_an_sdk_session_with_a_bad_budget_table_says_so_and_goes_on(tmp_path: Path) -> None:
    from supervisor.guard import Session
    from supervisor.guard.settings import GuardSettings

    store = Store(tmp_path, "[budgets.day]\ncost_usd = 1\n")
    with Session("sdk-agent", cwd=store.cwd, root=store.root, session_id="sdk",
                 settings=GuardSettings(checkpoints=False), heartbeat_s=None) as sdk:
        sdk.usage(10, 1, cost_usd=5.0)
        assert sdk.before_call("Read", {"path": "a.py"}).action == "allow"
    (error,) = store.events("sdk", "supervisor_error")
    assert "unknown key 'cost_usd'; no daily budget applies" in error["message"]
