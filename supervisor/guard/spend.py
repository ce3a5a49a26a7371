"""Budgets over many sessions: what a store's agents spent today, checked before each call.

The policy file's `[budgets.<name>]` tables (docs/policy.md, "Budgets") each cap the tokens or
the cost of one day (local time) over all sessions of the store root, or only those of one
agent (`agent = "claude-code"`) or of one operator-named project (`paths = [...]`: sessions
whose working directory is under one of them). A session's own `tokens` and `cost_usd` limits
stay the engine's; these are the guard's.

The spend lives in a per-day summary file, `<root>/spend/<YYYY-MM-DD>.json`, so a check costs
one small read, never a scan of the events: the totals per budget key (`all`, `agent:<name>`,
`project:<name>`), each session's last counted `seq` (a usage is counted once), each session's
last answer (its estimate of the next one), the reservations of calls let through and not yet
paid for, the raises operators approved and the warnings sent. When the file is missing (a
budget added today, the file deleted) it is rebuilt from the store: every session's `usage`
events of that day, read once.

**Two agents at once.** The check and the reservation are one step under an exclusive lock on
`<root>/spend/lock`: a call passes only if today's spend, plus what the calls already let
through are expected to cost (the other sessions' reservations), plus what this session's last
answer cost, stays within the budget; passing reserves that amount until the session's next
usage is counted. So two calls made at the same moment against a budget with room for one: the
first reserves the room, the second sees it taken and is held.

**A fleet's budget** (`fleet = true`) is shared by every host relaying to one Redis store. The
guard never talks to the network: each host's relay (`store/redis/budget_sync.py`) asks Redis,
with one atomic script, for this host's **share** of the budget (what it spent, plus what its
sessions' next calls are expected to cost), and Redis grants it only out of what the other hosts
have not been granted; the share lands in the day file (`grants`). The check then holds a call
that would take this host past its share. The shares never add up to more than the budget, so
two agents on two hosts cannot both pass a budget with room for one: the room was granted to one
host only. Until a relay has brought a share today (no relay, or none connected to its store),
a fleet budget is checked against this host's spend alone; when Redis cannot be reached the
last share holds, so the cap holds with the network down.

The guard keeps in the day file what the relay needs for that: the fleet budgets of the policy
(`fleet`: name -> key, unit, limit), when each session last made a call (`seen`) and the budget
keys it counts under (`keys`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from supervisor.store import waits
from supervisor.store.relay_lock import any_relay_connected
from supervisor.store.spend_file import SPEND_DIR, day_of, empty, load, locked_day

WARN_AT = 0.8
UNITS = ("cost_usd", "tokens")
SHARE_WAIT_S = 3.0
"""How long the first call of a day waits for the relay to bring this host's share of a fleet
budget (the relay asks about once a second)."""
SHARE_POLL_S = 0.05


@dataclass(frozen=True, slots=True)
class BudgetRule:
    """One `[budgets.<name>]` table."""

    name: str
    limit: float
    unit: str
    """`cost_usd` or `tokens` (input + output, as the session limit counts them)."""
    agent: str | None = None
    paths: tuple[str, ...] = ()
    raise_by: float = 0.0
    """What an operator's approval adds to the limit, once (0: a fifth of the limit)."""
    warn_at: float = WARN_AT
    fleet: bool = False
    """Shared by every host of the Redis fleet (through the relays), not this root alone."""

    @property
    def key(self) -> str:
        if self.paths:
            return f"project:{self.name}"
        return f"agent:{self.agent}" if self.agent else "all"

    @property
    def step(self) -> float:
        return self.raise_by or self.limit / 5

    def show(self, value: float) -> str:
        if self.unit == "cost_usd":
            return "$" + f"{value:.4f}".rstrip("0").rstrip(".")
        return f"{value:,.0f} tokens"


