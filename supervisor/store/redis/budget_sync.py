"""Fleet budgets: each host's relay gets this host's share of every budget the fleet shares.

A `[budgets.<name>]` table with `fleet = true` (docs/policy.md, "Budgets") caps what every host
relaying to one Redis store spends in a day. The guard never talks to the network, so it cannot
ask Redis before each call; instead the relay, about once a second (`BudgetSync.round`, in its
worker thread), asks for this host's **share** and writes it into the day's spend file
(`store/spend_file.py`, key `grants`), where the guard's check reads it (`guard/spend.py`).

Per fleet budget and day, Redis keeps one hash, `sv:budget:<YYYY-MM-DD>:<name>`, with per host:
`spent:<host>` (what its sessions spent), `raised:<host>` (what its operators' approvals added)
and `grant:<host>` (its share). The `GRANT` script, atomic like every script, sets this host's
share to what it wants (its spend, plus the expected cost of its recent sessions' next calls,
`AHEAD_CALLS` each, at least `SLACK` of the budget), but no more than the budget (plus every
host's raises) less what the other hosts hold (each its share, or its spend where that went past
its share), and never below what this host already spent or reserved. A share is room no other
host can be granted, so two agents on two hosts cannot both pass a budget with room for one: the
room is in one host's share only. What the fleet spends goes past the budget only by what the
guard could not know before a call (an answer that cost more than the last one, calls made
before a host had a share). A host whose relay stops keeps its last share (its own spend never
passes it, with or without the network); its unspent part stays out of the other hosts' reach
for that day.

The spend file's lock is never held while Redis is asked: a round reads what it needs under the
lock, asks, and writes the shares under the lock again, so a hook never waits on the network.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supervisor.store.spend_file import SPEND_DIR, day_of, load, locked_day
from supervisor.store.units import human, unit_of

SLACK = 0.01
"""The least share a host asks for beyond its spend, as a part of the budget: room for a
session's first call, whose cost nothing estimates yet."""
AHEAD_CALLS = 3
"""How many next calls of each recent session a share sets aside: the share is renewed about
once a second, and a session's answer is counted and its next call checked in one hook call, so
one call ahead would leave no room for the call after it."""
ACTIVE_S = 3600.0
"""A session that made no call for this long no longer has its next call set aside."""
KEEP_S = 3 * 86400
"""How long a day's budget hash is kept in Redis."""
GRANT = r"""#!lua
-- KEYS: 1 the budget's hash of the day
-- ARGV: 1 host, 2 limit, 3 spent, 4 used (spent + reserved), 5 wanted, 6 raised, 7 ttl
local me = ARGV[1]
redis.call('HSET', KEYS[1], 'spent:' .. me, ARGV[3], 'raised:' .. me, ARGV[6])
local fields = redis.call('HGETALL', KEYS[1])
local raised, grants, spent = 0, {}, {}
for i = 1, #fields, 2 do
  local kind, who = string.match(fields[i], '^(%a+):(.*)$')
  local value = tonumber(fields[i + 1]) or 0
  if kind == 'raised' then
    raised = raised + value
  elseif who ~= me and kind == 'grant' then
    grants[who] = value
  elseif who ~= me and kind == 'spent' then
    spent[who] = value
  end
end
-- what the other hosts hold: their shares, or what they spent beyond them
local others_spent, others_claim = 0, 0
for who, value in pairs(spent) do
  others_spent = others_spent + value
  others_claim = others_claim + math.max(value, grants[who] or 0)
end
for who, value in pairs(grants) do
  if spent[who] == nil then others_claim = others_claim + value end
end
local cap = tonumber(ARGV[2]) + raised
local grant = math.max(tonumber(ARGV[4]), math.min(tonumber(ARGV[5]), cap - others_claim))
redis.call('HSET', KEYS[1], 'grant:' .. me, string.format('%.17g', grant))
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7]))
return {string.format('%.17g', grant), string.format('%.17g', cap),
        string.format('%.17g', others_spent), string.format('%.17g', others_claim)}
"""


