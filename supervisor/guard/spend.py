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
from typing import Any

from supervisor.store import waits
from supervisor.store.paths import write_private

SPEND_DIR = "spend"
LOCK_FILE = "lock"
WARN_AT = 0.8
UNITS = ("cost_usd", "tokens")


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
                               "raise_by", "warn_at"}
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
        rules.append(BudgetRule(
            str(name), limit, units[0], agent,
            tuple(os.path.normpath(os.path.expanduser(p)) for p in paths),
            _number(spec.get("raise_by", 0.0), f"{where} raise_by"), min(warn_at, 1.0)))
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

    @property
    def reason(self) -> str:
        rule = self.rule
        whose = (f"of project {rule.name}" if rule.paths else
                 f"of agent {rule.agent}" if rule.agent else "of every session of this store")
        pending = (f" and {rule.show(self.reserved)} expected for calls under way"
                   if self.reserved else "")
        return (f"daily budget '{rule.name}' {whose} reached: {rule.show(self.spent)} spent "
                f"today{pending}, of {rule.show(self.limit)}; approving raises it by "
                f"{rule.show(rule.step)}, once")


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
            warned = []
            for rule in self.rules:
                limit = rule.limit + day["raised"].get(rule.name, 0.0)
                spent = day["totals"].get(rule.key, {}).get(rule.unit, 0.0)
                if (self.mine(rule) and limit and spent >= rule.warn_at * limit
                        and rule.name not in day["warned"]):
                    day["warned"].append(rule.name)
                    warned.append((rule, spent, limit))
            return warned

    def check(self, now: float) -> Breach | None:
        """Before a call: the first budget it would cross, or None, in which case the call's
        expected cost (this session's last answer) is reserved until its usage is counted."""
        with self._day(now) as day:
            estimate = day["last"].get(self.session, {"tokens": 0, "cost_usd": 0.0})
            for rule in self.rules:
                if not rule.limit or not self.mine(rule):
                    continue
                limit = rule.limit + day["raised"].get(rule.name, 0.0)
                spent = day["totals"].get(rule.key, {}).get(rule.unit, 0.0)
                reserved = sum(r.get(rule.unit, 0.0) for sid, r in day["reserved"].items()
                               if sid != self.session and rule.key in r.get("keys", ()))
                if spent + reserved >= limit or spent + reserved + estimate[rule.unit] > limit:
                    return Breach(rule, spent, reserved, limit)
            day["reserved"][self.session] = {**estimate, "keys": self.budget_keys()}
            return None

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
        self.dir.mkdir(mode=0o700, exist_ok=True)
        date = time.strftime("%Y-%m-%d", time.localtime(now))
        path = self.dir / f"{date}.json"
        fd = os.open(self.dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            waits.flock(fd, "the store's daily spend")
            day = _load(path)
            if day is None:
                day = rebuild(self.root, date, self.rules)
            before = json.dumps(day, sort_keys=True)
            yield day
            after = json.dumps(day, sort_keys=True)
            if after != before or not path.exists():
                write_private(path, after.encode("utf-8"))
        finally:
            os.close(fd)


def _empty() -> dict[str, Any]:
    return {"totals": {}, "sessions": {}, "last": {}, "reserved": {}, "raised": {},
            "warned": []}


def _load(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None  # unreadable: rebuilt from the store
    if not isinstance(data, dict):
        return None
    day = _empty()
    for key, empty in day.items():
        if isinstance(data.get(key), type(empty)):
            day[key] = data[key]
    return day


def rebuild(root: Path, date: str, rules: list[BudgetRule]) -> dict[str, Any]:
    """The day's summary from the store: every session's `usage` events of `date` (local)."""
    day = _empty()
    sessions = Path(root) / "sessions"
    try:
        entries = list(os.scandir(sessions))
    except OSError:
        return day
    for entry in entries:
        agent, cwd, last, amounts = _usages_of(Path(entry.path) / "events.jsonl", date)
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


def _usages_of(events: Path, date: str) -> tuple[str | None, str | None, int,
                                               list[tuple[int, float]]]:
    """(the session's agent, its cwd, the last `seq` counted, (tokens, cost) of each `usage`
    of `date`) from its event log."""
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
                    or time.strftime("%Y-%m-%d", time.localtime(ts)) != date):
                continue
            tokens = _count(event.get("input_tokens")) + _count(event.get("output_tokens"))
            cost = event.get("cost_usd")
            amounts.append((tokens, float(cost) if isinstance(cost, int | float)
                            and not isinstance(cost, bool) and cost > 0 else 0.0))
            last = max(last, seq) if isinstance(seq, int) else last
    return agent, cwd, last, amounts


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
