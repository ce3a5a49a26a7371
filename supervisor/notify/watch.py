"""`supervisor notify watch`: notify the agents that work unsupervised.

An agent whose hooks stopped reaching the supervisor writes no escalation (no guard runs for
it), so nothing beside it can notice; a watcher over the root can
(`supervisor.store.silence.unsupervised`). Each silence is notified once: it is named
`unsupervised-<time of the last hook event>` and claimed like an escalation
(`deliver.claim`), so several watchers, or a restarted one, send it once; a hook event that
arrives later ends that silence, and a new one is a new notification.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from supervisor.notify.config import NotifyConfig
from supervisor.notify.deliver import claim, send_all
from supervisor.notify.message import silence_item
from supervisor.store.local import LocalStore
from supervisor.store.silence import SILENT_AFTER_S, unsupervised

Hooks = Callable[[str | None, str | None], str | None]
"""Names a hook command that no longer resolves (`supervisor.store.silence.unsupervised`)."""


def silence_key(last_seen_ts: float) -> str:
    return f"unsupervised-{int(last_seen_ts)}"


def watch_once(root: Path, config: NotifyConfig, *, after_s: float = SILENT_AFTER_S,
               now: float | None = None, hooks: Hooks | None = None) -> list[str]:
    """One pass over the root: notify every new silence; returns the sessions notified."""
    now = time.time() if now is None else now
    store = LocalStore(root)
    notified = []
    for summary in store.summaries():
        reason = unsupervised(summary, now, after_s=after_s, hooks=hooks)
        if reason is None or summary.last_seen_ts is None:
            continue
        key = silence_key(summary.last_seen_ts)
        if not (config.urls or config.problems) or not claim(root, summary.session_id, key):
            continue
        send_all(root, [silence_item(summary.session_id, key, reason, config.link)], config)
        notified.append(summary.session_id)
    return notified


def watch(root: Path, config: NotifyConfig, *, interval_s: float, after_s: float,
          stop: Callable[[], bool] = lambda: False, hooks: Hooks | None = None) -> None:
    """Pass over the root every `interval_s` seconds until `stop()`."""
    while not stop():
        watch_once(root, config, after_s=after_s, hooks=hooks)
        end = time.monotonic() + interval_s
        while time.monotonic() < end and not stop():
            time.sleep(min(1.0, interval_s))
