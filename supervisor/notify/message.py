"""The words of a notification: one message for a burst of escalations, each line short enough
for a phone's lock screen.

    needs you: run-7 (esc-1)
    loop · Bash “pytest -q tests/test_dates.py” · ×3
    answer by 14:05 UTC, else abort
    https://supervisor.example.org/#s=run-7

The reason is built from the session's own events (the detector that escalated, the call it
escalated on and its main argument, how many times it repeated), not from the agent's text, and
everything quoted from the session goes through `safetext.clean`; the call's argument, the
agent's own words, as a quotation (`safetext.quote`).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from supervisor.protocol.names import LIMIT_WARNING_KEY
from supervisor.safetext import clean, quote

KEY_ARGS = ("command", "file_path", "path", "pattern", "query", "url", "cmd")
"""The argument that names a call best, in order of preference."""


@dataclass(frozen=True, slots=True)
class Item:
    """One escalation to tell the operator about."""

    session_id: str
    escalation_id: str
    reason: str
    """The short reason: detector · call · ×N · what the loop cost."""
    deadline_ts: float | None
    fallback: str
    link: str | None
    unsupervised: bool = False
    """Not an escalation: the agent works while its hooks no longer reach the supervisor
    (`supervisor.store.silence`); it has no deadline and nothing waits for an answer."""
    warning: bool = False
    """Not an escalation: a budget or limit reached its warning threshold; nothing waits."""

    @property
    def awaits_answer(self) -> bool:
        return not (self.unsupervised or self.warning)


def item_of(session_id: str, events: list[Any], escalation_id: str, link_base: str | None
            ) -> Item | None:
    """The item of `escalation_id` from the session's events, or None when it is not there."""
    esc = next((e for e in reversed(events)
                if e.type == "escalation" and e.escalation_id == escalation_id), None)
    if esc is None:
        return None
    extra = esc.__pydantic_extra__ or {}
    call_id = extra.get("call_id")
    detector = next((e.detector for e in reversed(events)
                     if e.type == "detection" and e.seq < esc.seq), None)
    call = next((e for e in reversed(events)
                 if e.type == "tool_call" and call_id and e.call_id == call_id), None)
    parts = [esc.kind if esc.kind and esc.kind != "detection" else (detector or esc.kind or "")]
    if call is not None:
        parts.append(_call(call.tool, call.args))
    if esc.evidence:
        parts.append(f"×{len(esc.evidence)}")
    parts.append(_spent(extra.get("spent")))
    reason = " · ".join(p for p in parts if p) or _text(esc.reason, 120)
    return Item(session_id, escalation_id, reason, esc.deadline_ts, esc.fallback,
                link_for(link_base, session_id))


def silence_item(session_id: str, key: str, reason: str, link_base: str | None) -> Item:
    """The item of an unsupervised agent (`key` names the silence, see `notify.watch`)."""
    return Item(session_id, key, _text(reason, 300), None, "", link_for(link_base, session_id),
                unsupervised=True)


def warning_item(session_id: str, events: list[Any], key: str, link_base: str | None
                 ) -> Item | None:
    """The item of the `limit` warning notified as `key` (`warn-<seq>`), or None when the
    session has no such warning: `budget 'store' at 90 %: $0.018 of $0.02 today`."""
    seq = key.removeprefix(LIMIT_WARNING_KEY)
    event = next((e for e in events if e.type == "limit" and str(e.seq) == seq
                  and e.action == "warn"), None)
    if event is None:
        return None
    name, value, limit = str(event.name), float(event.value), float(event.limit)
    unit = (event.__pydantic_extra__ or {}).get("unit", name)
    budget = name.startswith("budget:")
    shown = (f"${value:.4g} of ${limit:.4g}" if unit == "cost_usd"
             else f"{int(value):,} of {int(limit):,} tokens" if unit == "tokens"
             else f"{value:g} of {limit:g}")
    what = (f"daily budget '{name.removeprefix('budget:')}'" if budget
            else f"this session's {name} limit")
    share = f"{value / limit:.0%}" if limit else "?"
    reason = f"{what} at {share}: {shown}{' today' if budget else ''}"
    return Item(session_id, key, _text(reason, 300), None, "", link_for(link_base, session_id),
                warning=True)


def _spent(spent: object) -> str:
    """What the loop cost since its onset (`escalation.spent`): `$1.84 over 14 calls`."""
    if not isinstance(spent, dict):
        return ""
    cost, calls = spent.get("cost_usd"), spent.get("calls")
    if not isinstance(cost, int | float) or isinstance(cost, bool) or cost <= 0:
        return ""
    money = f"${cost:.2f}" if cost >= 0.01 else f"${cost:.4f}"
    return f"{money} over {calls} calls" if isinstance(calls, int) and calls > 0 else money


def link_for(base: str | None, session_id: str) -> str | None:
    """Where the web view shows `session_id` (`#s=` keeps the id out of server logs)."""
    if not base:
        return None
    return f"{base}/#s={urllib.parse.quote(session_id, safe='')}"


def compose(items: list[Item], now: float | None = None) -> tuple[str, str]:
    """(title, body) of the one message for `items`."""
    if len(items) == 1 and items[0].unsupervised:
        title = f"unsupervised: {_text(items[0].session_id, 60)}"
    elif len(items) == 1 and items[0].warning:
        title = f"warning: {_text(items[0].session_id, 60)}"
    elif len(items) == 1:
        title = f"needs you: {_text(items[0].session_id, 60)} ({items[0].escalation_id})"
    else:
        title = f"{len(items)} agents need you"
    blocks = []
    for item in items:
        lines = [] if len(items) == 1 else [f"{_text(item.session_id, 60)} ({item.escalation_id})"]
        lines.append(_text(item.reason, 600 if item.unsupervised else 160))
        if item.awaits_answer:
            lines.append(_deadline(item, now if now is not None else time.time()))
        if item.link:
            lines.append(item.link)
        blocks.append("\n".join(lines))
    return title, "\n\n".join(blocks)


def _deadline(item: Item, now: float) -> str:
    if item.deadline_ts is None:
        return f"no deadline (it waits for you; fallback {item.fallback})"
    at = time.strftime("%H:%M UTC", time.gmtime(item.deadline_ts))
    left = max(0, int(item.deadline_ts - now))
    return f"answer by {at} (in {left // 60} min {left % 60} s), else {item.fallback}"


def _call(tool: str, args: dict[str, Any]) -> str:
    """The call as `Bash “pytest -q”`: its main argument is the agent's text, so it is quoted
    (`safetext.quote`), never read as the supervisor's words around it."""
    key = next((args[k] for k in KEY_ARGS if isinstance(args.get(k), str)), None)
    if key is None and args:
        key = json.dumps(args, ensure_ascii=False, sort_keys=True)
    name = _text(tool, 40)
    return f"{name} {quote(key, 80)}" if key else name


def _text(value: object, limit: int) -> str:
    return clean("" if value is None else str(value), keep_newlines=False, limit=limit)
