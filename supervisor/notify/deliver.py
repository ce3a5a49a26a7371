"""Deliver the notification of an escalation: exactly once, one message per burst, retried with
back-off, every outcome recorded in the session it is about.

`supervisor notify deliver SESSION ESCALATION` runs detached beside the agent (the guard starts
it when it writes the escalation; `supervisor.guard.announce`), so nothing here can delay a hook:

1. **Claim** `<session>/notify/<escalation>` with O_EXCL: a second deliverer of the same
   escalation (a restarted guard, a duplicate start) finds it taken and leaves.
2. **Queue** it in `<root>/notify/outbox/`, wait `burst_s`, then take `<root>/notify/lock`: the
   first deliverer to get the lock takes everything queued by then, to send in **one** message
   (after letting the lock go: a slow service holds up no later burst); those that come later
   find their entry gone and leave.
3. **Send** to every configured service (a URL the config had to leave out is recorded as
   `failed` with the config's one-line reason, so a typo is seen beside the escalation); a
   failure is recorded as `retrying` and retried after `backoff_s`, doubled each time, up to
   `retries` times; then `failed`. A success is `sent`.
   Each outcome is a `notification` event in every session of the message (`by: "notify"`).

An escalation answered during the burst window is dropped from the message (nobody needs it).
A limit's warning (`warn-<seq>` of its `limit` event, `SessionJournal.limit_warning`) goes the
same way, as an item that awaits no answer.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supervisor.notify.config import NotifyConfig
from supervisor.notify.message import Item, compose, item_of, warning_item
from supervisor.notify.send import Attempt, send_one, service_names
from supervisor.protocol.names import LIMIT_WARNING_KEY, NOTIFICATION
from supervisor.redact import in_text
from supervisor.store.local import LocalStore
from supervisor.store.paths import SESSION_ID_RE, session_files
from supervisor.store.summary import SessionSummary
from supervisor.store.writer import LineWriter

SEP = "@"
"""Between session and escalation ids in an outbox entry's name (in neither id's alphabet)."""

Sender = Callable[[str, str, str], Attempt]


def notify_dir(root: Path) -> Path:
    return root / "notify"


def claim(root: Path, session_id: str, escalation_id: str) -> bool:
    """Take the one right to notify `escalation_id`; False when someone already has it."""
    for value in (session_id, escalation_id):
        if not SESSION_ID_RE.fullmatch(value):
            raise ValueError(f"not a valid id: {value!r}")
    folder = session_files(root, session_id).events.parent / "notify"
    folder.mkdir(mode=0o700, exist_ok=True)
    try:
        fd = os.open(folder / escalation_id, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return False
    os.close(fd)
    outbox = notify_dir(root) / "outbox"
    outbox.mkdir(mode=0o700, parents=True, exist_ok=True)
    entry = os.open(outbox / f"{session_id}{SEP}{escalation_id}",
                    os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(entry)
    return True


def deliver(root: Path, session_id: str, escalation_id: str, config: NotifyConfig, *,
            send: Sender = send_one, sleep: Callable[[float], None] = time.sleep) -> int:
    """Claim, wait for the burst, send; returns how many escalations this process sent about
    (0 when another deliverer had them)."""
    if not (config.urls or config.problems) or not claim(root, session_id, escalation_id):
        return 0
    sleep(config.burst_s)
    lock_fd = os.open(notify_dir(root) / "lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        entries = _take_outbox(root)
    finally:
        os.close(lock_fd)  # sending (and its retries) must not hold up the next burst
    items = [i for i in (_item(root, s, e, config) for s, e in entries) if i is not None]
    if items:
        send_all(root, items, config, send, sleep)
    return len(items)


def _take_outbox(root: Path) -> list[tuple[str, str]]:
    """Every queued (session, escalation), removed from the outbox (held under the lock)."""
    outbox = notify_dir(root) / "outbox"
    taken = []
    for name in sorted(os.listdir(outbox)):
        session_id, _, escalation_id = name.partition(SEP)
        os.unlink(outbox / name)
        if SESSION_ID_RE.fullmatch(session_id) and SESSION_ID_RE.fullmatch(escalation_id):
            taken.append((session_id, escalation_id))
    return taken


def _item(root: Path, session_id: str, escalation_id: str, config: NotifyConfig
          ) -> Item | None:
    store = LocalStore(root)
    if not store.exists(session_id):
        return None
    events = store.read_all(session_id).events
    if escalation_id.startswith(LIMIT_WARNING_KEY):  # a warning: no answer awaited
        return warning_item(session_id, events, escalation_id, config.link)
    summary = SessionSummary(session_id)
    for event in events:
        summary.apply(event)
    if escalation_id not in summary.pending:  # answered (or ended) while the burst gathered
        return None
    return item_of(session_id, events, escalation_id, config.link)


def send_all(root: Path, items: list[Item], config: NotifyConfig, send: Sender = send_one,
             sleep: Callable[[float], None] = time.sleep) -> None:
    """Send one message about `items` to every service, retrying, recording each outcome."""
    title, body = compose(items)
    for problem in config.problems:  # a URL left out of the config: say so where it is seen
        for item in items:
            _record(root, item, {"outcome": "failed", "service": "config.toml", "attempt": 1,
                                 "reason": problem})
    for url, service in zip(config.urls, service_names(config.urls), strict=True):
        attempts = config.retries + 1
        for attempt in range(1, attempts + 1):
            result = send(url, title, body)
            outcome = ("sent" if result.ok else "failed" if attempt == attempts
                       else "retrying")
            reason = None if result.reason is None else in_text(result.reason, url)
            for item in items:
                _record(root, item, {"outcome": outcome, "service": service,
                                     "attempt": attempt, "reason": reason})
            if result.ok:
                break
            if attempt < attempts:
                sleep(config.backoff_s * 2 ** (attempt - 1))


def _record(root: Path, item: Item, fields: dict[str, Any]) -> None:
    path = session_files(root, item.session_id).events
    writer = LineWriter(path)
    try:
        writer.append({"type": NOTIFICATION, "escalation_id": item.escalation_id, **fields,
                       "link": item.link, "by": "notify"})
    finally:
        writer.close()