def budget_rules(table: object) -> list[BudgetRule]:
    """The rules of the policy's `[budgets]` table; raises ValueError naming the bad key."""
    if table is None:
        return []
    if not isinstance(table, dict):
        raise ValueError("[budgets] must be a table of [budgets.<name>] tables")
    rules = []
    for name, spec in table.items():
        where = f"[budgets.{name}]"
        if not isinstance(spec, dict):
            raise ValueError(f"{where} must be a table")
        unknown = set(spec) - {"cost_usd_per_day", "tokens_per_day", "agent", "paths",
                               "raise_by", "warn_at", "fleet"}
        if unknown:
            raise ValueError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        units = [u for u in UNITS if f"{u}_per_day" in spec]
        if len(units) != 1:
            raise ValueError(f"{where} needs one of cost_usd_per_day, tokens_per_day")
        limit = _number(spec[f"{units[0]}_per_day"], f"{where} {units[0]}_per_day")
        agent = spec.get("agent")
        paths = spec.get("paths", [])
        if agent is not None and not isinstance(agent, str):
            raise ValueError(f"{where} agent must be a string")
        if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
            raise ValueError(f"{where} paths must be a list of directories")
        warn_at = _number(spec.get("warn_at", WARN_AT), f"{where} warn_at")
        fleet = spec.get("fleet", False)
        if not isinstance(fleet, bool):
            raise ValueError(f"{where} fleet must be true or false")
        rules.append(BudgetRule(
            str(name), limit, units[0], agent,
            tuple(os.path.normpath(os.path.expanduser(p)) for p in paths),
            _number(spec.get("raise_by", 0.0), f"{where} raise_by"), min(warn_at, 1.0),
            fleet))
    return rules


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value < 0:
        raise ValueError(f"{where} must be a number, at least 0")
    return float(value)


@dataclass(frozen=True, slots=True)
class Breach:
    """A budget the next call would cross."""

    rule: BudgetRule
    spent: float
    reserved: float
    limit: float
    fleet: bool = False
    """Counted over the fleet (a share granted by the relay), not this root alone."""

    @property
    def reason(self) -> str:
        rule = self.rule
        where = "the fleet" if self.fleet else "this store"
        whose = (f"of project {rule.name}" if rule.paths else
                 f"of agent {rule.agent}" if rule.agent else f"of every session of {where}")
        if self.fleet and (rule.paths or rule.agent):
            whose += " across the fleet"
        hosts = " on all hosts" if self.fleet else ""
        pending = ("set aside for calls under way and the next calls of other hosts"
                   if self.fleet else "expected for calls under way")
        pending = f" and {rule.show(self.reserved)} {pending}" if self.reserved else ""
        return (f"daily budget '{rule.name}' {whose} reached: {rule.show(self.spent)} spent "
                f"today{hosts}{pending}, of {rule.show(self.limit)}; approving raises it by "
                f"{rule.show(rule.step)}, once")


_NO_SHARE: Breach = cast(Breach, object())
"""`_check`'s answer when a fleet budget has no share yet and a relay could bring one."""