@dataclass(frozen=True, slots=True)
class Ask:
    """What this host asks of one fleet budget in one round."""

    name: str
    key: str
    unit: str
    limit: float
    spent: float
    used: float
    """Spent plus the reservations of the calls under way: the least share this host needs."""
    wanted: float
    raised: float


class BudgetSync:
    """Gets one root's shares of the fleet's budgets (see the module docstring)."""

    def __init__(self, root: Path, client: Any, prefix: str, host: str) -> None:
        self.root = Path(root)
        self.prefix = prefix
        self.host = host
        self._grant = client.register_script(GRANT)

    def key(self, date: str, name: str) -> str:
        return f"{self.prefix}:budget:{date}:{name}"

    def round(self, now: float | None = None) -> int:
        """One exchange; how many budgets were shared. Raises `redis.RedisError`."""
        now = time.time() if now is None else now
        date = day_of(now)
        with locked_day(self.root, date, None) as day:
            asks = asks_of(day, now) if day is not None else []
        if not asks:
            return 0
        shares = {}
        for ask in asks:
            grant, cap, others_spent, others_claim = (float(v) for v in self._grant(
                keys=[self.key(date, ask.name)],
                args=[self.host, repr(ask.limit), repr(ask.spent), repr(ask.used),
                      repr(ask.wanted), repr(ask.raised), KEEP_S]))
            shares[ask.name] = {
                "key": ask.key, "unit": ask.unit, "grant": grant, "cap": cap,
                "raised": ask.raised, "others_spent": others_spent,
                "others_held": max(others_claim - others_spent, 0.0)}
        with locked_day(self.root, date, None) as day:
            if day is not None:
                day["grants"] = shares
        return len(shares)


def shares_today(root: Path, now: float) -> list[str]:
    """This host's shares of the fleet's budgets today, one line each, for `relay --status`:
    `team: $0.012 spent here, share $0.02 of $0.05 (other hosts spent $0.006)`; names are
    the policy's (the caller cleans them for the terminal)."""
    day = load(Path(root) / SPEND_DIR / f"{day_of(now)}.json")
    if day is None:
        return []
    lines = []
    for name, share in sorted(day["grants"].items()):
        if not isinstance(share, dict):
            continue
        unit = str(share.get("unit"))
        tail = " tokens" if unit == "tokens" else ""

        def show(value: object, unit: str = unit, tail: str = tail) -> str:
            return human(_amount(value), unit_of(unit)) + tail

        spent = _field(day["totals"].get(share.get("key")), unit)
        lines.append(f"{name}: {show(spent)} spent here, share {show(share.get('grant'))} of "
                     f"{show(share.get('cap'))} (other hosts spent "
                     f"{show(share.get('others_spent'))})")
    return lines


def asks_of(day: dict[str, Any], now: float) -> list[Ask]:
    """What this host asks of each fleet budget the guard wrote into the day's file."""
    asks = []
    for name, spec in day["fleet"].items():
        if not isinstance(spec, dict):
            continue
        key, unit, limit = spec.get("key"), spec.get("unit"), _amount(spec.get("limit"))
        if not isinstance(key, str) or not isinstance(unit, str) or unit not in (
                "cost_usd", "tokens") or not limit:
            continue
        spent = _amount(_field(day["totals"].get(key), unit))
        reserved = sum(_amount(r.get(unit)) for r in day["reserved"].values()
                       if isinstance(r, dict) and key in (r.get("keys") or ()))
        ahead = sum(_amount(_field(day["last"].get(sid), unit))
                    for sid, keys in day["keys"].items()
                    if isinstance(keys, list) and key in keys
                    and now - _amount(day["seen"].get(sid)) <= ACTIVE_S)
        asks.append(Ask(name, key, unit, limit, spent, spent + reserved,
                        spent + max(reserved + AHEAD_CALLS * ahead, SLACK * limit),
                        _amount(day["raised"].get(name))))
    return asks


def _field(entry: object, name: str) -> object:
    return entry.get(name) if isinstance(entry, dict) else None


def _amount(value: object) -> float:
    """A spend file's number, or 0 for anything else (the file is ours, but not trusted)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return max(float(value), 0.0)
