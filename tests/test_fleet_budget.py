"""A daily budget shared by a Redis fleet (`fleet = true`): two hosts (two store roots, each with
its relay and its host name) against a private redis-server. The shares Redis grants never add
up to more than the budget, so two hosts cannot both pass a budget with room for one; the call
that crosses the fleet's budget is held on whichever host makes it; an approval on one host
raises the budget for the fleet."""

import json
import threading
from pathlib import Path

import pytest

from supervisor.guard.spend import Spending, budget_rules
from supervisor.store.redis.budget_sync import BudgetSync
from supervisor.store.spend_file import SPEND_DIR, day_of
from tests.conftest import run_cli
from tests.redis_helpers import RedisServer, RelayThread, wait_for
from tests.test_budgets import Store

pytestmark = pytest.mark.slow

NOW = 1_800_000_000.0
RULES = budget_rules({"team": {"cost_usd_per_day": 0.02, "raise_by": 0.01, "fleet": True}})
POLICY = """
[guard]
checkpoints = false
escalation_deadline_s = 1
fallback = "skip"

[budgets.team]
cost_usd_per_day = 0.05
raise_by = 0.01
fleet = true
"""
ANSWER = 0.006
"""What each answer of `Store.answered` costs (Claude Sonnet 4.5's prices)."""


def day_file(root: Path, now: float) -> dict:
    return json.loads((root / SPEND_DIR / f"{day_of(now)}.json").read_text())


@pytest.mark.parametrize("first", [0, 1])
def test_two_hosts_at_once_cannot_both_pass_a_fleet_budget_with_room_for_one(
        tmp_path: Path, redis_server: RedisServer, first: int) -> None:
    roots = [tmp_path / "h1", tmp_path / "h2"]
    for root in roots:
        root.mkdir()
    hosts = [Spending(root, RULES, "s", "claude-code", "/w") for root in roots]
    for spending in hosts:  # $0.012 spent by the fleet; each next call $0.006: room for one
        spending.add(1, 10, ANSWER, NOW)
    with redis_server.admin() as client:
        syncs = [BudgetSync(root, client, "sv", f"h{i + 1}") for i, root in enumerate(roots)]
        syncs[first].round(NOW)  # the host whose relay asks first is granted the room
        syncs[1 - first].round(NOW)
        passed = [spending.check(NOW) is None for spending in hosts]
        assert passed == [first == 0, first == 1]
        held = hosts[1 - first].check(NOW)
        assert held is not None and held.fleet
        assert held.reason == (
            "daily budget 'team' of every session of the fleet reached: $0.012 spent today on "
            "all hosts and $0.014 set aside for calls under way and the next calls of other "
            "hosts, of $0.02; approving raises it by $0.01, once")

        # an approval on the held host raises the budget for the fleet, once
        hosts[1 - first].raise_once("team", NOW)
        for sync in syncs + syncs:  # each host learns the other's raise at its next round
            sync.round(NOW)
        for root in roots:
            assert day_file(root, NOW)["grants"]["team"]["cap"] == pytest.approx(0.03)
        fields = client.hgetall(f"sv:budget:{day_of(NOW)}:team")
    assert float(fields[f"raised:h{2 - first}".encode()]) == pytest.approx(0.01)
    assert sum(float(v) for k, v in fields.items() if k.startswith(b"grant:")) <= 0.03 + 1e-12


def test_relays_asking_at_the_same_moment_grant_the_room_once(
        tmp_path: Path, redis_server: RedisServer) -> None:
    roots = [tmp_path / "h1", tmp_path / "h2"]
    for root in roots:
        root.mkdir()
    hosts = [Spending(root, RULES, "s", "claude-code", "/w") for root in roots]
    for spending in hosts:  # $0.008 spent; each next call $0.004 and room for one more... twice
        spending.add(1, 10, 0.004, NOW)  # (each host's share asks for 3 calls ahead: $0.012)
    barrier = threading.Barrier(2)
    clients = [redis_server.admin() for _ in roots]

    def ask(i: int) -> None:
        barrier.wait()
        BudgetSync(roots[i], clients[i], "sv", f"h{i}").round(NOW)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for client in clients:
        client.close()
    grants = sorted(day_file(root, NOW)["grants"]["team"]["grant"] for root in roots)
    assert grants == [pytest.approx(0.004), pytest.approx(0.016)]  # never more than the budget
    assert sorted(spending.check(NOW) is None for spending in hosts) == [False, True]