class Spending:
    """One session's view of the store's daily spend (`<root>/spend/`)."""

    def __init__(self, root: Path, rules: list[BudgetRule], session: str, agent: str,
                 cwd: str | None) -> None:
        self.root = Path(root)
        self.rules = rules
        self.session = session
        self.agent = agent
        self.cwd = os.path.normpath(cwd) if cwd else None
        self.dir = self.root / SPEND_DIR

    def budget_keys(self) -> list[str]:
        """The budget keys this session's spending counts under."""
        keys = ["all", f"agent:{self.agent}"]
        for rule in self.rules:
            if rule.paths and self.cwd and any(
                    self.cwd == p or self.cwd.startswith(p + os.sep) for p in rule.paths):
                keys.append(rule.key)
        return keys

    def mine(self, rule: BudgetRule) -> bool:
        return rule.key in self.budget_keys()

    def add(self, seq: int, tokens: int, cost: float | None,
            now: float) -> list[tuple[BudgetRule, float, float]]:
        """Count one `usage` event of this session (once: by its `seq`); drop its reservation.
        Returns (budget, spent, limit) for each budget of this session that crossed its
        warning threshold with this usage (once a day)."""
        with self._day(now) as day:
            counted = day["sessions"].get(self.session, 0)
            if seq <= counted:
                return []
            day["sessions"][self.session] = seq
            amount = {"tokens": tokens, "cost_usd": cost or 0.0}
            for key in self.budget_keys():
                totals = day["totals"].setdefault(key, {"tokens": 0, "cost_usd": 0.0})
                for unit in UNITS:
                    totals[unit] += amount[unit]
            day["last"][self.session] = amount
            day["reserved"].pop(self.session, None)
            self._note(day, now)
            warned = []
            for rule in self.rules:
                limit = rule.limit + day["raised"].get(rule.name, 0.0)
                spent = day["totals"].get(rule.key, {}).get(rule.unit, 0.0)
                share = _share(day, rule)
                if share is not None:  # the fleet's spend, as the relay last saw it
                    spent += share["others_spent"]
                    limit = share["cap"] + day["raised"].get(rule.name, 0.0) - share["raised"]
                if (self.mine(rule) and limit and spent >= rule.warn_at * limit
                        and rule.name not in day["warned"]):
                    day["warned"].append(rule.name)
                    warned.append((rule, spent, limit))
            return warned

    def check(self, now: float) -> Breach | None:
        """Before a call: the first budget it would cross, or None, in which case the call's
        expected cost (this session's last answer) is reserved until its usage is counted.

        A fleet budget this host has no share of yet (the first call of its day) while a relay
        of this root runs, connected to its store: the relay is given up to `SHARE_WAIT_S`
        (and half of what is left of a hook call's time) to bring the share, so the first calls
        of a day do not pass on this host's spend alone."""
        breach = self._check(now, wait_for_share=True)
        if breach is not _NO_SHARE:
            return breach
        left = waits.remaining()  # a hook call's time: half of what is left at most
        deadline = time.monotonic() + min(SHARE_WAIT_S, left / 2 if left is not None else
                                          SHARE_WAIT_S)
        path = self.dir / f"{day_of(now)}.json"
        wanted = {r.name for r in self.rules if r.fleet and self.mine(r)}
        while time.monotonic() < deadline:
            day = load(path)
            if day is not None and wanted <= set(day["grants"]):
                break
            time.sleep(SHARE_POLL_S)
        return self._check(now, wait_for_share=False)

    def _check(self, now: float, wait_for_share: bool) -> Breach | None:
        with self._day(now) as day:
            estimate = day["last"].get(self.session, {"tokens": 0, "cost_usd": 0.0})
            keys = self._note(day, now)
            if wait_for_share and any(
                    r.fleet and r.limit and self.mine(r) and _share(day, r) is None
                    for r in self.rules) and any_relay_connected(self.root):
                return _NO_SHARE
            for rule in self.rules:
                if not rule.limit or not self.mine(rule):
                    continue
                raised = day["raised"].get(rule.name, 0.0)
                limit = rule.limit + raised
                spent = day["totals"].get(rule.key, {}).get(rule.unit, 0.0)
                reserved = sum(r.get(rule.unit, 0.0) for sid, r in day["reserved"].items()
                               if sid != self.session and rule.key in r.get("keys", ()))
                share = _share(day, rule)
                if share is not None:  # this host may spend its share of the fleet's budget
                    mine = share["grant"] + raised - share["raised"]
                    if spent + reserved >= mine or spent + reserved + estimate[rule.unit] > mine:
                        return Breach(rule, spent + share["others_spent"],
                                      reserved + share["others_held"],
                                      share["cap"] + raised - share["raised"], fleet=True)
                elif spent + reserved >= limit or spent + reserved + estimate[rule.unit] > limit:
                    return Breach(rule, spent, reserved, limit)
            day["reserved"][self.session] = {**estimate, "keys": keys}
            return None

    def _note(self, day: dict[str, Any], now: float) -> list[str]:
        """What the relay needs to ask for this host's shares of fleet budgets: the policy's
        fleet budgets, when this session was last active, its budget keys (returned)."""
        keys = self.budget_keys()
        day["seen"][self.session] = round(now)
        day["keys"][self.session] = keys
        day["fleet"] = {r.name: {"key": r.key, "unit": r.unit, "limit": r.limit}
                        for r in self.rules if r.fleet}
        return keys

    def raise_once(self, name: str, now: float) -> float:
        """An operator approved going past budget `name`: raise it today by its step."""
        rule = next((r for r in self.rules if r.name == name), None)
        if rule is None:
            return 0.0
        with self._day(now) as day:
            day["raised"][name] = day["raised"].get(name, 0.0) + rule.step
        return rule.step

    def today(self, now: float) -> dict[str, Any]:
        """The day's summary as it is (for `stats` and the dashboard)."""
        with self._day(now) as day:
            return json.loads(json.dumps(day))

    @contextlib.contextmanager
    def _day(self, now: float) -> Iterator[dict[str, Any]]:
        date = day_of(now)
        with locked_day(self.root, date, lambda: rebuild(self.root, date, self.rules)) as day:
            assert day is not None  # rebuilt when missing
            yield day


def _share(day: dict[str, Any], rule: BudgetRule) -> dict[str, float] | None:
    """This host's share of fleet budget `rule` today, as the relay last wrote it: `grant` (what
    this host may spend), `cap` (the budget with every host's raises), `raised` (this host's
    raises the relay had shipped), `others_spent`, `others_held` (the other hosts' shares not
    yet spent). None for a budget of this root, or before the relay brought a share."""
    if not rule.fleet:
        return None
    share = day["grants"].get(rule.name)
    fields = ("grant", "cap", "raised", "others_spent", "others_held")
    if (not isinstance(share, dict) or share.get("unit") != rule.unit
            or share.get("key") != rule.key
            or not all(isinstance(share.get(f), int | float) for f in fields)):
        return None
    return {f: float(share[f]) for f in fields}


def rebuild(root: Path, date: str, rules: list[BudgetRule]) -> dict[str, Any]:
    """The day's summary from the store: every session's `usage` events of `date` (local)
    that the guard wrote (in a session whose guard marks its lines, `store.voice`: a usage
    line the agent appended with a far `seq` made it the session's last counted, and no real
    usage of the day counted after it)."""
    from supervisor.store.voice import root_key

    day = empty()
    secret = root_key(Path(root))
    sessions = Path(root) / "sessions"
    try:
        entries = list(os.scandir(sessions))
    except OSError:
        return day
    for entry in entries:
        agent, cwd, last, amounts = _usages_of(Path(entry.path) / "events.jsonl", date,
                                               secret, entry.name)
        if not amounts:
            continue
        spending = Spending(root, rules, entry.name, (agent or "").split(":")[0], cwd)
        for key in spending.budget_keys():
            totals = day["totals"].setdefault(key, {"tokens": 0, "cost_usd": 0.0})
            totals["tokens"] += sum(t for t, _ in amounts)
            totals["cost_usd"] += sum(c for _, c in amounts)
        day["sessions"][entry.name] = last
        day["last"][entry.name] = {"tokens": amounts[-1][0], "cost_usd": amounts[-1][1]}
    return day


def _usages_of(events: Path, date: str, key: bytes | None = None, session: str = ""
               ) -> tuple[str | None, str | None, int, list[tuple[int, float]]]:
    """(the session's agent, its cwd, the last `seq` counted, (tokens, cost) of each `usage`
    of `date`) from its event log; with the root's `key`, only the usage lines of the guard
    of `session` (`Voucher.vouches`)."""
    from supervisor.store.voice import Voucher

    check = Voucher(key, session, events) if key is not None else None
    agent, cwd, last = None, None, 0
    amounts: list[tuple[int, float]] = []
    try:
        handle = open(events, "rb")  # noqa: SIM115 - closed by the with below
    except OSError:
        return agent, cwd, last, amounts
    with handle:
        for line in handle:
            if b'"usage"' not in line and b'"session_start"' not in line:
                continue
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            if event.get("type") == "session_start":
                agent = event.get("agent") if isinstance(event.get("agent"), str) else None
                cwd = event.get("cwd") if isinstance(event.get("cwd"), str) else None
                continue
            ts, seq = event.get("ts"), event.get("seq")
            if (event.get("type") != "usage" or not isinstance(ts, int | float)
                    or day_of(ts) != date):
                continue
            if check is not None and not check.vouches(line.rstrip(b"\n"), event):
                continue
            tokens = _count(event.get("input_tokens")) + _count(event.get("output_tokens"))
            cost = event.get("cost_usd")
            amounts.append((tokens, float(cost) if isinstance(cost, int | float)
                            and not isinstance(cost, bool) and cost > 0 else 0.0))
            last = max(last, seq) if isinstance(seq, int) else last
    return agent, cwd, last, amounts


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