def test_without_a_relay_a_fleet_budget_counts_this_host_alone(tmp_path: Path) -> None:
    """No relay runs for the root: nothing can bring a share, so the call is not kept waiting
    and the budget holds over this host's own spend; what a relay would ask is noted."""
    spending = Spending(tmp_path, RULES, "s", "claude-code", "/w")
    spending.add(1, 10, 0.009, NOW)
    assert spending.check(NOW) is None  # $0.009 + $0.009 of $0.02
    spending.add(2, 10, 0.009, NOW)
    breach = spending.check(NOW)
    assert breach is not None and not breach.fleet and breach.spent == pytest.approx(0.018)
    assert day_file(tmp_path, NOW)["fleet"] == {
        "team": {"key": "all", "unit": "cost_usd", "limit": 0.02}}


@pytest.mark.parametrize("spender", [0, 1])
def test_the_call_that_crosses_the_fleet_budget_is_held_on_whichever_host_makes_it(
        tmp_path: Path, redis_server: RedisServer, spender: int) -> None:
    hosts = []
    for name in ("h1", "h2"):
        (tmp_path / name).mkdir()
        hosts.append(Store(tmp_path / name, POLICY))
    relays = [RelayThread(h.root, redis_server.url(), f"h{i + 1}") for i, h in enumerate(hosts)]
    try:
        spending, other = hosts[spender], hosts[1 - spender]
        spending.hook("a", "SessionStart", source="startup")
        for calls in range(1, 8):  # $0.042 spent on one host
            spending.answered("a")
            assert spending.call("a") is None
            wait_for(lambda c=calls: _shipped(redis_server, f"h{spender + 1}") == pytest.approx(
                c * ANSWER) and _share(spending) >= min((c + 2) * ANSWER, 0.05) - 1e-9,
                30, "the relay's share")
        other.hook("b", "SessionStart", source="startup")
        other.answered("b")  # $0.048 spent by the fleet: b's next $0.006 would cross $0.05
        refused = other.call("b")
        assert refused is not None
        assert refused["hookSpecificOutput"]["permissionDecision"] == "deny"
        (escalation,) = other.events("b", "escalation")
        assert escalation["kind"] == "budget"
        assert escalation["reason"] == (
            "daily budget 'team' of every session of the fleet reached: $0.048 spent today on "
            "all hosts and $0.008 set aside for calls under way and the next calls of other "
            "hosts, of $0.05; approving raises it by $0.01, once")
        spending.answered("a")  # and on the host that spent: $0.054 would cross it too
        assert spending.call("a") is not None
        (escalation,) = spending.events("a", "escalation")
        assert escalation["kind"] == "budget" and "of the fleet reached: $0.054" in (
            escalation["reason"])
        status = run_cli("relay", "--status", "--root", str(other.root))
        assert "  fleet budget team: $0.006 spent here, share $0.006 of $0.05 (other hosts " \
            "spent $0.0" in status.stdout, status.stdout  # $0.042 or $0.048, as last shipped
    finally:
        for relay in relays:
            relay.stop()


def _share(store: Store) -> float:
    try:
        grants = json.loads(next((store.root / SPEND_DIR).glob("*.json")).read_text())["grants"]
    except (StopIteration, OSError, ValueError):
        return 0.0
    return grants.get("team", {}).get("grant", 0.0)


def _shipped(server: RedisServer, host: str) -> float:
    """What the fleet knows `host` spent today."""
    with server.admin() as admin:
        for key in admin.keys("sv:budget:*:team"):
            return float(admin.hget(key, f"spent:{host}") or 0)
    return 0.0
